import type { AppendOutcome, LaneRef } from '../../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../../src/local/flow-runner.js';
import type { Fence } from '../../../src/domain/fence.js';
import type { Ports } from '../../../src/ports/index.js';
import { appendBatch } from '../../../src/stream/append-batch.js';
import { resolveAppend } from '../../../src/stream/resolve.js';
import { takeoverLane } from '../../../src/stream/takeover.js';
import { trimLane } from '../../../src/stream/trim.js';
import { lambdaInvocations } from '../../support/sched/invocations.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import type { OpHistory, Pending } from '../../support/sched/op-history.js';
import {
  encode,
  messageOf,
  nameOf,
  range,
  settle,
  TRANSIENT,
  type Attempt,
  type History,
} from '../../support/stream-history/model.js';

/**
 * The stream scenario's actors (docs/stream-log.md "The stream log"), each one scheduler
 * actor whose every store effect parks at its cut point: an append through the
 * stream-append flow (its Task invocations may be zombies or duplicates), a duplicate
 * StartExecution of it, the automatic resolve flow an unknown outcome starts, an
 * operator's resolve racing it, a takeover fencing the first writer (whose zombie may land
 * after it), the new owner's append through the library (appendBatch), a trim, the
 * stream-gc flow after a clock move (or an operator's trim and then GC, in one actor), and
 * a reader racing trim and GC (stream-reader-actor.ts). Every outcome an
 * actor is told goes through the stream history's model (`settle`, `verifyRead`), which
 * checks it against every earlier one as it comes back.
 */

/** One schedule's lane, model and the ports its actors use. */
export interface StreamRun {
  s: Scheduler;
  h: History;
  lane: LaneRef;
  /** Writers, the resolve and the takeover: the world's ports. */
  ports: Ports;
  /** GC and the final checks: the same ports, counting the DELETEs that applied. */
  gcPorts: Ports;
  /** Epoch and committed end of each takeover that returned: commits of older epochs end at or below it. */
  takeovers: Array<{ epoch: number; committedEnd: number }>;
  /** The trim target, if this schedule trims. */
  trimTo?: number;
  graceSeconds: number;
  /** Whether the checker runs GC past every grace (generation 0 and compaction first) and checks the whole inventory. */
  finalGc: boolean;
  /** What actors found broken as they ran (the checker reports the first). */
  broken: string[];
  /** The clients' operations, as invoked and completed (the history checker's input: log-linearizable.ts). */
  ops: OpHistory;
  /** An operator's resolve not yet ended: a resolve flow running meanwhile races it. */
  operatorPending: boolean;
  /** Whether this schedule's GC run has ended (a stalled reader holds its pin until then). */
  gcEnded: boolean;
}

/**
 * Spawns one actor whose broken invariant (a HistoryError from the model's checks) or
 * unexpected error is kept for the checker: the scheduler does not look at how an actor ended.
 */
export function act(run: StreamRun, label: string, body: () => Promise<void>): void {
  void run.s.spawn(label, () =>
    body().catch((error: unknown) => {
      run.s.note(`${label} broke: ${messageOf(error)}`);
      run.broken.push(
        `${label}: ${error instanceof Error && error.name === 'HistoryError' ? error.message : messageOf(error)}`,
      );
    }),
  );
}

/** How a Task's retries can end a flow without an interpretation (the attempt stays the recovery handle). */
const EXHAUSTED = new Set([...TRANSIENT, 'States.Timeout', 'Lambda.ServiceException']);

const base64 = (records: readonly string[]): string[] => records.map((r) => Buffer.from(r).toString('base64'));

function told(run: StreamRun, a: Attempt, o: AppendOutcome, via: string): void {
  run.s.note(
    `${via} ${a.id} → ${o.status}${o.start === undefined ? '' : ` ${range(o)}`}${o.reason ? ` (${o.reason})` : ''}`,
  );
  const decidedBy = a.status === 'committed' || a.status === 'not-committed' ? a.settledHow : undefined;
  settle(run.h, a, o, via);
  // Coverage for the soak's summary: a writer fenced by the takeover, an append told its outcome after a resolve decided it.
  if (o.reason?.includes('Stream.Fenced')) run.s.count('fenced-writer');
  if (via.startsWith('append') && decidedBy?.includes('resolve')) run.s.count('append-after-resolve');
  if (o.status === 'KNOWN_COMMITTED') run.h.head.committedEnd = Math.max(run.h.head.committedEnd, o.end!);
}

/** Completes an append's or a resolve's operation with what it was told: committed ok, not committed fail, anything else info. */
export function completed(op: Pending, outcome: AppendOutcome | undefined, error?: unknown): void {
  if (outcome?.status === 'KNOWN_COMMITTED') op.ok(outcome);
  else if (outcome?.status === 'KNOWN_NOT_COMMITTED') op.fail(outcome);
  else op.info(outcome ?? { error: nameOf(error) });
}

function flowEnded(run: StreamRun, label: string, r: FlowResult): AppendOutcome | undefined {
  if (r.status === 'SUCCEEDED') return r.output as AppendOutcome;
  run.s.note(`${label} FAILED ${r.error}: ${r.cause}`);
  run.h.check(
    EXHAUSTED.has(r.error ?? ''),
    `${label} failed with ${r.error}: ${r.cause} (only exhausted retries may end it without an interpretation)`,
  );
  return undefined;
}

/** The stream-append flow for one attempt; MAY_HAVE_COMMITTED or a failed execution starts the automatic resolve. */
export function appendFlowActor(run: StreamRun, a: Attempt, fence: Fence, label: string): void {
  act(run, label, async () => {
    const input = { ...run.lane, attemptId: a.id, session: fence, records: base64(a.records) };
    const invocations = lambdaInvocations(run.s, label);
    const op = run.ops.invoke(label, 'append', { attempt: a.id, records: a.records });
    const r = await runFlow('stream-append', input, {
      ports: run.ports,
      retryIntervalMs: 0,
      executionName: a.id,
      invoke: invocations.invoke,
    });
    const outcome = flowEnded(run, label, r);
    completed(op, outcome, r.error);
    if (outcome) told(run, a, outcome, label);
    if (!outcome || outcome.status === 'MAY_HAVE_COMMITTED') resolveFlowActor(run, a, `auto-resolve:${a.id}`);
  });
}

/** The stream-resolve-append flow for the original attempt (what an unknown outcome sets off). */
export function resolveFlowActor(run: StreamRun, a: Attempt, label: string): void {
  act(run, label, async () => {
    if (run.operatorPending) run.s.count('operator-race', `${label} races the operator's resolve of ${a.id}`);
    const invocations = lambdaInvocations(run.s, label);
    const op = run.ops.invoke(label, 'resolve', { attempt: a.id });
    const r = await runFlow(
      'stream-resolve-append',
      { ...run.lane, attemptId: a.id },
      { ports: run.ports, retryIntervalMs: 0, invoke: invocations.invoke },
    );
    const outcome = flowEnded(run, label, r);
    completed(op, outcome, r.error);
    if (outcome) told(run, a, outcome, label);
  });
}

/** An operator's `stream resolve` of the attempt, in-process, at whatever moment the PRNG gives it. */
export function operatorResolveActor(run: StreamRun, a: Attempt): void {
  const label = `operator-resolve:${a.id}`;
  run.operatorPending = true;
  act(run, label, async () => {
    const op = run.ops.invoke(label, 'resolve', { attempt: a.id });
    try {
      const outcome = await resolveAppend({ ...run.lane, attemptId: a.id }, run.ports);
      completed(op, outcome);
      told(run, a, outcome, label);
    } catch (error) {
      if (error instanceof Error && error.name !== 'HistoryError') completed(op, undefined, error);
      run.s.note(`${label} threw ${messageOf(error)}`);
      run.h.check(TRANSIENT.has(nameOf(error)), `${label} threw ${messageOf(error)}`);
    } finally {
      run.operatorPending = false;
    }
  });
}

/** The library path (appendBatch): an unknown client outcome leaves the attempt open. */
async function appendInProcess(run: StreamRun, a: Attempt, fence: Fence, label: string): Promise<void> {
  const op = run.ops.invoke(label, 'append', { attempt: a.id, records: a.records });
  let outcome: AppendOutcome | undefined;
  try {
    outcome = await appendBatch(
      { ...run.lane, attemptId: a.id, session: fence, records: a.records.map(encode) },
      run.ports,
    );
  } catch (error) {
    completed(op, undefined, error);
    run.s.note(`${label} ${a.id} threw ${messageOf(error)}`);
    run.h.check(TRANSIENT.has(nameOf(error)), `${label} ${a.id} threw ${messageOf(error)}: not an unknown outcome`);
    return;
  }
  completed(op, outcome);
  told(run, a, outcome, label);
}

export function appendBatchActor(run: StreamRun, a: Attempt, fence: Fence, label: string): void {
  act(run, label, () => appendInProcess(run, a, fence, label));
}

/** A new owner session (re-run with the same session id while its outcome is unknown), then, maybe, its own append. */
export function takeoverActor(run: StreamRun, index: number, then?: Attempt): void {
  const label = `takeover:w${index}`;
  act(run, label, async () => {
    const session = `sched-${run.s.seed}-writer-${index}-session`;
    const input = { ...run.lane, owner: `writer-${index}`, session };
    let result;
    for (let round = 0; !result; round++) {
      try {
        result = await takeoverLane(input, run.ports);
      } catch (error) {
        run.s.note(`${label} threw ${messageOf(error)}; again with the same session`);
        run.h.check(TRANSIENT.has(nameOf(error)) && round < 4, `${label} threw ${messageOf(error)}`);
      }
    }
    const previous = run.h.writers[run.h.owner]!.fence.epoch;
    run.h.check(result.epoch === previous + 1, `${label}: epoch ${result.epoch} after ${previous}`);
    const fence = { owner: input.owner, session, epoch: result.epoch };
    run.h.writers.push({ ...run.h.writers[0]!, index, fence });
    run.h.owner = index;
    run.takeovers.push({ epoch: result.epoch, committedEnd: result.committedEnd });
    run.s.count('takeover', `${label}: epoch ${result.epoch} at committed end ${result.committedEnd}`);
    if (then) await appendInProcess(run, then, fence, `append:w${index}`);
  });
}

export function trimActor(run: StreamRun, to: number): void {
  act(run, `trim:${to}`, () => trimOnce(run, to));
}

/** An operator's trim, then (in the same actor, so its scan sees the trim) the stream-gc flow. */
export function trimThenGcActor(run: StreamRun, to: number, advanceSeconds: number): void {
  act(run, `trim:${to}+gc:+${advanceSeconds}s`, async () => {
    await trimOnce(run, to);
    await gcOnce(run, advanceSeconds, `gc:+${advanceSeconds}s`);
  });
}

async function trimOnce(run: StreamRun, to: number): Promise<void> {
  try {
    const r = await trimLane({ ...run.lane, to }, run.ports);
    run.h.check(r.trimOffset === to, `trim to ${to} left the trim offset at ${r.trimOffset}`);
    run.h.trim = Math.max(run.h.trim, to);
    run.h.head.trimOffset = Math.max(run.h.head.trimOffset, to);
    run.s.note(`trim → ${r.trimOffset} (was ${r.previousTrimOffset})`);
  } catch (error) {
    run.s.note(`trim to ${to} threw ${messageOf(error)}`);
    run.h.check(TRANSIENT.has(nameOf(error)), `trim to ${to} threw ${messageOf(error)}`);
  }
}

/** The stream-gc flow after moving the clock `advanceSeconds` (past or short of the grace). */
export function gcActor(run: StreamRun, advanceSeconds: number): void {
  const label = `gc:+${advanceSeconds}s`;
  act(run, label, () => gcOnce(run, advanceSeconds, label));
}

async function gcOnce(run: StreamRun, advanceSeconds: number, label: string): Promise<void> {
  try {
    run.h.actors.clock.advance(advanceSeconds * 1000);
    const invocations = lambdaInvocations(run.s, label);
    const r = await runFlow(
      'stream-gc',
      { ...run.lane, grace: `${run.graceSeconds}s` },
      { ports: run.gcPorts, retryIntervalMs: 0, invoke: invocations.invoke },
    );
    const totals = (r.output as { totals?: { waitingOnLeases?: number } } | undefined)?.totals;
    run.s.note(
      `${label} ${r.status}${r.error ? ` ${r.error}: ${r.cause}` : ''}${totals ? ` ${JSON.stringify(totals)}` : ''}`,
    );
    // Coverage: the drain met a reader's lease on a marked object (and left the object to a later run).
    if (totals?.waitingOnLeases) run.s.count('drain-meets-lease');
    run.h.check(
      r.status === 'SUCCEEDED' || EXHAUSTED.has(r.error ?? ''),
      `the GC flow failed with ${r.error}: ${r.cause}`,
    );
  } finally {
    run.gcEnded = true;
  }
}
