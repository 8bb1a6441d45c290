import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { REPO_ROOT } from './asl.js';

/**
 * Where the CLI keeps its state (`local`: the runtime; beside it `sessions`, `executions`):
 * CUTPOINT_STATE_DIR when set (tests run their own runtime); else `.cutpoint/local` in a
 * clone of the repository; else, for an installed CLI (its files under node_modules, maybe
 * not writable, and replaced by every upgrade), the user's state directory:
 * `$XDG_STATE_HOME/cutpoint/local`, by default `~/.local/state/cutpoint/local`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, root = REPO_ROOT): string {
  if (env.CUTPOINT_STATE_DIR) return resolve(env.CUTPOINT_STATE_DIR);
  if (!root.split(sep).includes('node_modules')) return join(root, '.cutpoint', 'local');
  const stateHome = env.XDG_STATE_HOME ? resolve(env.XDG_STATE_HOME) : join(homedir(), '.local', 'state');
  return join(stateHome, 'cutpoint', 'local');
}

/** Where the daemon keeps emulator data, inside the state directory. */
export function persistentDirOf(stateDir: string): string {
  return join(stateDir, 'data');
}
