import { CutpointError, ValidationError } from '../../domain/errors.js';
import { laneKeys, validateLane, type CommitRecord, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { compactionKeys } from '../compaction/model.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';
import { cleanupGen0Tasks, gen0MarkKey } from './gen0-cleanup.js';
import { materializeRange } from './materialize-gen0.js';

export interface Gen0BatchResult extends LaneRef {
  /** Ranges whose generation 0 committed (or already had) in this run. */
  materialized: Array<{ start: number; end: number; objectKey: string }>;
  /** The offset the next run continues from (the lane's generation-0 mark). */
  next: number;
  /** The range this run stopped at because its generation failed (a repair for the next run). */
  failed?: { start: number; end: number; error: string };
  /**
   * Ranges whose generation 0 this run found proven ABORTED (why: the abort's reason): passed,
   * the mark moved past them. Present only when there are some; the flow then fails naming them.
   */
  aborted?: Array<{ start: number; end: number; reason: string }>;
  /** Task cleanup after the mark (gen0-cleanup.ts): tasks removed, the first that refused (kept), or why it stopped. */
  cleanup: { tasks: number; refused?: { end: number; reason: string }; failed?: string };
}

const DEFAULT_MAX = 32;
/** The most ranges one run takes on (`cutpoint stream materialize --max`, the flow's `max`). */
export const MAX_MATERIALIZE = 1000;

/** `max`: absent → DEFAULT_MAX; otherwise an integer in [1, MAX_MATERIALIZE], never coerced (a refused input writes nothing). */
function maxOf(input: unknown): number {
  const value = (input as { max?: unknown }).max;
  if (value === undefined) return DEFAULT_MAX;
  if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > MAX_MATERIALIZE) {
    throw new ValidationError('stream.invalid_materialize_knob', `max must be an integer in [1, ${MAX_MATERIALIZE}]`);
  }
  return value as number;
}

/**
 * Generation 0 off the acknowledged path: asynchronous and batched. One run takes up to
 * `max` committed ranges from the lane's generation-0 mark (`gen0#mark`, the end of the
 * last range materialized) in offset order, materializes each through the
 * generation-commit mechanism (deterministic task: root from the range, task id from the
 * attempt, the WAL object as the only source — a failed or repeated run reuses the same
 * task and output, the primary WAL is never rewritten), links it into the range's index
 * entry, and moves the mark forward by CAS. A range that fails stops the run there; the
 * next run resumes at it. A range whose generation 0 is proven ABORTED (its WAL object did
 * not verify when copied) is passed instead: the abort is final for its deterministic task,
 * so stopping there would stop every later run at it. It keeps its WAL object as its only
 * copy until a compaction (which reads the WAL object, once its bytes verify again) covers
 * it; the run reports it in `aborted` and the flow fails naming it (docs/stream-log.md
 * "The stream log"). Readers never wait for generation 0: the WAL object serves a range with no
 * generation 0, and a PREPARED generation is never served (read/evidence.ts). Then the
 * tasks of the ranges below the mark are cleaned (gen0-cleanup.ts), task-first and
 * plan-second; a refusal or failure there keeps the task for a later run, never fails this one.
 */
export async function materializeGen0Batch(input: unknown, ports: Ports): Promise<Gen0BatchResult> {
  const lane = validateLane(input);
  const max = maxOf(input);
  const markKey = gen0MarkKey(lane);
  const mark = await ports.authority.get(markKey);
  let next = typeof mark?.next === 'number' ? mark.next : 0;
  const result: Gen0BatchResult = { ...lane, materialized: [], next, cleanup: { tasks: 0 } };
  // Nothing to materialize below the trim, nor where a compaction already serves the
  // range: GC may have collected those WAL objects, and the mark must move past them.
  const [head, compacted] = await Promise.all([loadHead(ports, lane), ports.authority.get(compactionKeys.mark(lane))]);
  const skipTo = Math.max(head.trimOffset, typeof compacted?.next === 'number' ? compacted.next : 0);
  const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#', {
    startAfterSk: laneKeys.commitAfter(Math.max(next, skipTo)),
    limit: max,
  })) as unknown as CommitRecord[];
  if (skipTo > next && commits[0]) next = commits[0].start;
  else if (skipTo > next) next = Math.min(skipTo, head.committedEnd);
  for (const commit of commits) {
    try {
      const made = await materializeRange(ports, lane, commit);
      if ('aborted' in made)
        (result.aborted ??= []).push({ start: commit.start, end: commit.end, reason: made.aborted });
      else result.materialized.push({ start: commit.start, end: commit.end, objectKey: made.gen0.objectKey });
      next = commit.end;
    } catch (error) {
      if (!(error instanceof CutpointError)) throw error; // a bug, not a failed generation
      result.failed = { start: commit.start, end: commit.end, error: error.name };
      break;
    }
  }
  if (next !== result.next) {
    const moved = mark
      ? await ports.authority.update(STREAM_CUT_POINTS.gen0, markKey, { version: mark.version }, { next })
      : await ports.authority.put(STREAM_CUT_POINTS.gen0, { ...markKey, ...lane, next }, 'absent');
    // CONFLICT or UNKNOWN: a concurrent run moved it; the work done is idempotent either way.
    if (moved.status === 'APPLIED') result.next = next;
  }
  const cleanup = await cleanupGen0Tasks(ports, lane);
  result.cleanup = {
    tasks: cleanup.cleaned,
    ...(cleanup.refused ? { refused: cleanup.refused } : {}),
    ...(cleanup.failed ? { failed: cleanup.failed } : {}),
  };
  return result;
}
