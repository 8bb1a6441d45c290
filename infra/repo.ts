import { join } from 'node:path';
import { REPO_ROOT } from '../src/local/asl.js';

/**
 * A path under the repository root (REPO_ROOT, src/local/asl.ts). Registry entries and ASL
 * files are named relative to it, and NodejsFunction bundles from it (package-lock.json
 * lives here), so the app synthesizes the same from any working directory.
 */
export function repoPath(relative: string): string {
  return join(REPO_ROOT, relative);
}
