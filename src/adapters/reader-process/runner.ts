/**
 * The parent side of the bounded reader (docs/rules.md#bounded-reader steps 3–5, 7–8): fork the reader with
 * an IPC channel, accept exactly one `{token, results}` while the channel is open, and on
 * the deadline or an error revoke the channel FIRST (listener removed, channel closed:
 * anything later is discarded, never returned), then SIGTERM, after `termGraceMs` SIGKILL,
 * then observe the exit (and the closing of its pipes, terminate.ts) within `reapBoundMs`.
 * An end not observed in time is INCOMPLETE.
 *
 * Shipping the child in a Lambda: NodejsFunction bundles one file, so the reader is the
 * same bundle re-run. The handler module imports its worker statically and, at top level,
 * calls `serveIfReaderChild({ probe: worker })`; it builds the reader with `entry: 'probe'`
 * and `childEntry: fileURLToPath(import.meta.url)` (the bundle file). The child is forked
 * with CUTPOINT_READER_CHILD=1 in its environment, so the same bundle serves the worker
 * instead of waiting for invocations. No second asset, no infra change. In dev and tests
 * the default child entry is the CLI bundle's child.js while that bundle is fresh, else
 * child.ts beside this file run through tsx (src/local/process-entry.ts); it imports the
 * worker module whose path is `entry` (tsx too when that is TypeScript).
 *
 * Time: the read ends by `deadlineAt`; the whole call by `deadlineAt + 2 × termGraceMs +
 * reapBoundMs` at worst (the caller's reserve before the Lambda timeout must cover it).
 */
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { ValidationError, WorkerCrashedError } from '../../domain/errors.js';
import { processEntry } from '../../local/process-entry.js';
import type { Clock } from '../../ports/clock.js';
import type { FaultInjector } from '../../ports/faults.js';
import type {
  BoundedReader,
  BoundedReadError,
  BoundedReadOutcome,
  BoundedReadRequest,
} from '../../ports/bounded-reader.js';
import { carriesToken, isReady, READER_CHILD_ENV, settlementOf, type StartMessage } from './protocol.js';
import { release, stopAndReap, watchReap } from './terminate.js';

export const DEFAULT_TERM_GRACE_MS = 1000;
export const DEFAULT_REAP_BOUND_MS = 3000;

/** child.ts beside this module, or the CLI bundle's child.js (processEntry: compiled, or fresh). */
export const DEFAULT_CHILD_ENTRY = processEntry(import.meta.url, 'child');

export interface BoundedReaderOptions {
  /** The worker: a module path (generic child entry) or a name the child entry resolves (bundle). */
  entry: string;
  clock: Clock;
  termGraceMs?: number;
  reapBoundMs?: number;
  /** The file the child process runs; a Lambda bundle passes itself. */
  childEntry?: string;
  /**
   * Runs termination and reaping as a cut point (the caller names it, e.g.
   * `quality.worker.reap`). An injected fault leaves the reap unobserved: INCOMPLETE, while
   * the termination still completes in the background so a rehearsal leaks no process.
   */
  faults?: { injector: FaultInjector; reapCutPoint: string };
}

export type RunBoundedReaderOptions = BoundedReaderOptions & BoundedReadRequest;

/** A TypeScript child entry or worker module runs through tsx, resolved from this package (not from the cwd). */
function execArgvFor(childEntry: string, entry: string): string[] {
  if (!childEntry.endsWith('.ts') && !entry.endsWith('.ts')) return [];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx];
}

type Settled =
  | { kind: 'RESULT'; results: unknown }
  | { kind: 'ERROR'; error: BoundedReadError; started: boolean }
  | { kind: 'DEADLINE' }
  | { kind: 'CHANNEL_CLOSED' }
  | { kind: 'SPAWN_FAILED'; code?: string };

/** Refuses a request it could not honour, before any process starts. */
function validate(options: RunBoundedReaderOptions, termGraceMs: number, reapBoundMs: number): void {
  const bad = (what: string): never => {
    throw new ValidationError('reader.invalid_request', `bounded reader: ${what}`);
  };
  if (typeof options.token !== 'string' || options.token.length === 0) bad('token must be a non-empty string');
  if (typeof options.entry !== 'string' || options.entry.length === 0) bad('entry must be a non-empty string');
  if (!Number.isFinite(options.deadlineAt)) bad('deadlineAt must be a finite epoch in milliseconds');
  for (const [name, ms] of [
    ['termGraceMs', termGraceMs],
    ['reapBoundMs', reapBoundMs],
  ] as const) {
    if (!Number.isInteger(ms) || ms <= 0) bad(`${name} must be a positive integer`);
  }
  try {
    if (JSON.stringify(options.input) === undefined) bad('input must be JSON');
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    bad('input must be JSON');
  }
}

export async function runBoundedReader(options: RunBoundedReaderOptions): Promise<BoundedReadOutcome> {
  const { entry, input, token, deadlineAt, clock } = options;
  const termGraceMs = options.termGraceMs ?? DEFAULT_TERM_GRACE_MS;
  const reapBoundMs = options.reapBoundMs ?? DEFAULT_REAP_BOUND_MS;
  const childEntry = options.childEntry ?? DEFAULT_CHILD_ENTRY;
  validate(options, termGraceMs, reapBoundMs);

  const remaining = deadlineAt - clock.now().getTime();
  if (remaining <= 0) return { kind: 'DEADLINE', queryOutstanding: false, localTermination: 'VERIFIED' };

  const child = fork(childEntry, [], {
    execArgv: execArgvFor(childEntry, entry),
    // Own process group: termination reaches what the reader starts. Pipes, not inherit:
    // their closing is part of the reap, and the reader's output (it may carry values) is
    // drained here and never printed.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, [READER_CHILD_ENV]: '1' },
    serialization: 'json',
  });
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('error', () => undefined); // a broken pipe must not crash the parent
    stream?.resume();
  }
  const watch = watchReap(child);

  let startSent = false;
  let channelOpen = true;
  let settled: Settled | undefined;
  let resolveSettled: () => void = () => undefined;
  const settledOnce = new Promise<void>((resolve) => {
    resolveSettled = resolve;
  });

  const onMessage = (message: unknown): void => {
    if (!channelOpen) return;
    if (isReady(message)) {
      if (startSent) return;
      startSent = true;
      const start: StartMessage = { start: { entry, token, input } };
      child.send(start, () => undefined); // a failed send shows up as the channel closing
      return;
    }
    if (!carriesToken(message, token)) return; // not ours: ignored
    settle(settlementOf(message));
  };
  const onDisconnect = (): void => settle({ kind: 'CHANNEL_CLOSED' });
  const onError = (error: Error & { code?: unknown }): void => {
    if (child.pid === undefined)
      settle({ kind: 'SPAWN_FAILED', ...(typeof error.code === 'string' ? { code: error.code } : {}) });
  };
  const deadlineTimer = setTimeout(() => settle({ kind: 'DEADLINE' }), remaining);

  /**
   * Only while the channel is open; the first settlement revokes it in the same turn, before
   * anything else. The deadline is the clock's, not the timer's: on a busy machine the timer
   * fires late, and a result (or any end) that arrives after `deadlineAt` is a DEADLINE all
   * the same, never returned.
   */
  function settle(value: Settled): void {
    if (!channelOpen) return;
    settled = value.kind !== 'DEADLINE' && clock.now().getTime() >= deadlineAt ? { kind: 'DEADLINE' } : value;
    revoke();
    resolveSettled();
  }
  /** Revocation: nothing the child sends from now on is looked at. */
  function revoke(): void {
    channelOpen = false;
    clearTimeout(deadlineTimer);
    child.off('message', onMessage);
    child.off('disconnect', onDisconnect);
    if (child.connected) child.disconnect();
  }

  child.on('message', onMessage);
  child.on('disconnect', onDisconnect);
  child.on('error', onError); // spawn, send and kill failures; only a failed spawn settles

  await settledOnce;
  const reap = (): Promise<boolean> =>
    stopAndReap(child, watch, { termGraceMs, reapBoundMs, polite: settled?.kind === 'RESULT' });
  const verified = options.faults ? await reapAtCutPoint(options.faults, reap) : await reap();
  // What the channel settled, read after the reap: revocation is what keeps it unchanged.
  const outcome = settled ?? { kind: 'DEADLINE' };
  return outcomeOf(
    outcome,
    verified,
    startSent,
    child.pid,
    watch.hasExited(),
    () => exitOf(child),
    () => release(child),
  );
}

async function reapAtCutPoint(
  faults: { injector: FaultInjector; reapCutPoint: string },
  reap: () => Promise<boolean>,
): Promise<boolean> {
  try {
    return await faults.injector.at(faults.reapCutPoint, reap);
  } catch (error) {
    void reap(); // idempotent: ends the process whether or not the faulted effect ran
    if (error instanceof WorkerCrashedError) throw error; // the parent "died"
    return false;
  }
}

function exitOf(child: { exitCode: number | null; signalCode: NodeJS.Signals | null }): {
  code: number | null;
  signal: string | null;
} {
  return { code: child.exitCode, signal: child.signalCode };
}

function outcomeOf(
  settled: Settled,
  verified: boolean,
  startSent: boolean,
  pid: number | undefined,
  readerExited: boolean,
  exit: () => { code: number | null; signal: string | null },
  releaseChild: () => void,
): BoundedReadOutcome {
  const queryOutstanding =
    settled.kind === 'DEADLINE' || settled.kind === 'CHANNEL_CLOSED'
      ? startSent
      : settled.kind === 'ERROR'
        ? settled.started
        : false;
  if (!verified && pid !== undefined) {
    releaseChild();
    const interrupted = settled.kind === 'RESULT' || settled.kind === 'DEADLINE' ? settled.kind : 'ERROR';
    return {
      kind: 'INCOMPLETE',
      reason: 'reap_unverified',
      interrupted,
      queryOutstanding,
      localTermination: 'UNVERIFIED',
      pid,
      readerExited,
    };
  }
  const proc = pid === undefined ? {} : { pid, exit: exit() };
  switch (settled.kind) {
    case 'RESULT':
      return {
        kind: 'RESULT',
        results: settled.results,
        localTermination: 'VERIFIED',
        pid: pid as number,
        exit: exit(),
      };
    case 'DEADLINE':
      return { kind: 'DEADLINE', queryOutstanding, localTermination: 'VERIFIED', ...proc };
    case 'ERROR':
      return { kind: 'ERROR', error: settled.error, queryOutstanding, localTermination: 'VERIFIED', ...proc };
    case 'CHANNEL_CLOSED':
      return {
        kind: 'ERROR',
        error: readerExitedError(exit()),
        queryOutstanding,
        localTermination: 'VERIFIED',
        ...proc,
      };
    case 'SPAWN_FAILED':
      return {
        kind: 'ERROR',
        error: { class: 'SpawnFailed', ...(settled.code ? { code: settled.code } : {}) },
        queryOutstanding: false,
        localTermination: 'VERIFIED',
        ...proc,
      };
  }
}

/** The reader closed its channel without a result: how it ended, as structured fields. */
function readerExitedError(exit: { code: number | null; signal: string | null }): BoundedReadError {
  return {
    class: 'ReaderExited',
    ...(exit.code !== null ? { code: `exit_code_${exit.code}` } : {}),
    ...(exit.signal !== null ? { type: exit.signal } : {}),
  };
}

/** The port, for one worker: what the quality use case is given. */
export function processBoundedReader(options: BoundedReaderOptions): BoundedReader {
  return { read: (request) => runBoundedReader({ ...options, ...request }) };
}
