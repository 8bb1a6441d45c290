import { CutpointError, OutcomeUnknownError } from '../domain/errors.js';
import { LaneSuspendedError } from '../domain/stream-errors.js';
import { rerunTransient } from '../engine/rerun.js';
import type { Fence } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
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

/**
 * The append flow (statemachines/stream-append.asl.json) as a library call, for producers
 * that embed cutpoint: the same steps in the same order with the same recovery —
 * WriteWal, CommitHead, then SuspendLane (unknown outcome) or RetireAttempt (refused for
 * good). One WAL PUT and one head CAS (two item writes) per batch; generation 0 and the
 * index are derived off the acknowledged path (gen0-batch.ts, reads).
 * Without `known` the head is loaded and the attempt's evidence checked first (a caller's
 * attempt id may have been used before); a LaneWriter passes what it carries (`known`)
 * and an attempt id it minted, and the happy path reads nothing.
 */
export async function appendBatch(batch: AppendBatchInput, ports: Ports, known?: KnownHead): Promise<HeadCommitted> {
  const ref = { stream: batch.stream, partition: batch.partition, attemptId: batch.attemptId, session: batch.session };
  const records = batch.records.map((r) => Buffer.from(r).toString('base64'));
  let written: WalWritten | undefined;
  try {
    // Only the first PUT is bound to the carried head; a rerun re-reads the exact evidence.
    let first = true;
    written = await rerunTransient(() => writeWal({ ...ref, records }, ports, first ? ((first = false), known) : undefined));
    const step = written;
    return await rerunTransient(() => commitHead(step, ports), ['Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);
  } catch (error) {
    if (error instanceof OutcomeUnknownError || error instanceof LaneSuspendedError || (written && isTransient(error))) {
      return rerunTransient(() => suspendLane(written ?? ref, ports));
    }
    if (error instanceof CutpointError && NOT_COMMITTED.has(error.name)) {
      return rerunTransient(() => retireAttempt({ ...ref, reason: error.name }, ports));
    }
    throw error;
  }
}

function isTransient(error: unknown): boolean {
  return error instanceof CutpointError && (error.name === 'Cutpoint.WorkerCrashed' || error.name === 'Cutpoint.EffectFailed');
}
