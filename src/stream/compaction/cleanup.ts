import { CutpointError } from '../../domain/errors.js';
import { generationKeys } from '../../domain/generation.js';
import type { LaneRef } from '../../domain/stream.js';
import { loadHead, loadRecord } from '../../generation/load.js';
import { readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { COMPACTION_CUT_POINTS } from './cut-points.js';
import { compactionKeys, sameCompaction, type CompactionRecord } from './model.js';

/**
 * Task cleanup, task-first and plan-second (seed 002, "Materialization failures"): the
 * generation mechanism's workflow metadata for the compaction is its task item; it is
 * deleted only after verifying the committed generation (record COMMITTED by this exact
 * task, the root head at it), the output object (exact key and full SHA-256), the
 * `compaction#<end>` record (exact identity) and the mark past the run. The generation
 * record and root head are not workflow metadata — they are the committed generation
 * itself — and stay. The compaction has no separate plan item (the plan is recomputed
 * from the durable task and commit records), so there is no plan step to clean.
 * Returns whether the task is gone; anything unverified leaves it in place.
 */
export async function cleanupCompactionTask(ports: Ports, lane: LaneRef, expected: CompactionRecord): Promise<boolean> {
  const taskKey = generationKeys.task(expected.root, expected.taskId);
  const [task, record, head, compaction, mark] = await Promise.all([
    ports.authority.get(taskKey),
    loadRecord(ports, expected.root, expected.generation),
    loadHead(ports, expected.root),
    ports.authority.get(compactionKeys.record(lane, expected.end)),
    ports.authority.get(compactionKeys.mark(lane)),
  ]);
  if (!task) return true;
  const committed =
    record?.state === 'COMMITTED' &&
    record.taskId === expected.taskId &&
    record.objectKey === expected.objectKey &&
    record.sha256 === expected.sha256 &&
    record.sourceSetDigest === expected.sourceSetDigest &&
    head?.generation === expected.generation &&
    head.taskId === expected.taskId;
  if (!committed || !compaction || !sameCompaction(compaction as unknown as CompactionRecord, expected)) return false;
  if (typeof mark?.next !== 'number' || mark.next < expected.end) return false;
  await readVerified(ports.objects, expected.objectKey, expected.sha256);
  const deleted = await ports.authority.delete(COMPACTION_CUT_POINTS.compactCleanup, taskKey, { version: task.version as number });
  if (deleted.status === 'APPLIED') return true;
  // UNKNOWN or CONFLICT: gone now is done; still there is left for the next run.
  return !(await ports.authority.get(taskKey));
}

/**
 * A run whose cleanup failed (after its record and mark) leaves its task behind; the next
 * run's planning starts past it, so the next run finishes that cleanup first: the
 * compaction ending at the mark, if its task is still there. Never fails the run.
 */
export async function cleanupPrevious(ports: Ports, lane: LaneRef): Promise<void> {
  const mark = await ports.authority.get(compactionKeys.mark(lane));
  if (typeof mark?.next !== 'number' || mark.next === 0) return;
  const previous = await ports.authority.get(compactionKeys.record(lane, mark.next));
  if (previous) await cleanupSafely(ports, lane, previous as unknown as CompactionRecord);
}

/** Cleanup after the run's effects are durable: a failure only leaves the task for the next run. */
export async function cleanupSafely(ports: Ports, lane: LaneRef, record: CompactionRecord): Promise<boolean> {
  try {
    return await cleanupCompactionTask(ports, lane, record);
  } catch (error) {
    if (error instanceof CutpointError) return false;
    throw error;
  }
}
