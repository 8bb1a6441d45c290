import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: generated files are named relative to it. */
const root = fileURLToPath(new URL('../../', import.meta.url));

const read = (path: string): string | undefined => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * Writes generated files (repository-relative path → text) that differ from what is on disk,
 * and, with `prune`, removes the files under `prune.dir` ending in `prune.suffix` that no
 * longer have a source. The one writer of `npm run docs:runbook` and `npm run schemas`.
 */
export function writeGenerated(
  files: ReadonlyMap<string, string>,
  prune?: { dir: string; suffix: string },
): { written: string[]; unchanged: number; removed?: string[] } {
  const written: string[] = [];
  let unchanged = 0;
  for (const [path, text] of files) {
    if (read(path) === text) {
      unchanged++;
      continue;
    }
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    written.push(path);
  }
  if (!prune) return { written, unchanged };
  const removed = existing(prune.dir, prune.suffix).filter((path) => !files.has(path));
  for (const path of removed) rmSync(join(root, path));
  return { written, unchanged, removed };
}

function existing(dir: string, suffix: string): string[] {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}
