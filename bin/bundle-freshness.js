// Whether the CLI bundle (dist/cli/, `npm run build`) may stand in for the TypeScript
// sources: its build.json exists and no source file it lists changed since the build, and
// CUTPOINT_CLI_FROM_SOURCE=1 is not set. Plain JavaScript: bin/cutpoint.js reads it before
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
  return build.inputs.every((input) => {
    const stat = statSync(new URL(input, root), { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs <= build.builtAt;
  });
}
