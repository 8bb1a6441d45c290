/**
 * The child side of the bounded reader: announce readiness, take the one start message,
 * run the worker, send `{token, results}` (or structured error fields) once, close the
 * channel and exit. When the channel closes for any other reason (the parent revoked it,
 * or the parent died) the worker's signal aborts and the process exits at once: a reader
 * never outlives its parent's interest in it.
 *
 * Two process entries call this: child.ts (dev, tests, CLI: imports the worker module the
 * parent names) and, in a Lambda bundle, the bundle itself re-run with
 * CUTPOINT_READER_CHILD=1, resolving the worker it imported statically (see runner.ts).
 */
import type { BoundedReadError, BoundedReadWorker } from '../../ports/bounded-reader.js';
import { describeThrown, isStart, READER_CHILD_ENV, sanitizeError, type SettleMessage } from './protocol.js';

/** True in a process started by runBoundedReader (its environment carries the switch). */
export function isReaderChild(): boolean {
  return process.env[READER_CHILD_ENV] === '1' && typeof process.send === 'function';
}

/**
 * For a Lambda bundle's handler module, at top level: when this process is a reader child,
 * serve the named worker (imported statically, so it is in the bundle) and return true.
 * The parent names the worker by the same key in `entry`.
 */
export function serveIfReaderChild(workers: Record<string, unknown>): boolean {
  if (!isReaderChild()) return false;
  serveReaderChild((entry) => {
    if (!Object.hasOwn(workers, entry)) throw Object.assign(new Error('unknown worker'), { code: 'unknown_worker' });
    return workers[entry];
  });
  return true;
}

export type WorkerResolver = (entry: string) => Promise<unknown> | unknown;

function asWorker(candidate: unknown): BoundedReadWorker | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const { run, classify } = candidate as Partial<BoundedReadWorker>;
  if (typeof run !== 'function') return undefined;
  return {
    run: run.bind(candidate),
    ...(typeof classify === 'function' ? { classify: classify.bind(candidate) } : {}),
  };
}

function classifyFailure(worker: BoundedReadWorker, error: unknown): BoundedReadError {
  if (!worker.classify) return describeThrown(error);
  try {
    return sanitizeError(worker.classify(error), 'WorkerFailed');
  } catch {
    return describeThrown(error);
  }
}

/** Sends the one settling message, then closes the channel (which ends the process). */
function settle(message: SettleMessage): void {
  if (!process.connected || !process.send) return;
  process.send(message, () => {
    if (process.connected) process.disconnect();
  });
}

export function serveReaderChild(resolve: WorkerResolver): void {
  if (!process.send) throw new Error('serveReaderChild: not started with an IPC channel');
  const controller = new AbortController();
  process.once('disconnect', () => {
    controller.abort();
    // Sockets the worker opened close with the process; nothing of the read survives it.
    process.exit(0);
  });

  const onMessage = (message: unknown): void => {
    if (!isStart(message)) return;
    process.off('message', onMessage);
    void runOnce(resolve, message.start, controller.signal);
  };
  process.on('message', onMessage);
  process.send({ ready: true });
}

async function runOnce(
  resolve: WorkerResolver,
  start: { entry: string; token: string; input: unknown },
  signal: AbortSignal,
): Promise<void> {
  const { entry, token, input } = start;
  let worker: BoundedReadWorker | undefined;
  try {
    worker = asWorker(await resolve(entry));
  } catch (error) {
    settle({ token, error: { ...describeThrown(error), class: 'WorkerLoadFailed' }, started: false });
    return;
  }
  if (!worker) {
    settle({ token, error: { class: 'WorkerLoadFailed', code: 'no_run_export' }, started: false });
    return;
  }
  try {
    const results = await worker.run(input, signal);
    settle({ token, results: results ?? null });
  } catch (error) {
    settle({ token, error: classifyFailure(worker, error), started: true });
  }
}
