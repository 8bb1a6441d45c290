import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../src/domain/record-batch.js';
import { walKeyOf, walMetadataOf } from '../../src/domain/stream.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { PAGE } from '../../src/stream/gc/state.js';
import { loadHead } from '../../src/stream/lane-store.js';
import { spendAttempt } from '../../src/stream/spend-attempt.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { FULL_MATRIX } from '../support/matrix-lane.js';
import { newLane } from '../support/stream-fixture.js';
import { countingPorts, gcFlow, listAll, MovableClock } from '../faults/stream-gc-world.js';

/**
 * GC past the first limit: a lane with thousands of orphaned objects is collected across
 * many bounded pages (no step lists or sweeps more than PAGE keys), every object exactly
 * once, with the state passed between steps staying small.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

// 2,000 objects (20+ pages each way) in `npm run test:matrix`; 4 pages in `npm test` (the
// same code path, a fifth of the time).
const OBJECTS = FULL_MATRIX ? 2_000 : 4 * PAGE;

describe('stream GC at scale', () => {
  // 400 objects: 10.0 s at load 4-8 (npm test); the full matrix's 2,000 about five times that, x4 on a busy machine.
  it(`collects ${OBJECTS} orphans across bounded pages, each exactly once`, { timeout: 900_000 }, async () => {
    const deletes = new Map<string, number>();
    const ports = countingPorts(stores.ports, new MovableClock(), deletes);
    const { lane } = await newLane(ports, 'gc-scale');
    const keys: string[] = [];
    const head = await loadHead(ports, lane);
    const binding = { fenceEpoch: head.fence?.epoch ?? 0, start: head.committedEnd };
    for (let first = 0; first < OBJECTS; first += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, OBJECTS - first) }, async (_, i) => {
          const bytes = encodeBatch([Buffer.from(`bulk/${first + i}`)]);
          const sha = createHash('sha256').update(bytes).digest('hex');
          const key = walKeyOf(lane, 'bulk', sha);
          await ports.objects.put(STREAM_CUT_POINTS.wal, key, bytes, walMetadataOf(lane, 'bulk', sha, 1, binding));
          keys.push(key);
        }),
      );
    }
    expect((await spendAttempt(ports, lane, 'bulk', 'test orphans', STREAM_CUT_POINTS.retire)).status).toBe('SPENT');

    const run = await gcFlow({ lane, ports }, { grace: '0s' });
    expect(run.status, `${run.error}: ${run.cause}`).toBe('SUCCEEDED');
    expect(run.output).toMatchObject({
      totals: {
        scanned: OBJECTS,
        rootsCreated: OBJECTS,
        marked: OBJECTS,
        sealed: OBJECTS,
        deleted: OBJECTS,
        finalized: OBJECTS,
      },
    });
    expect(await listAll(ports, lane)).toEqual([]);
    expect(deletes.size).toBe(OBJECTS);
    expect([...deletes.values()].every((n) => n === 1)).toBe(true);
    // Many iterations, each bounded: at least OBJECTS / PAGE scan and sweep pages each.
    const scans = run.events.filter((e) => e.type === 'StateEntered' && e.state === 'Scan').length;
    const drains = run.events.filter((e) => e.type === 'StateEntered' && e.state === 'Drain').length;
    expect(scans).toBeGreaterThanOrEqual(OBJECTS / PAGE);
    expect(drains).toBeGreaterThanOrEqual(OBJECTS / PAGE);
    expect(run.transitions).toBeLessThan(20 * (OBJECTS / PAGE));
  });
});
