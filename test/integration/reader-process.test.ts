// Over ~300 lines (365), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { ArmedFaultInjector } from '../../src/adapters/fault-injector.js';
import { runBoundedReader } from '../../src/adapters/reader-process/runner.js';
import { parseFaultSpec } from '../../src/domain/faults.js';
import { processEntry } from '../../src/local/process-entry.js';
import type { BoundedReadOutcome } from '../../src/ports/bounded-reader.js';
import { systemClock } from '../../src/engine/system-clock.js';

/**
 * The bounded reader with real processes: each test forks the generic child entry (the
 * fresh bundle's child.js, or child.ts; through tsx, as the workers are TypeScript) over a toy
 * worker in test/fixtures/reader-process/ and checks what the parent
 * returns and that the process it started is gone. A deadline leaves room for the child to
 * start (tsx on a shared machine) so that the worker has really begun when it passes.
 */
const FIXTURES = fileURLToPath(new URL('../fixtures/reader-process/', import.meta.url));
const TOKEN = 'tok-3f9a1c2e7b6d4058a1e2c3d4f5a6b7c8';
const START_ROOM_MS = 4000;
const scratch = mkdtempSync(join(tmpdir(), 'cutpoint-reader-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function read(
  worker: string,
  input: unknown,
  opts: { deadlineInMs?: number; termGraceMs?: number; reapBoundMs?: number } = {},
): Promise<BoundedReadOutcome> {
  return runBoundedReader({
    entry: join(FIXTURES, `${worker}.ts`),
    input,
    token: TOKEN,
    deadlineAt: Date.now() + (opts.deadlineInMs ?? 30_000),
    clock: systemClock,
    ...(opts.termGraceMs !== undefined ? { termGraceMs: opts.termGraceMs } : {}),
    ...(opts.reapBoundMs !== undefined ? { reapBoundMs: opts.reapBoundMs } : {}),
  });
}

/** Our direct child: gone means reaped (a zombie would still answer signal 0). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Any process: running unless absent or dead (an orphaned zombie is reaped by init, if at all). */
function running(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return exists(pid);
  try {
    const state = readFileSync(stat, 'utf8').replace(/^.*\) /s, '')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is still running after up to `ms`. A SIGKILLed group member has closed its
 * pipes (what VERIFIED observed) before the kernel marks it a zombie: on a busy machine that
 * step was seen still pending at the instant of the check.
 */
async function runningAfter(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (running(pid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  return running(pid);
}

function pidOf(outcome: BoundedReadOutcome): number {
  if (outcome.pid === undefined) throw new Error(`no pid in ${JSON.stringify(outcome)}`);
  return outcome.pid;
}

describe('bounded reader process', () => {
  it('returns the one result sent with our token, after the reader exited by itself and was reaped', async () => {
    const outcome = await read('fast', { probe: 'count' });
    expect(outcome).toEqual({
      kind: 'RESULT',
      results: { echo: { probe: 'count' } },
      localTermination: 'VERIFIED',
      pid: expect.any(Number),
      exit: { code: 0, signal: null },
    });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('the source child entry (child.ts through tsx, what a stale bundle falls back to) serves the same result', async () => {
    const childEntry = processEntry(
      new URL('../../src/adapters/reader-process/runner.ts', import.meta.url).href,
      'child',
      () => false,
    );
    expect(childEntry.endsWith('/src/adapters/reader-process/child.ts')).toBe(true);
    const outcome = await runBoundedReader({
      entry: join(FIXTURES, 'fast.ts'),
      input: { probe: 'count' },
      token: TOKEN,
      deadlineAt: Date.now() + 30_000,
      clock: systemClock,
      childEntry,
    });
    expect(outcome).toMatchObject({
      kind: 'RESULT',
      results: { echo: { probe: 'count' } },
      localTermination: 'VERIFIED',
      exit: { code: 0, signal: null },
    });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('ignores messages with a wrong token or none, and accepts the genuine result', async () => {
    const outcome = await read('forged-token', {});
    expect(outcome).toMatchObject({ kind: 'RESULT', results: { genuine: true }, localTermination: 'VERIFIED' });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('revokes the channel at the deadline, kills and reaps the reader; a result sent after revocation is never returned', async () => {
    const deadlineAt = Date.now() + START_ROOM_MS;
    const outcome = await runBoundedReader({
      entry: join(FIXTURES, 'late-result.ts'),
      input: { deadlineAt, lateByMs: 150 },
      token: TOKEN,
      deadlineAt,
      clock: systemClock,
      termGraceMs: 1000,
    });
    expect(outcome).toMatchObject({ kind: 'DEADLINE', queryOutstanding: true, localTermination: 'VERIFIED' });
    expect(outcome).not.toHaveProperty('results');
    expect(Date.now()).toBeGreaterThan(deadlineAt + 150);
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('a result that arrives after the deadline is a DEADLINE even when the timer has not fired yet (a busy machine)', async () => {
    // The deadline timer is set 30 s out; the clock says the deadline has passed by the time
    // the fast worker's result arrives — as when the event loop ran the timer late.
    const deadlineAt = Date.now() + 30_000;
    let reads = 0;
    const lateClock = { now: () => new Date(reads++ === 0 ? Date.now() : deadlineAt + 1) };
    const outcome = await runBoundedReader({
      entry: join(FIXTURES, 'fast.ts'),
      input: {},
      token: TOKEN,
      deadlineAt,
      clock: lateClock,
    });
    expect(outcome).toMatchObject({ kind: 'DEADLINE' });
    expect(outcome).not.toHaveProperty('results');
  });

  it('terminates a stalled worker at the deadline (SIGTERM or the channel closing ends it)', async () => {
    const outcome = await read('slow', {}, { deadlineInMs: START_ROOM_MS });
    expect(outcome).toMatchObject({ kind: 'DEADLINE', queryOutstanding: true, localTermination: 'VERIFIED' });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('kills with SIGKILL a reader that ignores SIGTERM and blocks its event loop, after the grace', async () => {
    const started = Date.now();
    const outcome = await read('stubborn', {}, { deadlineInMs: START_ROOM_MS, termGraceMs: 500 });
    expect(outcome).toMatchObject({
      kind: 'DEADLINE',
      queryOutstanding: true,
      localTermination: 'VERIFIED',
      exit: { code: null, signal: 'SIGKILL' },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(START_ROOM_MS + 500);
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('terminates what the reader started in its process group too', async () => {
    const pidFile = join(scratch, 'in-group.pid');
    const outcome = await read(
      'grandchild',
      { pidFile, escape: false },
      { deadlineInMs: START_ROOM_MS, termGraceMs: 500, reapBoundMs: 1000 },
    );
    expect(outcome).toMatchObject({ kind: 'DEADLINE', localTermination: 'VERIFIED' });
    expect(exists(pidOf(outcome))).toBe(false);
    expect(await runningAfter(Number(readFileSync(pidFile, 'utf8')), 5_000)).toBe(false);
  });

  it('is INCOMPLETE when the end of the reader cannot be observed within the bound (a helper escaped its group and holds its pipes)', async () => {
    const pidFile = join(scratch, 'escaped.pid');
    const outcome = await read(
      'grandchild',
      { pidFile, escape: true },
      { deadlineInMs: START_ROOM_MS, termGraceMs: 300, reapBoundMs: 500 },
    );
    const helper = Number(readFileSync(pidFile, 'utf8'));
    try {
      expect(outcome).toEqual({
        kind: 'INCOMPLETE',
        reason: 'reap_unverified',
        interrupted: 'DEADLINE',
        queryOutstanding: true,
        localTermination: 'UNVERIFIED',
        pid: expect.any(Number),
        readerExited: true,
      });
      expect(running(helper)).toBe(true); // the honest reason: it is still there
      expect(exists(pidOf(outcome))).toBe(false); // the reader itself was reaped
    } finally {
      process.kill(helper, 'SIGKILL');
    }
  });

  it('runs the reap as a cut point: an injected fault there leaves it unobserved (INCOMPLETE), and no process leaks', async () => {
    for (const kind of ['fail', 'lose-response']) {
      const injector = new ArmedFaultInjector(parseFaultSpec(`quality.worker.reap:${kind}`));
      const outcome = await runBoundedReader({
        entry: join(FIXTURES, 'fast.ts'),
        input: {},
        token: TOKEN,
        deadlineAt: Date.now() + 30_000,
        clock: systemClock,
        faults: { injector, reapCutPoint: 'quality.worker.reap' },
      });
      expect(outcome).toMatchObject({
        kind: 'INCOMPLETE',
        reason: 'reap_unverified',
        interrupted: 'RESULT',
        queryOutstanding: false,
        localTermination: 'UNVERIFIED',
      });
      expect(outcome).not.toHaveProperty('results');
      const pid = pidOf(outcome);
      // The reap still ends it: waited for without a wall-clock bound of its own (a process that
      // never ends fails the test at its timeout, however slow the machine).
      while (exists(pid)) await sleep(100);
      expect(exists(pid)).toBe(false);
    }
  });

  it('reports a worker failure as structured fields only, never its message', async () => {
    const outcome = await read('throws', {});
    expect(outcome).toEqual({
      kind: 'ERROR',
      error: { class: 'WorkerFailed', type: 'TypeError', code: 'E_TOY_FAILURE' },
      queryOutstanding: true,
      localTermination: 'VERIFIED',
      pid: expect.any(Number),
      exit: expect.any(Object),
    });
    // The message's words, not a bare 42: the child's pid may contain those digits.
    expect(JSON.stringify(outcome)).not.toMatch(/s3cr3t|row 42|secret value/);
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it("uses the worker's classifier and drops a field that is not identifier-like", async () => {
    const outcome = await read('classified', {});
    expect(outcome).toMatchObject({
      kind: 'ERROR',
      error: { class: 'KeeperNoNode', code: '999' },
      localTermination: 'VERIFIED',
    });
    expect(JSON.stringify(outcome)).not.toContain('secret');
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('reports a reader that died mid-read as ReaderExited with its exit code', async () => {
    const outcome = await read('exits', {});
    expect(outcome).toMatchObject({
      kind: 'ERROR',
      error: { class: 'ReaderExited', code: 'exit_code_3' },
      queryOutstanding: true,
      localTermination: 'VERIFIED',
    });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('reports a worker module that cannot be loaded, with no query outstanding', async () => {
    const missing = await read('does-not-exist', {});
    expect(missing).toMatchObject({
      kind: 'ERROR',
      error: { class: 'WorkerLoadFailed', code: 'ERR_MODULE_NOT_FOUND' },
      queryOutstanding: false,
      localTermination: 'VERIFIED',
    });
    const noRun = await read('no-run', {});
    expect(noRun).toMatchObject({
      kind: 'ERROR',
      error: { class: 'WorkerLoadFailed', code: 'no_run_export' },
      queryOutstanding: false,
    });
    expect(exists(pidOf(missing))).toBe(false);
    expect(exists(pidOf(noRun))).toBe(false);
  });

  it('reports a child that never started as ReaderExited, with no query outstanding', async () => {
    const outcome = await runBoundedReader({
      entry: join(FIXTURES, 'fast.ts'),
      childEntry: join(scratch, 'no-such-entry.mjs'),
      input: {},
      token: TOKEN,
      deadlineAt: Date.now() + 30_000,
      clock: systemClock,
    });
    expect(outcome).toMatchObject({
      kind: 'ERROR',
      error: { class: 'ReaderExited', code: 'exit_code_1' },
      queryOutstanding: false,
      localTermination: 'VERIFIED',
    });
    expect(exists(pidOf(outcome))).toBe(false);
  });

  it('ships in a Lambda bundle: one esbuild file, re-run with the switch, serves the worker it bundled', async () => {
    // The options of infra/step-function.ts that matter here: one ESM file for Node, with the require shim.
    const outfile = join(scratch, 'bundle', 'index.mjs');
    await build({
      entryPoints: [join(FIXTURES, 'bundle-entry.ts')],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      minify: true,
      banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
      logLevel: 'silent',
    });
    const base = { input: { from: 'bundle' }, token: TOKEN, clock: systemClock, childEntry: outfile };
    const served = await runBoundedReader({ ...base, entry: 'fast', deadlineAt: Date.now() + 30_000 });
    expect(served).toMatchObject({
      kind: 'RESULT',
      results: { echo: { from: 'bundle' } },
      localTermination: 'VERIFIED',
    });
    const unknown = await runBoundedReader({ ...base, entry: 'no-such-worker', deadlineAt: Date.now() + 30_000 });
    expect(unknown).toMatchObject({
      kind: 'ERROR',
      error: { class: 'WorkerLoadFailed', code: 'unknown_worker' },
      queryOutstanding: false,
    });
    expect(exists(pidOf(served))).toBe(false);
    expect(exists(pidOf(unknown))).toBe(false);
  });

  it('refuses a request it cannot honour before starting anything', async () => {
    const base = {
      entry: join(FIXTURES, 'fast.ts'),
      input: {},
      token: TOKEN,
      deadlineAt: Date.now() + 30_000,
      clock: systemClock,
    };
    const refusal = { name: 'Cutpoint.ValidationError', code: 'reader.invalid_request' };
    await expect(runBoundedReader({ ...base, token: '' })).rejects.toMatchObject(refusal);
    await expect(runBoundedReader({ ...base, input: { n: 1n } })).rejects.toMatchObject(refusal);
    await expect(runBoundedReader({ ...base, input: undefined })).rejects.toMatchObject(refusal);
    await expect(runBoundedReader({ ...base, deadlineAt: Number.NaN })).rejects.toMatchObject(refusal);
    await expect(runBoundedReader({ ...base, reapBoundMs: 0 })).rejects.toMatchObject(refusal);
  });

  it('starts nothing when the deadline has already passed', async () => {
    const outcome = await read('fast', {}, { deadlineInMs: -1 });
    expect(outcome).toEqual({ kind: 'DEADLINE', queryOutstanding: false, localTermination: 'VERIFIED' });
  });
});
