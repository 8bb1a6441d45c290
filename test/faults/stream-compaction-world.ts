import { expect } from 'vitest';
import { decodeBatch } from '../../src/domain/record-batch.js';
import { generationKeys } from '../../src/domain/generation.js';
import { laneKeys, type LaneRef } from '../../src/domain/stream.js';
import { loadRootHead, loadRecord } from '../../src/generation/load.js';
import { readVerified } from '../../src/objects/exact-object.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { compactionKeys, type CompactionRecord } from '../../src/stream/compaction/model.js';
import { batchOf, newLane, type Acknowledged } from '../support/stream-fixture.js';

/** Shared by the compaction matrix and integration tests: a lane with committed ranges. */
export const bytesOf = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));
export const textOf = (rs: Array<{ data: string }>) => rs.map((r) => Buffer.from(r.data, 'base64').toString());

export async function laneWithRanges(
  ports: Ports,
  label: string,
  n: number,
): Promise<{ lane: LaneRef; session: Fence; writer: LaneWriter; acknowledged: Acknowledged[] }> {
  const { lane, session } = await newLane(ports, label);
  const writer = new LaneWriter(ports, lane, session);
  const acknowledged: Acknowledged[] = [];
  for (let i = 0; i < n; i++) acknowledged.push(await appendOne(writer, 2 + (i % 3)));
  return { lane, session, writer, acknowledged };
}

export async function appendOne(writer: LaneWriter, n: number): Promise<Acknowledged> {
  const attemptId = writer.nextAttemptId();
  const records = batchOf(attemptId, n);
  expect(await writer.append(bytesOf(records), attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
  return { attemptId, records };
}

export async function compactionsOf(ports: Ports, lane: LaneRef): Promise<CompactionRecord[]> {
  return (await ports.authority.query(laneKeys.pk(lane), 'compaction#')) as unknown as CompactionRecord[];
}

/**
 * The compaction invariant for one run: exactly one `compaction#` record for it, its
 * generation COMMITTED in slot 0 by the record's task with no second generation ever
 * allocated under the root, the object one verified batch of exactly the run's records in
 * order, the mark past it, and the task item cleaned up.
 */
export async function expectCompacted(
  ports: Ports,
  lane: LaneRef,
  records: string[],
  start: number,
  end: number,
): Promise<CompactionRecord> {
  const all = (await compactionsOf(ports, lane)).filter((c) => c.start < end && c.end > start);
  expect(all, `compactions over [${start}, ${end})`).toHaveLength(1);
  const c = all[0]!;
  expect(c).toMatchObject({ start, end, generation: 0, recordCount: end - start });
  expect(await loadRecord(ports, c.root, 0)).toMatchObject({
    state: 'COMMITTED',
    taskId: c.taskId,
    objectKey: c.objectKey,
    sha256: c.sha256,
  });
  expect(await loadRecord(ports, c.root, 1)).toBeUndefined();
  expect(await loadRootHead(ports, c.root)).toMatchObject({ generation: 0, taskId: c.taskId });
  const object = await readVerified(ports.objects, c.objectKey, c.sha256);
  expect(decodeBatch(object.bytes).map((r) => Buffer.from(r).toString())).toEqual(records.slice(start, end));
  expect((await ports.authority.get(compactionKeys.mark(lane)))?.next).toBeGreaterThanOrEqual(end);
  expect(await ports.authority.get(generationKeys.task(c.root, c.taskId))).toBeUndefined();
  return c;
}
