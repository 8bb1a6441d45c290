import { expect } from 'vitest';
import { laneKeys, type CommitRecord } from '../../src/domain/stream.js';
import { abortGeneration } from '../../src/generation/abort.js';
import { recordPreparedGeneration } from '../../src/generation/record-prepared.js';
import { registerGenerationTask } from '../../src/generation/register-task.js';
import type { Ports } from '../../src/ports/index.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { writeCompactedObject } from '../../src/stream/compaction/output.js';
import { DEFAULT_MAX_BYTES, planCompaction } from '../../src/stream/compaction/plan.js';
import { trimLane } from '../../src/stream/trim.js';
import { appendOne, compactionsOf, laneWithRanges } from './stream-compaction-world.js';
import { countingPorts, crashedReader, MovableClock, putOrphan, type GcWorld } from './stream-gc-world.js';

/** The compacted objects of the world, by what GC must do with them. */
export interface CompactedObjects {
  /** A committed compaction wholly below the trim: TRIMMED. */
  trimmed: string;
  /** The output of an ABORTED compaction task that no `compaction#` names: DEAD. */
  aborted: string;
  /** A committed compaction reaching above the trim: LIVE. */
  live: string;
  /** The output of a PREPARED (uncommitted, still open) compaction: MAY_COMMIT, kept. */
  prepared: string;
}

/**
 * A GC world with compactions (issue #11), on the real stores. Ranges (offsets):
 * r0 [0,2) r1 [2,5) r2 [5,9) r3 [9,11) r4 [11,14) r5 [14,16).
 * - c0 slot 0: [0,5) written then ABORTED (its output DEAD); c0 slot 1: [0,5) COMMITTED,
 *   then trimmed past (TRIMMED);
 * - c5: [5,11) COMMITTED above the trim (LIVE; WAL r2, r3 are SUPERSEDED by it);
 * - c11: [11,16) PREPARED, never committed (MAY_COMMIT; WAL r4, r5 stay LIVE);
 * - trim at 5, one orphaned WAL object (DEAD).
 * With grace 0s everything collectible goes in one run; the readable records are 5..15.
 */
export async function compactedGcWorld(base: Ports, label: string): Promise<GcWorld & { compacted: CompactedObjects }> {
  const clock = new MovableClock();
  const deletes = new Map<string, number>();
  const ports = countingPorts(base, clock, deletes);
  const { lane, writer, acknowledged } = await laneWithRanges(ports, label, 5);
  acknowledged.push(await appendOne(writer, 2));
  const records = acknowledged.flatMap((a) => a.records);

  const aborted = await uncommittedCompaction(ports, lane, 'abort');
  await compactLane({ ...lane, maxRanges: 2 }, ports); // c0 slot 1: [0,5)
  await compactLane({ ...lane, maxRanges: 2 }, ports); // c5: [5,11)
  const prepared = await uncommittedCompaction(ports, lane, 'prepare'); // c11: [11,16)
  const compactions = await compactionsOf(ports, lane);
  expect(compactions.map((c) => [c.start, c.end])).toEqual([
    [0, 5],
    [5, 11],
  ]);
  await trimLane({ ...lane, to: 5 }, ports);
  const orphans = await putOrphan(ports, lane, 'dead-1');
  await crashedReader(ports, lane, clock);

  const commits = (await ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  const wal = commits.map((c) => c.walKey);
  const compacted: CompactedObjects = {
    trimmed: compactions[0]!.objectKey,
    aborted,
    live: compactions[1]!.objectKey,
    prepared,
  };
  return {
    lane,
    ports,
    clock,
    deletes,
    live: [wal[4]!, wal[5]!, compacted.live, compacted.prepared],
    trimmed: [wal[0]!, wal[1]!, compacted.trimmed],
    // Collectible after grace: orphaned bytes, the aborted compaction's output, the copies the live compaction superseded.
    orphans: [...orphans, compacted.aborted, wal[2]!, wal[3]!],
    readable: records.slice(5),
    readFrom: 5,
    compacted,
  };
}

/** The lane's next compaction (two ranges) registered and written, then aborted or left PREPARED. */
async function uncommittedCompaction(
  ports: Ports,
  lane: { stream: string; partition: number },
  end: 'abort' | 'prepare',
): Promise<string> {
  const plan = (await planCompaction(ports, lane, 2, DEFAULT_MAX_BYTES))!;
  expect(plan).toBeDefined();
  await registerGenerationTask(plan.spec, ports);
  const written = await writeCompactedObject(ports, plan.spec, plan.commits);
  const ref = { root: plan.spec.root, taskId: plan.spec.taskId };
  if (end === 'abort')
    expect(await abortGeneration({ ...ref, reason: 'test' }, ports)).toMatchObject({ outcome: 'ABORTED' });
  else
    await recordPreparedGeneration(
      { ...ref, objectKey: written.objectKey, sha256: written.sha256, size: written.size },
      ports,
    );
  return written.objectKey;
}
