// Whether the CLI bundle (dist/cli/, `npm run build`) may stand in for the TypeScript
// sources: its build.json exists and no source file it lists changed since the build, and
// CUTPOINT_CLI_FROM_SOURCE=1 is not set. An installed CLI (`npm pack`'s tarball: bin/ and
// dist/cli/, no src/) has only the bundle: it is used whenever its build.json exists. Plain JavaScript: bin/cutpoint.js reads it before
// any TypeScript can load; src/local/process-entry.ts decides the forked processes by it.
import { readFileSync, statSync } from 'node:fs';

/** `root`: the repository root as a file URL (ending in "/"). */
export function bundleIsFresh(root) {
  if (process.env.CUTPOINT_CLI_FROM_SOURCE === '1') return false;
  let build;
  try {
    build = JSON.parse(readFileSync(new URL('dist/cli/build.json', root), 'utf8'));
  } catch {
    return false;
  }
  if (statSync(new URL('src/', root), { throwIfNoEntry: false }) === undefined) return true;
  return build.inputs.every((input) => {
    const stat = statSync(new URL(input, root), { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs <= build.builtAt;
  });
}
