import { CutpointError, OutcomeUnknownError } from '../domain/errors.js';
import { LaneSuspendedError } from '../domain/stream-errors.js';
import { rerunTransient } from '../engine/rerun.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import type { AttemptRef } from './append-input.js';
import { commitHead, type HeadCommitted } from './append/commit-head.js';
import { retireAttempt } from './append/retire-attempt.js';
import { suspendLane } from './append/suspend-lane.js';
import { writeWal, type KnownHead, type WalWritten } from './append/write-wal.js';

export interface AppendBatchInput {
  stream: string;
  partition: number;
  attemptId: string;
  session: Fence;
  records: readonly Uint8Array[];
}

/** Refusals that prove the attempt did not commit (and are made durable by RetireAttempt). */
const NOT_COMMITTED = new Set(['Stream.Fenced', 'Stream.AttemptAborted']);
const TRANSIENT = new Set(['Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);

/**
 * The append flow (statemachines/stream-append.asl.json) as a library call, for producers
 * that embed cutpoint: the same steps in the same order with the same recovery —
 * WriteWal, CommitHead, then SuspendLane (unknown outcome) or RetireAttempt (refused for
 * good). One WAL PUT and one head CAS (two item writes) per batch; generation 0 and the
 * index are derived off the acknowledged path (gen0-batch.ts, reads).
 * Without `known` the head is loaded and the attempt's evidence checked first (a caller's
 * attempt id may have been used before); a LaneWriter passes what it carries (`known`)
 * with an attempt id it minted, and the happy path reads nothing.
 */
export async function appendBatch(batch: AppendBatchInput, ports: Ports, known?: KnownHead): Promise<HeadCommitted> {
  const ref: AttemptRef = {
    stream: batch.stream,
    partition: batch.partition,
    attemptId: batch.attemptId,
    session: batch.session,
  };
  const records = batch.records.map((r) => Buffer.from(r).toString('base64'));
  let written: WalWritten;
  try {
    // Only the first PUT is bound to the carried head; a rerun re-reads the exact evidence.
    let first = true;
    written = await rerunTransient(() =>
      writeWal({ ...ref, records }, ports, first ? ((first = false), known) : undefined),
    );
  } catch (error) {
    // No head CAS was issued. Unknown: spend the attempt (SuspendLane without a WAL binding).
    if (error instanceof OutcomeUnknownError || error instanceof LaneSuspendedError)
      return rerunTransient(() => suspendLane(ref, ports));
    return settleRefusal(ref, error, ports);
  }
  return commitAndSettle(written, ports);
}

/** CommitHead, then the flow's Catch: SuspendLane on an unknown outcome, RetireAttempt on a refusal. */
export async function commitAndSettle(written: WalWritten, ports: Ports): Promise<HeadCommitted> {
  try {
    return await rerunTransient(() => commitHead(written, ports), [...TRANSIENT]);
  } catch (error) {
    const unknown =
      error instanceof OutcomeUnknownError ||
      error instanceof LaneSuspendedError ||
      (error instanceof CutpointError && TRANSIENT.has(error.name));
    if (unknown) return rerunTransient(() => suspendLane(written, ports));
    return settleRefusal(written, error, ports);
  }
}

async function settleRefusal(ref: AttemptRef, error: unknown, ports: Ports): Promise<HeadCommitted> {
  if (error instanceof CutpointError && NOT_COMMITTED.has(error.name)) {
    return rerunTransient(() => retireAttempt({ ...ref, reason: error.name }, ports));
  }
  throw error;
}
