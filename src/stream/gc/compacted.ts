import { generationKeys, type GenerationTask } from '../../domain/generation.js';
import { decodeBatch } from '../../domain/record-batch.js';
import { laneKeys } from '../../domain/stream.js';
import { loadRecord } from '../../generation/load.js';
import { readVerified } from '../../objects/exact-object.js';
import { compactionKeys, compactionRootOf, type CompactionRecord } from '../compaction/model.js';
import type { FateContext } from './liveness.js';
import type { Fate } from './model.js';

/** A compaction's output under the lane's generations: `c<start>/g<generation>/<taskId>.bin` (src/stream/compaction/model.ts). */
const COMPACTED = /^c(\d{16})\/g(\d{10})\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})\.bin$/;

export function isCompactedKey(rest: string): boolean {
  return COMPACTED.test(rest);
}

/**
 * The fate of a compaction's output object (issue #11), from the authority only:
 * - named: the `compaction#` record of its run names exactly this object (key, root,
 *   generation, sha256) and the slot's generation record is COMMITTED with the same key
 *   and sha256 → TRIMMED when the run's end is at or below the trim, else LIVE;
 * - DEAD when nothing names it and its own task can never commit it: the slot's record is
 *   this task's and ABORTED, the slot is COMMITTED by another task, or there is no record
 *   and the task is ABORTED (an aborted task cannot prepare: the prepare transaction
 *   checks the task's version, and compact-lane writes `compaction#` only for a COMMITTED
 *   generation with this exact key);
 * - TRIMMED, named or not, when the slot is COMMITTED with this object and its bytes
 *   (verified against the record's SHA-256) end at or below the trim: a run that committed
 *   but never wrote `compaction#` (it crashed, and the trim then passed its start so no
 *   run plans it again) holds only offsets no read may return;
 * - MAY_COMMIT for everything else: a PREPARED record, an OPEN task, a COMMITTED
 *   generation whose `compaction#` is not written yet, an object whose metadata does not
 *   bind it to the slot and task its key names, an inconsistent authority.
 */
export async function compactedFate(ctx: FateContext, key: string, rest: string): Promise<Fate> {
  const match = COMPACTED.exec(rest);
  if (!match) return 'MAY_COMMIT';
  const start = Number(match[1]);
  const generation = Number(match[2]);
  const taskId = match[3]!;
  const root = compactionRootOf(ctx.lane, start);
  const [object, record, naming] = await Promise.all([
    ctx.ports.objects.head(key),
    loadRecord(ctx.ports, root, generation),
    namingRecord(ctx, start, key),
  ]);
  const m = object?.metadata;
  if (!m || m.root !== root || m.generation !== String(generation) || m['task-id'] !== taskId) return 'MAY_COMMIT';
  if (naming) {
    const exact = naming.root === root && naming.generation === generation && naming.taskId === taskId;
    const committed =
      record?.state === 'COMMITTED' &&
      record.taskId === taskId &&
      record.objectKey === key &&
      record.sha256 === naming.sha256;
    if (!exact || !committed) return 'MAY_COMMIT';
    return naming.end <= ctx.head.trimOffset ? 'TRIMMED' : 'LIVE';
  }
  if (record) {
    if (record.taskId !== taskId || record.objectKey !== key)
      return record.state === 'COMMITTED' ? 'DEAD' : 'MAY_COMMIT';
    if (record.state === 'ABORTED') return 'DEAD';
    if (
      record.state === 'COMMITTED' &&
      start < ctx.head.trimOffset &&
      (await endOf(ctx, key, record.sha256, start)) <= ctx.head.trimOffset
    )
      return 'TRIMMED';
    return 'MAY_COMMIT';
  }
  const task = (await ctx.ports.authority.get(generationKeys.task(root, taskId))) as unknown as
    GenerationTask | undefined;
  return task?.state === 'ABORTED' && task.objectKey === key && task.generation === generation ? 'DEAD' : 'MAY_COMMIT';
}

/**
 * The `compaction#` record naming this exact object, if any. Compactions of a lane are
 * disjoint (each run starts at the mark or the trim), so a run starting at `start` is the
 * first record ending after it.
 */
async function namingRecord(ctx: FateContext, start: number, key: string): Promise<CompactionRecord | undefined> {
  const [found] = (await ctx.ports.authority.query(laneKeys.pk(ctx.lane), 'compaction#', {
    startAfterSk: compactionKeys.after(start),
    limit: 1,
  })) as unknown as CompactionRecord[];
  return found?.objectKey === key && found.start === start ? found : undefined;
}

/** The end offset of a committed compaction's bytes (verified by SHA-256); unreadable is +Infinity: uncertain is kept. */
async function endOf(ctx: FateContext, key: string, sha256: string, start: number): Promise<number> {
  try {
    return start + decodeBatch((await readVerified(ctx.ports.objects, key, sha256)).bytes).length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
