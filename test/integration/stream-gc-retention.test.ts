import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LaneRef } from '../../src/domain/stream.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import { LEASE_TTL_MS } from '../../src/stream/gc/leases.js';
import { gcKeys, type DeleteJournal } from '../../src/stream/gc/model.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { newLane } from '../support/stream-fixture.js';
import { countingPorts, listAll, MovableClock, putOrphan } from '../faults/stream-gc-world.js';

/**
 * GC's own records stay bounded (docs/stream-log.md "The stream log", GC, retention): a DELETED root —
 * its sealed delete journal inside it — is retired one grace after its delete, an expired
 * reader lease once GC sweeps past it (src/stream/gc/retention.ts). A lane whose GC already
 * collected 10,000 objects (their DELETED roots, written here in parallel batches as the
 * earlier runs left them, with 1,000 leases of crashed readers) is collected again and
 * again, each run with new garbage through the real flow: after every run the lane's GC
 * records are those of the last grace only, not every object GC ever collected.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const OBJECTS = 10_000;
const LEASES = 1_000;
const GRACE_S = 600;
const PER_RUN = 50;
const BATCH = 50;

/** The stream-gc flow to the end of its run (continuations included), grace 10m. */
async function gcRun(lane: LaneRef, ports: Ports): Promise<FlowResult> {
  let run = await runFlow('stream-gc', { ...lane, grace: `${GRACE_S}s` }, { ports, retryIntervalMs: 0 });
  while (run.status === 'SUCCEEDED' && (run.output as { done?: boolean }).done === false) {
    run = await runFlow('stream-gc', (run.output as { next: unknown }).next, { ports, retryIntervalMs: 0 });
  }
  expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
  return run;
}

async function gcRecords(ports: Ports, lane: LaneRef): Promise<{ roots: number; leases: number }> {
  const [roots, leases] = await Promise.all([
    ports.authority.query(gcKeys.pk(lane), 'root#'),
    ports.authority.query(gcKeys.pk(lane), 'lease#'),
  ]);
  return { roots: roots.length, leases: leases.length };
}

/** What earlier GC runs left for `n` collected objects: DELETED roots with their sealed journals, written in parallel batches. */
async function seedCollected(ports: Ports, lane: LaneRef, n: number, at: string): Promise<void> {
  for (let first = 0; first < n; first += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, n - first) }, async (_, i) => {
        const objectKey = `wal/${lane.stream}/${lane.partition}/old-${first + i}/${'0'.repeat(64)}.wal`;
        const journal: DeleteJournal = {
          deleteId: randomUUID(),
          objectKey,
          epoch: 1,
          size: 64,
          sha256: 'f'.repeat(64),
          absent: false,
          policyDigest: 'seeded',
          sealedAt: at,
          sentAt: at,
        };
        const root = {
          ...gcKeys.root(lane, objectKey),
          stream: lane.stream,
          partition: lane.partition,
          objectKey,
          epoch: 1,
          state: 'DELETED',
          firstSeen: at,
          fate: 'DEAD',
          markedAt: at,
          policyDigest: 'seeded',
          journal,
          deletedAt: at,
          lateObject: false,
          moveId: randomUUID(),
        };
        expect((await ports.authority.put('test.seed.root', root, 'absent')).status).toBe('APPLIED');
      }),
    );
  }
  for (let first = 0; first < LEASES; first += BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(BATCH, LEASES - first) }, async (_, i) => {
        const objectKey = `wal/${lane.stream}/${lane.partition}/old-${first + i}/${'0'.repeat(64)}.wal`;
        const leaseId = randomUUID();
        const lease = {
          ...gcKeys.lease(lane, objectKey, leaseId),
          stream: lane.stream,
          partition: lane.partition,
          objectKey,
          leaseId,
          expiresAt: new Date(Date.parse(at) + LEASE_TTL_MS).toISOString(),
        };
        expect((await ports.authority.put('test.seed.lease', lease, 'absent')).status).toBe('APPLIED');
      }),
    );
  }
}

describe('retention of GC records', () => {
  it(
    `after ${OBJECTS} collected objects, repeated GC runs keep the lane's GC records to the last grace's`,
    { timeout: 900_000 },
    async () => {
      const clock = new MovableClock();
      const deletes = new Map<string, number>();
      const ports = countingPorts(stores.ports, clock, deletes);
      const { lane } = await newLane(ports, 'gc-retention');
      const started = performance.now();
      await seedCollected(ports, lane, OBJECTS, clock.now().toISOString());
      const seeded = performance.now();
      expect(await gcRecords(ports, lane)).toEqual({ roots: OBJECTS, leases: LEASES });

      // Each round: new garbage (real orphans, first seen by this run, collected by the next
      // through the flow), one grace on, one GC run to its end.
      const after: Array<{ roots: number; leases: number; ms: number }> = [];
      let previous: string[] = [];
      for (let round = 0; round < 4; round++) {
        const orphans = await putOrphan(ports, lane, `dead-${round}`, PER_RUN);
        clock.advance(GRACE_S * 1000 + LEASE_TTL_MS);
        const t = performance.now();
        const run = await gcRun(lane, ports);
        const totals = (
          run.output as { totals: { deleted: number; retired: { roots: number; leases: number; attempts: number } } }
        ).totals;
        expect(totals.deleted, `round ${round}`).toBe(previous.length);
        // Retired: the seeded residue in the first run, then the roots the run before last deleted.
        // The orphans' attempts are unmarked: their spent markers are kept for good (attempt-retention.ts).
        expect(totals.retired, `round ${round}`).toEqual(
          round === 0
            ? { roots: OBJECTS, leases: LEASES, attempts: 0 }
            : { roots: round === 1 ? 0 : PER_RUN, leases: 0, attempts: 0 },
        );
        for (const key of previous) expect(deletes.get(key), key).toBe(1);
        const records = await gcRecords(ports, lane);
        after.push({ ...records, ms: Math.round(performance.now() - t) });
        // Left: this round's orphans (in grace) and the roots deleted by this run — never the history.
        expect(records, `GC records after round ${round}`).toEqual({
          roots: orphans.length + previous.length,
          leases: 0,
        });
        previous = orphans;
      }
      expect((await listAll(ports, lane)).sort()).toEqual([...previous].sort());
      console.log(
        `GC retention at ${OBJECTS} objects: seeded in ${Math.round(seeded - started)} ms; runs ${after.map((a) => `${a.ms} ms`).join(', ')}`,
      );
    },
  );
});
