import { CutpointError, OutcomeUnknownError } from '../domain/errors.js';
import { type AppendOutcome } from '../domain/stream.js';
import { LaneSuspendedError } from '../domain/stream-errors.js';
import { rerunTransient } from '../engine/rerun.js';
import type { Fence } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { commitHead } from './append/commit-head.js';
import { materializeGen0 } from './append/materialize-gen0.js';
import { recordIntent } from './append/record-intent.js';
import { retireAttempt } from './append/retire-attempt.js';
import { suspendLane } from './append/suspend-lane.js';
import { writeIndex } from './append/write-index.js';
import { writeWal } from './append/write-wal.js';

export interface AppendBatchInput {
  stream: string;
  partition: number;
  attemptId: string;
  session: Fence;
  records: readonly Uint8Array[];
}

/** Refusals that prove the attempt did not and will not commit. */
const NOT_COMMITTED = new Set(['Stream.Fenced', 'Stream.AttemptAborted']);

/**
 * The append flow (statemachines/stream-append.asl.json) as a library call, for producers
 * that embed cutpoint: the same steps in the same order with the same recovery. One WAL
 * PUT and one head CAS per batch (group commit), then index and generation 0.
 */
export async function appendBatch(batch: AppendBatchInput, ports: Ports): Promise<AppendOutcome> {
  const ref = { stream: batch.stream, partition: batch.partition, attemptId: batch.attemptId, session: batch.session };
  const records = batch.records.map((r) => Buffer.from(r).toString('base64'));
  let committed: AppendOutcome;
  try {
    const wal = await rerunTransient(() => writeWal({ ...ref, records }, ports));
    await rerunTransient(() => recordIntent(wal, ports));
    committed = await rerunTransient(() => commitHead(ref, ports), ['Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);
  } catch (error) {
    if (error instanceof OutcomeUnknownError || error instanceof LaneSuspendedError) {
      const outcome = await rerunTransient(() => suspendLane(ref, ports));
      if (outcome.status !== 'KNOWN_COMMITTED') return outcome;
      committed = outcome;
    } else if (error instanceof CutpointError && NOT_COMMITTED.has(error.name)) {
      return rerunTransient(() => retireAttempt({ ...ref, reason: error.name }, ports));
    } else {
      throw error;
    }
  }
  // KNOWN_COMMITTED from here on: index and generation 0 are repairs, never a reason to
  // report the append as anything but committed.
  const pendingRepairs: AppendOutcome['pendingRepairs'] = [];
  const pending = (repair: 'index' | 'gen0') => (error: unknown) => {
    if (!(error instanceof CutpointError)) throw error; // a bug, not a failed repair
    pendingRepairs.push(repair);
  };
  await rerunTransient(() => writeIndex(ref, ports)).catch(pending('index'));
  await rerunTransient(() => materializeGen0(ref, ports)).catch(pending('gen0'));
  return pendingRepairs.length ? { ...committed, pendingRepairs } : committed;
}
