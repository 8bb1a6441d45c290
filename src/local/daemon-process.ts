import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessRunning } from './runtime-state.js';

/** The local runtime's daemon as a process: is it (still) the one we started, wait for its exit, signal it. */

/** `pid` runs and its command line holds one of `markers`. */
export async function isRunning(pid: number, markers: string | readonly string[]): Promise<boolean> {
  for (const marker of typeof markers === 'string' ? [markers] : markers)
    if (await isProcessRunning(pid, marker)) return true;
  return false;
}

// Checks the command line, not just the pid: an exited process stays a zombie
// (still signalable) until init reaps it, which can take a while in containers.
export async function waitForExit(
  pid: number,
  markers: string | readonly string[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await isRunning(pid, markers)) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

export function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // exited in the meantime
  }
}
