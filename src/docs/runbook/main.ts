import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNBOOK_DIR, runbookFiles } from './generate.js';

/**
 * `npm run docs:runbook`: writes docs/runbook/ from the code's state-to-action tables and
 * removes pages no state generates any more. Prints `{written, unchanged, removed}` (JSON)
 * on stdout.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));

function existingPages(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isFile() && e.name.endsWith('.md')).map((e) => relative(root, join(e.parentPath, e.name)));
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return undefined;
  }
};

const files = runbookFiles();
const written: string[] = [];
let unchanged = 0;
for (const [path, content] of files) {
  if (read(path) === content) {
    unchanged++;
    continue;
  }
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  written.push(path);
}
const removed = existingPages(RUNBOOK_DIR).filter((path) => !files.has(path));
for (const path of removed) rmSync(join(root, path));
process.stdout.write(`${JSON.stringify({ written, unchanged, removed })}\n`);
