import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/*
 * The repository stands alone: a clone can follow every citation in it. Code, tests, lint
 * messages and docs cite the rules they implement as `docs/rules.md#<anchor>`, never a
 * document kept outside the repository (the source documents the project started from, its
 * design drafts, a sibling checkout). Two checks over every tracked file:
 * - no citation of an outside document;
 * - every cited `rules.md#<anchor>` is an explicit anchor of docs/rules.md.
 */

const root = fileURLToPath(new URL('../../', import.meta.url));
const RULES = 'docs/rules.md';

/**
 * The outside citations, assembled from parts so that this file's own text never matches
 * the pattern: nothing is excluded from the scan, this file included.
 */
const OUTSIDE = new RegExp(
  [
    ['seed', ' 00[024]'],
    ['seeds', '/'],
    ['specs', '/'],
    ['spec', ' §'],
    ['DESIGN', '\\.md'],
    ['\\.\\.', '/shared'],
  ]
    .map((parts) => parts.join(''))
    .join('|'),
);

/** A citation of a rules anchor: `docs/rules.md#<anchor>` in code, `../rules.md#<anchor>` in Markdown. */
const CITED_ANCHOR = /rules\.md#([a-z0-9]+(?:-[a-z0-9]+)*)/g;
/** The explicit anchors docs/rules.md declares, one before each heading. */
const DECLARED_ANCHOR = /<a id="([^"]*)"><\/a>/g;

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return out
    .split('\0')
    .filter((path) => path !== '' && !path.split('/').includes('node_modules'))
    .filter((path) => existsSync(join(root, path)) && statSync(join(root, path)).isFile());
}

const files = trackedFiles().map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

describe('the repository stands alone', () => {
  it('scans every tracked file, and this file passes its own scan', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((f) => f.path === 'README.md')).toBe(true);
    expect(OUTSIDE.test(readFileSync(fileURLToPath(import.meta.url), 'utf8'))).toBe(false);
  });

  it('cites no document kept outside the repository', () => {
    const found = files.flatMap(({ path, text }) =>
      text
        .split('\n')
        .flatMap((line, i) => (OUTSIDE.test(line) ? [`${path}:${i + 1}: ${line.trim().slice(0, 160)}`] : [])),
    );
    expect(found, `cite docs/rules.md#<anchor> (or the project's own doc) instead:\n${found.join('\n')}`).toEqual([]);
  });

  const rules = readFileSync(join(root, RULES), 'utf8');
  const declared = [...rules.matchAll(DECLARED_ANCHOR)].map((m) => m[1]!);

  it('docs/rules.md declares each anchor once, in kebab-case', () => {
    expect(declared.length).toBeGreaterThan(0);
    expect(declared.filter((a) => !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(a))).toEqual([]);
    expect(declared.filter((a, i) => declared.indexOf(a) !== i)).toEqual([]);
  });

  it('every cited rules.md#<anchor> exists in docs/rules.md', () => {
    const known = new Set(declared);
    const dangling = files.flatMap(({ path, text }) =>
      [...text.matchAll(CITED_ANCHOR)]
        .filter((m) => !known.has(m[1]!))
        .map((m) => `${path}:${lineOf(text, m.index)}: rules.md#${m[1]}`),
    );
    expect(dangling, `no such anchor in ${RULES}:\n${dangling.join('\n')}`).toEqual([]);
  });

  it("docs/rules.md's own links (#anchor) land on its anchors", () => {
    const known = new Set(declared);
    const dangling = [...rules.matchAll(/\]\(#([^)]*)\)/g)].map((m) => m[1]!).filter((a) => !known.has(a));
    expect(dangling).toEqual([]);
  });
});
