import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { OutcomeUnknownError } from '../../src/domain/errors.js';
import { encodeBatch } from '../../src/domain/record-batch.js';
import type { Ports } from '../../src/ports/index.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { deleteSealed, finalizeDeleted } from '../../src/stream/gc/delete.js';
import { drainPage } from '../../src/stream/gc/drain.js';
import { markCandidates } from '../../src/stream/gc/mark.js';
import { scanPage } from '../../src/stream/gc/scan.js';
import type { GcRun } from '../../src/stream/gc/state.js';
import { readStream } from '../../src/stream/read.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts } from '../support/intercept-ports.js';
import { replaceObject } from '../support/replace-object.js';
import { compactionsOf, laneWithRanges, textOf } from '../faults/stream-compaction-world.js';
import { countingPorts, gcFlow, gcWorld, listAll, MovableClock, rootOf } from '../faults/stream-gc-world.js';

/**
 * GC's protection of the last good copies (docs/stream-log.md "The stream log", GC): a copy that a
 * compaction superseded is collected only while that compaction verifies — at the scan, at
 * the drain (a MARKED root whose evidence no longer holds goes back to ACTIVE) and again
 * just before its DELETE (a sealed root whose preconditions no longer hold is unsealed,
 * nothing deleted). And a journal sends its DELETE once: an identical object under the key
 * after a lost DELETE answer is a late object, collected only under a new lifecycle epoch
 * after a fresh grace. The GC steps run one by one here, so a change lands between them.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const MINUTE = 60_000;

/** A lane of three ranges compacted into one object: its WAL copies are SUPERSEDED (collectible at once with grace 0s). */
async function compactedLane(label: string) {
  const deletes = new Map<string, number>();
  const ports: Ports = countingPorts(stores.ports, new MovableClock(), deletes);
  const { lane, acknowledged } = await laneWithRanges(ports, label, 3);
  const copies = await listAll(ports, lane);
  await compactLane(lane, ports);
  const [c] = await compactionsOf(ports, lane);
  expect(c).toBeDefined();
  const records = acknowledged.flatMap((a) => a.records);
  return { lane, ports, deletes, copies, compaction: c!, records };
}

/** The Scan/Mark loop of one run (grace 0s), as the flow runs it. */
async function scanAndMark(ports: Ports, lane: { stream: string; partition: number }): Promise<GcRun> {
  let run = await scanPage({ ...lane, grace: '0s' }, ports);
  run = await markCandidates(run, ports);
  while (!run.scan.done) run = await markCandidates(await scanPage(run, ports), ports);
  return run;
}

/** The compaction stops verifying: its bytes replaced by other records (through the raw store, not counted as a GC delete). */
async function corrupt(key: string): Promise<void> {
  const evil = encodeBatch([new TextEncoder().encode('EVIL')]);
  expect(await replaceObject(stores.ports.objects, key, evil, { sha256: sha256Hex(evil) })).toBe('APPLIED');
}

describe('the copies a compaction superseded', () => {
  it('are marked while it verifies; once it stops verifying the drain puts every MARKED root back to ACTIVE and a fresh scan marks none', async () => {
    const { lane, ports, deletes, copies, compaction, records } = await compactedLane('gcp-mark');
    const marked = await scanAndMark(ports, lane);
    expect(marked.totals).toMatchObject({ superseded: copies.length, marked: copies.length });
    for (const key of copies) expect((await rootOf({ lane, ports }, key))?.state).toBe('MARKED');

    await corrupt(compaction.objectKey);
    const drained = await drainPage(marked, ports);
    expect(drained.totals).toMatchObject({ unmarked: copies.length, sealed: 0 });
    expect(drained.deleting).toEqual([]);
    for (const key of copies)
      expect(await rootOf({ lane, ports }, key)).toMatchObject({ state: 'ACTIVE', fate: 'LIVE' });

    // A fresh run: the copies are LIVE, nothing is marked or deleted, and they serve every read.
    const again = await gcFlow({ lane, ports }, { grace: '0s' });
    expect(again.output).toMatchObject({ totals: { superseded: 0, marked: 0, deleted: 0 } });
    expect(deletes.size).toBe(0);
    expect(textOf((await readStream({ ...lane, from: 0, maxRecords: 1000 }, ports)).records)).toEqual(records);
  });

  it('sealed for deletion: a compaction that stops verifying before the DELETE keeps them — the re-check unseals, nothing is deleted', async () => {
    const { lane, ports, deletes, copies, compaction, records } = await compactedLane('gcp-seal');
    const drained = await drainPage(await scanAndMark(ports, lane), ports);
    expect(drained.totals).toMatchObject({ sealed: copies.length });
    expect(drained.deleting.map((d) => d.key).sort()).toEqual([...copies].sort());

    // Between the seal and the DELETE the compacted object stops verifying.
    await corrupt(compaction.objectKey);
    const deleted = await deleteSealed(drained, ports);
    expect(deleted.totals).toMatchObject({ deleted: 0, unsealed: copies.length });
    expect(deletes.size, 'a superseded copy was deleted while it was the only readable one').toBe(0);
    for (const key of copies) {
      const root = await rootOf({ lane, ports }, key);
      expect(root).toMatchObject({ state: 'ACTIVE', fate: 'LIVE' });
      expect(root?.journal ?? undefined).toBeUndefined();
    }
    expect((await finalizeDeleted(deleted, ports)).totals.finalized).toBe(0);
    expect(textOf((await readStream({ ...lane, from: 0, maxRecords: 1000 }, ports)).records)).toEqual(records);
    expect(new Set(await listAll(ports, lane))).toEqual(new Set([...copies, compaction.objectKey]));
  });
});

describe('a DELETE whose answer was lost', () => {
  it('an identical object under the key afterwards is a late object: a new lifecycle epoch and a fresh grace, never deleted under the old epoch', async () => {
    const world = await gcWorld(stores.ports, 'gcp-late');
    const key = world.orphans[0]!;
    const original = (await stores.ports.objects.get(key))!;
    // The DELETE of the orphan applies, its answer is lost; before the Delete step's retry an
    // identical PUT of the same batch lands (a delayed write of the spent attempt).
    let relanded = 0;
    const racing = interceptPorts(world.ports, {
      objects: {
        delete: async (cut, k) => {
          const outcome = await world.ports.objects.delete(cut, k);
          if (k !== key || relanded > 0) return outcome;
          relanded++;
          expect(
            (await stores.ports.objects.put('stream.append.wal', key, original.bytes, original.metadata)).status,
          ).toBe('APPLIED');
          throw new OutcomeUnknownError(cut, `${cut}: the answer to the DELETE of ${key} was lost`);
        },
      },
    });
    const run = await gcFlow({ lane: world.lane, ports: racing }, { grace: '0s' });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    expect(relanded).toBe(1);
    expect(await listAll(world.ports, world.lane), 'the late object was deleted under the old epoch').toContain(key);
    expect(world.deletes.get(key), 'the first DELETE applied').toBe(1);
    expect(run.output).toMatchObject({ totals: { lateAfterDelete: 1 } });
    const closed = await rootOf(world, key);
    expect(closed).toMatchObject({ state: 'DELETED', epoch: 1, lateObject: true });
    expect(closed?.journal?.sentAt).toBeTruthy();

    // The next scan gives it a new epoch and a fresh grace, from now.
    world.clock.advance(MINUTE);
    const renewed = await gcFlow(world, { grace: '10m' });
    expect(renewed.output).toMatchObject({ totals: { lateObjects: 1, deleted: 0 } });
    const root = await rootOf(world, key);
    expect(root).toMatchObject({ state: 'ACTIVE', epoch: 2, fate: 'DEAD' });
    expect(Date.parse(root!.firstSeen)).toBeGreaterThan(Date.parse(closed!.deletedAt!));
    expect(await listAll(world.ports, world.lane)).toContain(key);

    // Collected once its fresh grace ran out, under epoch 2.
    world.clock.advance(11 * MINUTE);
    expect((await gcFlow(world, { grace: '10m' })).output).toMatchObject({ totals: { deleted: 1 } });
    expect(await rootOf(world, key)).toMatchObject({ state: 'DELETED', epoch: 2 });
    expect(world.deletes.get(key)).toBe(2); // once per lifecycle epoch
    expect(await listAll(world.ports, world.lane)).not.toContain(key);
  });
});
