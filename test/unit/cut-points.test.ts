import { LOCAL_CUT_POINTS } from '../../src/local/cut-points.js';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allHelp, HELP } from '../../src/cli/main.js';
import { CUT_POINT_NAMES, CUT_POINTS } from '../../src/cut-points.js';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { OBJECT_CUT_POINTS } from '../../src/objects/cut-points.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { CURSOR_CUT_POINTS } from '../../src/stream/cursor/cut-points.js';
import { PUBLICATION_CUT_POINTS } from '../../src/domain/publication/cut-points.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { RECOVERY_CUT_POINTS } from '../../src/recovery/cut-points.js';
import { FLOWS } from '../../src/registry/index.js';

/**
 * Every cut point a document names is one the code runs: the ASL comments, the docs and
 * the CLI help may only name entries of the registry (src/cut-points.ts), which is what
 * CUTPOINT_FAULTS accepts. A name in a subsystem's dotted form that is not a diagnostic
 * code (codes are snake_case) and not a file name counts as a cut point reference.
 */
const REFERENCE = /(?<![\w./-])(?:generation|stream|delivery|publication|quality|cli|objects)(?:\.[a-z0-9_*-]+)+/g;

function references(text: string): string[] {
  // The manifest key `quality.capsule: v2` is not a cut point, nor the usage diagnostic `cli.usage`.
  return [...new Set(text.replace(/\bquality\.capsule: /g, '').match(REFERENCE) ?? [])].filter(
    (t) => !t.includes('_') && t !== 'cli.usage' && !/\.(ts|js|json|ya?ml|md|svg)$/.test(t),
  );
}

/** The Comments of every ASL file (or of one flow's). */
function aslComments(flow?: string): string {
  const comments: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'Comment' && typeof inner === 'string') comments.push(inner);
        else walk(inner);
      }
    }
  };
  for (const file of readdirSync(`${REPO_ROOT}statemachines`).filter(
    (f) => f.endsWith('.asl.json') && (flow === undefined || f === `${flow}.asl.json`),
  ))
    walk(JSON.parse(readFileSync(`${REPO_ROOT}statemachines/${file}`, 'utf8')));
  return comments.join('\n');
}

describe('cut point registry', () => {
  it('holds every subsystem registry, each name once, each with where it is hit', () => {
    const all = [
      ...Object.values(GENERATION_CUT_POINTS),
      ...Object.values(STREAM_CUT_POINTS),
      ...Object.values(CURSOR_CUT_POINTS),
      ...Object.values(DELIVERY_CUT_POINTS),
      ...Object.values(OBJECT_CUT_POINTS),
      ...Object.values(LOCAL_CUT_POINTS),
      ...Object.values(PUBLICATION_CUT_POINTS),
      ...Object.values(QUALITY_CUT_POINTS),
      ...Object.values(RECOVERY_CUT_POINTS),
    ];
    expect(CUT_POINT_NAMES).toEqual(new Set(all));
    expect(CUT_POINTS).toHaveLength(CUT_POINT_NAMES.size);
    const flows = new Set(FLOWS.map((f) => f.name));
    for (const c of CUT_POINTS) {
      expect(c.flows.length + c.commands.length + c.handlers.length + c.libraries.length, c.name).toBeGreaterThan(0);
      for (const flow of c.flows) expect(flows, `${c.name} → ${flow}`).toContain(flow);
    }
  });

  it.each([
    ['the ASL comments', aslComments()],
    ['the CLI help', HELP],
    ["the commands' help", 'every command'],
  ])('every cut point %s names is a real one', async (_where, given) => {
    const text = given === 'every command' ? await allHelp() : given;
    const named = references(text);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((n) => !CUT_POINT_NAMES.has(n))).toEqual([]);
  });

  // The docs name diagnostic codes too (`quality.prepared`, a code, beside `quality.prepared.put`, a
  // cut point): a name there is a cut point or a code the source spells as a string.
  it('every cut point or code README.md and docs/ name is a real one', () => {
    const docs = [
      'README.md',
      ...readdirSync(`${REPO_ROOT}docs`)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ]
      .map((f) => readFileSync(`${REPO_ROOT}${f}`, 'utf8'))
      .join('\n');
    const source = readdirSync(`${REPO_ROOT}src`, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(`${REPO_ROOT}src/${f}`, 'utf8'))
      .join('\n');
    const named = references(docs);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((n) => !CUT_POINT_NAMES.has(n) && !source.includes(`'${n}'`))).toEqual([]);
  });

  it('the publish-clickhouse ASL comments name the publication and quality cut points of its steps, each a real one', () => {
    const named = references(aslComments('publish-clickhouse'));
    const ofSteps = [
      'publication.candidate.create',
      'publication.candidate.fill',
      'quality.staged.probe',
      'quality.prepared.put',
      'quality.capsule.prepare',
      'publication.dispatch.intent',
      'publication.exchange',
      'publication.observe',
      'quality.reader.acquire',
      'quality.target.probe',
      'quality.worker.reap',
      'publication.predecessor.drop',
    ];
    for (const name of ofSteps) expect(CUT_POINT_NAMES, name).toContain(name);
    expect(named).toEqual(expect.arrayContaining(ofSteps));
  });

  it('the ASL comments name every target cut point of deliver-window by its real name', () => {
    const named = references(aslComments());
    for (const name of Object.values(DELIVERY_CUT_POINTS)) expect(named).toContain(name);
  });
});
