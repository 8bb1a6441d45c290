import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaFiles } from './generate.js';

/** `npm run schemas`: writes schemas/ from the zod schemas (generate.ts). Prints `{written, unchanged}` (JSON). */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string | undefined => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return undefined;
  }
};

const written: string[] = [];
let unchanged = 0;
for (const [path, text] of schemaFiles()) {
  if (read(path) === text) {
    unchanged++;
    continue;
  }
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
  written.push(path);
}
process.stdout.write(`${JSON.stringify({ written, unchanged })}\n`);
