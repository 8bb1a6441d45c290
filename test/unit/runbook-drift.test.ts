import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FLOWS } from '../../src/registry/index.js';
import { JOURNAL_STATES } from '../../src/domain/delivery/journal-states.js';
import { permittedActions, type LiveAction } from '../../src/domain/delivery/action-guide.js';
import { CAPSULE_STATES } from '../../src/domain/quality/capsule.js';
import { RUNBOOK_DIR, runbookFiles, runbookPages } from '../../src/docs/runbook/generate.js';
import { REGENERATE } from '../../src/docs/runbook/render.js';

/*
 * docs/runbook/ is generated from the state-to-action tables the code enforces. The pages
 * are regenerated in memory and compared with the committed ones byte for byte: a change to
 * a table (a state, a transition, a permitted action, a diagnostic code) without
 * `npm run docs:runbook` fails here, naming the page.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const generated = runbookFiles();

function committedPages(): string[] {
  const dir = join(root, RUNBOOK_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

describe('docs/runbook: generated from the code, never drifting from it', () => {
  it.each([...generated.keys()].map((path) => [path]))('%s is committed as generated', (path) => {
    const file = join(root, path);
    const committed = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    expect(committed, `${path} is missing: run \`${REGENERATE}\` and commit it`).toBeDefined();
    expect(
      committed === generated.get(path),
      `${path} differs from what the code generates: run \`${REGENERATE}\` and commit it`,
    ).toBe(true);
  });

  it('no committed page is left over from a state that no longer exists', () => {
    const stale = committedPages().filter((path) => !generated.has(path));
    expect(stale, `stale runbook pages: run \`${REGENERATE}\` (it removes them) and commit`).toEqual([]);
  });

  it('has one page per delivery journal state and per quality capsule state, each listing what the code permits', () => {
    const pages = runbookPages();
    const states = (subsystem: string) => pages.filter((p) => p.subsystem === subsystem).map((p) => p.state);
    expect(states('delivery')).toEqual([...JOURNAL_STATES]);
    expect(states('quality')).toEqual(expect.arrayContaining([...CAPSULE_STATES]));
    for (const page of pages.filter((p) => p.subsystem === 'delivery')) {
      const state = page.state as (typeof JOURNAL_STATES)[number];
      // Every action the guide can offer in the state: owned stages recorded and, in
      // PARTIAL_PROVED, the continuation proved (resume); each conditional one says when.
      const proved = { ownedStagesRecorded: true, continuable: { unfinishedParts: 1, rowsProved: 0 } };
      expect(page.permitted.map((a) => a.name)).toEqual(permittedActions(state, proved));
      for (const action of page.permitted) {
        if (!permittedActions(state, { ownedStagesRecorded: true }).includes(action.name as LiveAction))
          expect(action.when, `${state} ${action.name}`).toMatch(/continuation proof/);
      }
    }
  });

  it('every recovery start names a flow of src/registry/flows.ts and every page a diagnostic, an incoming transition and a command', () => {
    const flows = new Set(FLOWS.map((f) => f.name));
    for (const page of runbookPages()) {
      expect(page.incoming.length, `${page.subsystem}/${page.state}: how you got here`).toBeGreaterThan(0);
      for (const action of page.permitted) {
        expect(action.command, `${page.subsystem}/${page.state} ${action.name}`).toMatch(
          /^(printf .* \| )?npx cutpoint /,
        );
        if (action.start) expect(flows, `${page.subsystem}/${page.state} ${action.name}`).toContain(action.start.flow);
      }
    }
  });
});
