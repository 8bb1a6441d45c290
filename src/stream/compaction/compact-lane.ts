import { writeExactlyOnce } from '../../authority/resolve.js';
import { CutpointError, IdentityConflictError, OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import { taskOf } from '../../domain/generation.js';
import { laneKeys, validateLane, type LaneRef } from '../../domain/stream.js';
import { rerunTransient } from '../../engine/rerun.js';
import { commitGenerationInProcess } from '../../generation/commit-in-process.js';
import { registerTask } from '../../generation/register-task.js';
import type { Ports } from '../../ports/index.js';
import { cleanupCompactionTasks } from './cleanup.js';
import { COMPACTION_CUT_POINTS } from './cut-points.js';
import { compactionKeys, sameCompaction, type CompactionRecord } from './model.js';
import { writeCompactedObject } from './output.js';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_RANGES, MAX_RANGES_PER_RUN, planCompaction } from './plan.js';

export interface CompactLaneResult extends LaneRef {
  /** The run compacted now (or found compacted); absent when there was nothing to compact. */
  compacted?: Pick<
    CompactionRecord,
    'start' | 'end' | 'root' | 'generation' | 'objectKey' | 'sha256' | 'recordCount'
  > & { ranges: number };
  /** The lane's compaction mark after this run. */
  next: number;
  /** Whether the generation task's workflow metadata was removed (task cleanup). */
  taskCleaned: boolean;
}

/**
 * Compacts the lane's next run of committed ranges into one generation (issue #11):
 * register the deterministic task → write the one-batch output → PREPARED → COMMITTED
 * (the generation-commit mechanism, in-process) → `compaction#<end>` put-if-absent by
 * exact identity → the mark moves by CAS → task cleanup (from the mark's cleanup
 * cursor). Every step reloads exact identity on a lost answer, so a re-run after any
 * failure continues the same task and output and never allocates a second generation.
 */
export async function compactLane(input: unknown, ports: Ports): Promise<CompactLaneResult> {
  const lane = validateLane(input);
  const maxRanges = knob(input, 'maxRanges', DEFAULT_MAX_RANGES);
  const maxBytes = knob(input, 'maxBytes', DEFAULT_MAX_BYTES);
  await catchUpMark(ports, lane);
  await cleanupCompactionTasks(ports, lane);
  const plan = await planCompaction(ports, lane, maxRanges, maxBytes);
  if (!plan) {
    const mark = await ports.authority.get(compactionKeys.mark(lane));
    return { ...lane, next: typeof mark?.next === 'number' ? mark.next : 0, taskCleaned: false };
  }
  await rerunTransient(() => registerTask(plan.spec, ports));
  const written = await rerunTransient(() => writeCompactedObject(ports, plan.spec, plan.commits));
  const generation = await commitGenerationInProcess(plan.spec, ports);
  if (
    generation.outcome !== 'COMMITTED' ||
    generation.objectKey !== written.objectKey ||
    generation.sha256 !== written.sha256
  ) {
    throw new CutpointError(
      'Stream.CompactionNotCommitted',
      'stream.compaction_not_committed',
      `compaction of [${plan.start}, ${plan.end}) did not commit (${generation.reason ?? generation.outcome})`,
    );
  }
  const record: CompactionRecord = {
    ...lane,
    start: plan.start,
    end: plan.end,
    root: plan.spec.root,
    generation: plan.spec.generation,
    taskId: plan.spec.taskId,
    objectKey: written.objectKey,
    sha256: written.sha256,
    size: written.size,
    recordCount: written.recordCount,
    sourceSetDigest: taskOf(plan.spec).sourceSetDigest,
    compactedAt: ports.clock.now().toISOString(),
  };
  const key = compactionKeys.record(lane, plan.end);
  const cut = COMPACTION_CUT_POINTS.compactRecord;
  const put = await rerunTransient(() =>
    writeExactlyOnce(
      ports.authority,
      cut,
      key,
      () => ports.authority.put(cut, { ...key, ...record }, 'absent'),
      (item) => sameCompaction(item as unknown as CompactionRecord, record),
    ),
  );
  if (put.status === 'CONFLICT')
    throw new IdentityConflictError('stream.compaction_identity_conflict', `compaction#${plan.end} names another run`);
  const next = await rerunTransient(() => moveMark(ports, lane, plan.end));
  const taskCleaned = (await cleanupCompactionTasks(ports, lane)).cleanedTo >= plan.end;
  const { start, end, root, objectKey, sha256, recordCount } = record;
  return {
    ...lane,
    compacted: {
      start,
      end,
      root,
      generation: record.generation,
      objectKey,
      sha256,
      recordCount,
      ranges: plan.commits.length,
    },
    next,
    taskCleaned,
  };
}

/**
 * The mark is a cache of the last `compaction#` record's end. A run whose mark CAS failed
 * left it behind its record; planning from max(mark, trim) alone could then start inside
 * that committed run (once the trim passes its start) and compact part of it twice. So
 * every run first moves the mark past any record beyond it (their tasks are cleaned from
 * the mark's cleanup cursor, cleanup.ts).
 */
async function catchUpMark(ports: Ports, lane: LaneRef): Promise<void> {
  const mark = await ports.authority.get(compactionKeys.mark(lane));
  const at = typeof mark?.next === 'number' ? mark.next : 0;
  const later = (await ports.authority.query(laneKeys.pk(lane), 'compaction#', {
    startAfterSk: compactionKeys.after(at),
    limit: 100,
  })) as unknown as CompactionRecord[];
  if (!later.length) return;
  await rerunTransient(() => moveMark(ports, lane, later.at(-1)!.end));
}

/** The mark moves to `end` by CAS; a lost answer or a race is settled by reloading it. */
async function moveMark(ports: Ports, lane: LaneRef, end: number): Promise<number> {
  const key = compactionKeys.mark(lane);
  const cut = COMPACTION_CUT_POINTS.compactMark;
  for (let round = 0; round < 3; round++) {
    const mark = await ports.authority.get(key);
    const at = typeof mark?.next === 'number' ? mark.next : 0;
    if (at >= end) return at;
    const moved = mark
      ? await ports.authority.update(cut, key, { version: mark.version as number }, { next: end })
      : await ports.authority.put(cut, { ...key, ...lane, next: end }, 'absent');
    if (moved.status === 'APPLIED') return end;
    // UNKNOWN or CONFLICT: the next round reloads the exact mark.
  }
  throw new OutcomeUnknownError(
    cut,
    `${cut}: the compaction mark of ${lane.stream}/${lane.partition} did not settle at ${end}`,
  );
}

function knob(input: unknown, name: 'maxRanges' | 'maxBytes', fallback: number): number {
  const value = (input as Record<string, unknown>)[name];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw new ValidationError('stream.invalid_compaction_knob', `${name} must be a positive integer`);
  if (name === 'maxRanges' && (value as number) < 2)
    throw new ValidationError('stream.invalid_compaction_knob', 'maxRanges must be at least 2');
  if (name === 'maxRanges' && (value as number) > MAX_RANGES_PER_RUN)
    throw new ValidationError('stream.invalid_compaction_knob', `maxRanges must be at most ${MAX_RANGES_PER_RUN}`);
  return value as number;
}
