/**
 * Termination and reaping of a reader process. The child leads its own process group
 * (forked detached), so SIGTERM and SIGKILL reach whatever it started in that group too.
 * "Reaped" means: the child's exit observed AND every holder of its stdout and stderr pipes
 * closed them. A grandchild that left the group but still holds the pipes
 * therefore keeps the reap unverified, which is the honest answer: something the reader
 * started is still alive.
 */
import type { ChildProcess } from 'node:child_process';

export interface ReapWatch {
  /** Resolves once the child exited and its pipes closed. */
  readonly closed: Promise<void>;
  isClosed(): boolean;
  hasExited(): boolean;
}

export function watchReap(child: ChildProcess): ReapWatch {
  // Not the child's own 'close' event: it never fires once the parent side closed the
  // IPC channel (measured on Node 24), which is exactly what revocation does.
  const waits: Promise<void>[] = [new Promise<void>((resolve) => child.once('exit', () => resolve()))];
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) waits.push(new Promise<void>((resolve) => stream.once('close', () => resolve())));
  }
  let exited = false;
  let closed = false;
  void waits[0]?.then(() => {
    exited = true;
  });
  const all = Promise.all(waits).then(() => {
    closed = true;
  });
  return { closed: all, isClosed: () => closed, hasExited: () => exited };
}

/** Waits for `promise` at most `ms`; true when it settled in time. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Signals the child's process group. Only while the group can still be ours: before its
 * pipes closed (the pid of an unreaped child, or a group with live members, cannot be reused).
 */
function signalGroup(child: ChildProcess, watch: ReapWatch, signal: NodeJS.Signals): void {
  if (child.pid === undefined || watch.isClosed()) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is already empty. Anything else: the reap bound decides.
  }
}

export interface StopBounds {
  termGraceMs: number;
  reapBoundMs: number;
  /** Let the child end by itself for one grace period first (it has sent its result). */
  polite: boolean;
}

/** SIGTERM, after the grace SIGKILL, then the exit observed within the reap bound. True = verified. */
export async function stopAndReap(child: ChildProcess, watch: ReapWatch, bounds: StopBounds): Promise<boolean> {
  if (child.pid === undefined) return true; // never started: nothing to end
  if (bounds.polite && (await within(watch.closed, bounds.termGraceMs))) return true;
  signalGroup(child, watch, 'SIGTERM');
  if (await within(watch.closed, bounds.termGraceMs)) return true;
  signalGroup(child, watch, 'SIGKILL');
  return within(watch.closed, bounds.reapBoundMs);
}

/** After an unverified reap: stop holding the caller's event loop open for a process we could not end. */
export function release(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
}
