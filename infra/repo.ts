import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root. Registry entries and ASL files are named relative to it, and
 * NodejsFunction bundles from it (package-lock.json lives here), so the app synthesizes
 * the same from any working directory.
 */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export function repoPath(relative: string): string {
  return join(REPO_ROOT, relative);
}
