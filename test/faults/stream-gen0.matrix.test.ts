import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { outputKeyOf } from '../../src/domain/generation.js';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { laneKeys, rangeRootOf, type CommitRecord, type IndexEntry, type LaneRef } from '../../src/domain/stream.js';
import { commitGeneration } from '../../src/generation/commit.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { loadRecord } from '../../src/generation/load.js';
import { readVerified } from '../../src/objects/exact-object.js';
import type { Fence } from '../../src/domain/fence.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { batchOf, expectLaneInvariant, newLane, type Acknowledged } from '../support/stream-fixture.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { withKinds } from '../support/matrix-lane.js';
import { replaceObject } from '../support/replace-object.js';

/**
 * Generation 0 off the acknowledged path (docs/rules.md#generation-zero,
 * docs/rules.md#materialization-failures): appends acknowledge without it; a
 * batched run materializes many committed ranges through the generation-commit mechanism.
 * Every cut point of the run × every fault kind, then a clean run: every range has exactly
 * one committed generation 0 linked into its index entry, reads return exactly the
 * committed records, and a PREPARED generation is never served.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const bytes = (rs: string[]) => rs.map((r) => new TextEncoder().encode(r));

async function laneWithRanges(
  label: string,
  n: number,
): Promise<{ lane: LaneRef; session: Fence; acknowledged: Acknowledged[] }> {
  const { lane, session } = await newLane(stores.ports, label);
  const writer = new LaneWriter(stores.ports, lane, session);
  const acknowledged: Acknowledged[] = [];
  for (let i = 0; i < n; i++) {
    const attemptId = writer.nextAttemptId();
    const records = batchOf(attemptId, 2 + i);
    expect(await writer.append(bytes(records), attemptId)).toMatchObject({ status: 'KNOWN_COMMITTED' });
    acknowledged.push({ attemptId, records });
  }
  return { lane, session, acknowledged };
}

async function expectEveryRangeMaterialized(lane: LaneRef): Promise<void> {
  const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
  for (const c of commits) {
    const record = await loadRecord(stores.ports, rangeRootOf(lane, c.start), 0);
    expect(record, `generation 0 of [${c.start}, ${c.end})`).toMatchObject({
      state: 'COMMITTED',
      taskId: c.attemptId,
      sha256: c.walSha256,
      size: c.walSize,
    });
    // A server-side copy of the WAL object: byte-identical, verified, with the task's identity in its metadata.
    const copy = await readVerified(stores.ports.objects, record!.objectKey, c.walSha256);
    expect(copy.metadata).toMatchObject({ sha256: c.walSha256, 'task-id': c.attemptId, generation: '0' });
    const entry = (await stores.ports.authority.get(laneKeys.index(lane, c.end))) as unknown as IndexEntry;
    expect(entry).toMatchObject({
      start: c.start,
      walKey: c.walKey,
      gen0Key: record!.objectKey,
      gen0Sha256: record!.sha256,
    });
  }
}

/**
 * Every cut point a run crosses, from stream-materialize's spec (src/registry/flow-cut-points.ts;
 * generation 0 is a copy: generation.object.copy, never generation.object.put).
 */
const RUN_CUT_POINTS = matrixCutPoints('stream-materialize', {
  [GENERATION_CUT_POINTS.abortCas]:
    'crossed only by a copy that does not verify (a WAL object gone bad): the cases below, with no fault armed',
});

describe('the batched generation-0 run', () => {
  it('acknowledged appends need no generation 0: reads serve the WAL objects before any run', async () => {
    const { lane, acknowledged } = await laneWithRanges('before', 3);
    expect(await stores.ports.authority.query(laneKeys.pk(lane), 'index#')).toEqual([]);
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });

  it.each(withKinds(RUN_CUT_POINTS))('%s × %s*, then a clean run', async (cut, kind) => {
    const { lane, acknowledged } = await laneWithRanges(`g-${kind}`, 3);
    const injector = stores.faults.arm(`${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`);
    const faulted = await materializeGen0Batch(lane, stores.ports).catch((error: unknown) => ({ error }));
    stores.faults.disarm();
    expect(faulted).toBeDefined();
    expect(
      injector.fired.map((f) => f.cutPoint),
      'the run crosses the cut point',
    ).toContain(cut);
    const clean = await materializeGen0Batch(lane, stores.ports);
    expect(clean.failed).toBeUndefined();
    expect(clean.next).toBe(acknowledged.reduce((n, a) => n + a.records.length, 0));
    await expectEveryRangeMaterialized(lane);
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });

  it('a PREPARED generation 0 is invisible: its (other) bytes are never served, and without the WAL the range is unreadable, never those bytes', async () => {
    const { lane, acknowledged } = await laneWithRanges('prepared', 1);
    // The generation never commits: it stays PREPARED.
    stores.faults.arm(`${GENERATION_CUT_POINTS.commitCas}:fail*`);
    const run = await materializeGen0Batch(lane, stores.ports);
    stores.faults.disarm();
    expect(run.failed).toBeDefined();
    const [commit] = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const root = rangeRootOf(lane, commit!.start);
    expect(await loadRecord(stores.ports, root, 0)).toMatchObject({ state: 'PREPARED' });
    // Bytes a reader would notice under the prepared output key: a valid batch of other records.
    const key = outputKeyOf({ root, generation: 0, taskId: commit!.attemptId });
    const evil = encodeBatch(bytes(['EVIL-0', 'EVIL-1']));
    expect(await replaceObject(stores.ports.objects, key, evil, { sha256: sha256Hex(evil) })).toBe('APPLIED');
    const page = await readStream({ ...lane, from: 0 }, stores.ports);
    expect(page.records.map((r) => Buffer.from(r.data, 'base64').toString())).toEqual(acknowledged[0]!.records);
    // Without the WAL object nothing else may serve: unreadable, not the prepared bytes.
    expect((await stores.ports.objects.delete('test.object.delete', commit!.walKey)).status).toBe('APPLIED');
    await expect(readStream({ ...lane, from: 0 }, stores.ports)).rejects.toMatchObject({
      name: 'Stream.RangeUnreadable',
    });
  });

  it('a copy is verified before COMMITTED: a WAL object that no longer holds its recorded bytes yields no generation 0, and the range is passed', async () => {
    const { lane } = await laneWithRanges('tampered', 1);
    const [commit] = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const other = encodeBatch(bytes(['OTHER-0', 'OTHER-1']));
    expect(await replaceObject(stores.ports.objects, commit!.walKey, other, { sha256: commit!.walSha256 })).toBe(
      'APPLIED',
    );
    const run = await materializeGen0Batch(lane, stores.ports);
    // The abort is final for the range's task: the range is passed, named, never retried.
    expect(run.failed).toBeUndefined();
    expect(run.aborted).toEqual([{ start: commit!.start, end: commit!.end, reason: 'Cutpoint.ChecksumMismatch' }]);
    expect(run.next).toBe(commit!.end);
    expect((await loadRecord(stores.ports, rangeRootOf(lane, commit!.start), 0))?.state).not.toBe('COMMITTED');
    expect(await stores.ports.authority.get(laneKeys.index(lane, commit!.end))).toBeUndefined();
  });

  it("the commit verifies the copy's metadata too: the WAL's exact bytes under another task's identity never commit", async () => {
    const { lane } = await laneWithRanges('metadata', 1);
    stores.faults.arm(`${GENERATION_CUT_POINTS.commitCas}:fail*`);
    expect((await materializeGen0Batch(lane, stores.ports)).failed).toBeDefined();
    stores.faults.disarm();
    const [commit] = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const root = rangeRootOf(lane, commit!.start);
    const key = outputKeyOf({ root, generation: 0, taskId: commit!.attemptId });
    const copy = (await stores.ports.objects.get(key))!;
    const foreign = { ...copy.metadata, 'task-id': 'someone-else' };
    expect(await replaceObject(stores.ports.objects, key, copy.bytes, foreign)).toBe('APPLIED');
    await expect(commitGeneration({ root, taskId: commit!.attemptId }, stores.ports)).rejects.toMatchObject({
      name: 'Cutpoint.IdentityConflict',
    });
    expect(await loadRecord(stores.ports, root, 0)).toMatchObject({ state: 'PREPARED' });
  });
});
