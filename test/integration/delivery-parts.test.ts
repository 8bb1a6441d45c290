import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireCustody } from '../../src/delivery/custody.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { extractLoadPart } from '../../src/delivery/parts/extract-load-part.js';
import { listHeads, listReceipts } from '../../src/delivery/parts/part-store.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep, readPlan } from '../../src/delivery/steps/plan-parts.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { chunkSeqOf } from '../../src/domain/delivery/parts.js';
import { stagingRefOf } from '../../src/delivery/steps/common.js';
import type { SourcePort } from '../../src/ports/source.js';
import type { StreamWindowRequest } from '../../src/domain/delivery/source-types.js';
import {
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';

/**
 * The part step at its cut points: a retry resumes after the last journaled chunk (the
 * source is asked to resume there, never to start the part again); a zombie part writer of
 * an older custody epoch is fenced; a part that keeps failing fails the flow's Map, and
 * reconcile and retire resolve what it left. Real components (test/support/delivery-world.ts).
 */

const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const rows = generateEvents(1_500, 144_000); // 600 a day: 1,200 in the window
const windowIds = windowIdsOf(rows, WINDOW);
/** Each test delivers to its own table: custody and stages are per target. */
const TABLES = ['events', 'events_zombie', 'events_forged', 'events_map', 'events_inflight'] as const;
type Table = (typeof TABLES)[number];
const manifestOf = (table: Table) =>
  fixedWindowManifest({ daily: { table, chunkRows: 10, partRows: 400, maxConcurrency: 2 } });
const selector = '/config/route.yaml#daily';
const routeOf = (table: Table) => selectRoute(parseManifest(manifestOf(table), '/config/route.yaml'), 'daily');
const beginInput = (invocationId: string, table: Table) => ({
  invocationId,
  session: `p-${invocationId.slice(4, 14)}`,
  manifestText: manifestOf(table),
  selector,
});

let world: DeliveryWorld;
beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: TABLES });
}, 120_000);
afterAll(() => world?.close());

/** The world's source, recording every stream request and the chunks each yielded. */
function recordingSource(): SourcePort & { streams: Array<{ request: StreamWindowRequest; chunks: number }> } {
  const { source } = world;
  const streams: Array<{ request: StreamWindowRequest; chunks: number }> = [];
  return {
    streams,
    describe: (r) => source.describe(r),
    countWindow: (r) => source.countWindow(r),
    countBuckets: (r) => source.countBuckets(r),
    close: async () => {},
    async *streamWindow(request) {
      const record = { request, chunks: 0 };
      streams.push(record);
      for await (const chunk of source.streamWindow(request)) {
        record.chunks++;
        yield chunk;
      }
    },
  };
}

async function planned(invocationId: string, source: SourcePort, table: Table) {
  const deps = world.deps(routeOf(table), source);
  const begun = await begin(beginInput(invocationId, table), deps);
  await createStaging(begun, deps);
  await planPartsStep(begun, deps);
  const record = await loadInvocation(world.stores.ports, invocationId);
  return { deps, begun, parts: await readPlan(deps, record) };
}

describe('parts', () => {
  it('a part retry resumes after its last journaled chunk: the source resumes there, earlier chunks are never extracted again', async () => {
    const source = recordingSource();
    const invocationId = newInvocationId();
    const { deps, begun, parts } = await planned(invocationId, source, 'events');
    expect(parts.length).toBeGreaterThanOrEqual(3);
    const part = parts[0]!;
    // The second batch's journal write crashes: 16 receipts journaled, chunks 16..31 loaded but not journaled.
    world.stores.faults.arm('delivery.part.receipt:crash-before@2');
    try {
      await expect(extractLoadPart({ ...begun, part }, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    } finally {
      world.stores.faults.disarm();
    }
    expect((await listHeads(world.stores.ports, invocationId))[0]).toMatchObject({ part: 0, chunks: 16, eof: false });

    const retried = await extractLoadPart({ ...begun, part }, deps);
    expect(retried).toMatchObject({ part: 0, acted: true });
    const [first, second] = source.streams;
    expect(first?.request.firstSeq).toBe(chunkSeqOf(0, 0));
    expect(second?.request.resumeAfter).toMatchObject({ nextSeq: chunkSeqOf(0, 16), rowsAtLastKey: 1 });
    expect(second?.chunks).toBe(retried.chunks - 16);
    // A part at EOF does nothing and asks the source for nothing.
    expect(await extractLoadPart({ ...begun, part }, deps)).toMatchObject({ acted: false, chunks: retried.chunks });
    expect(source.streams).toHaveLength(2);
    const receipts = await listReceipts(world.stores.ports, invocationId);
    expect(receipts.map((r) => r.seq)).toEqual(Array.from({ length: retried.chunks }, (_, i) => chunkSeqOf(0, i)));
    expect(receipts.reduce((n, r) => n + r.rows, 0)).toBe(retried.rows);
  });

  it('two chunks in flight: when one load fails the step ends only once the other has settled, and the retry loads every seq once', async () => {
    const invocationId = newInvocationId();
    const planned_ = await planned(invocationId, world.source, 'events_inflight');
    const { begun, parts } = planned_;
    const real = planned_.deps.target;
    let inFlight = 0;
    const started: number[] = [];
    // The real target, with the second chunk's load held back 300 ms: it is still running when the first one fails.
    const target = new Proxy(real, {
      get(t, prop) {
        if (prop !== 'loadChunk') return (Reflect.get(t, prop) as (...a: unknown[]) => unknown).bind(t);
        return async (request: Parameters<typeof real.loadChunk>[0]) => {
          inFlight++;
          started.push(request.seq);
          try {
            if (request.seq === chunkSeqOf(0, 1)) await new Promise((r) => setTimeout(r, 300));
            return await t.loadChunk(request);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const deps = { ...planned_.deps, target };
    const part = parts[0]!;
    world.targetFaults.arm('delivery.target.load-chunk:fail@1');
    try {
      await expect(extractLoadPart({ ...begun, part }, deps)).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    } finally {
      world.targetFaults.disarm();
    }
    expect(started.slice(0, 2)).toEqual([chunkSeqOf(0, 0), chunkSeqOf(0, 1)]);
    expect(inFlight).toBe(0);
    const retried = await extractLoadPart({ ...begun, part }, deps);
    const chunks = await real.observeChunks(stagingRefOf(await loadInvocation(world.stores.ports, invocationId)), {
      from: chunkSeqOf(0, 0),
      to: chunkSeqOf(1, 0),
    });
    expect(chunks.map((c) => c.seq)).toEqual(Array.from({ length: retried.chunks }, (_, i) => chunkSeqOf(0, i)));
    expect(chunks.reduce((n, c) => n + c.rows, 0)).toBe(retried.rows);
  });

  it('a zombie part writer of an older custody epoch is fenced: nothing is journaled for it', async () => {
    const invocationId = newInvocationId();
    const { deps, begun, parts } = await planned(invocationId, world.source, 'events_zombie');
    const record = await loadInvocation(world.stores.ports, invocationId);
    // A recovery session takes custody over: the run's fence is now stale.
    await acquireCustody(world.stores.ports, { targetId: record.targetId, invocationId }, 'takeover-1');
    await expect(extractLoadPart({ ...begun, part: parts[1] }, deps)).rejects.toMatchObject({
      name: 'Delivery.Fenced',
    });
    expect(await listHeads(world.stores.ports, invocationId)).toEqual([]);
  });

  it("a part descriptor that is not the journaled plan's is refused before the source is opened", async () => {
    const source = recordingSource();
    const invocationId = newInvocationId();
    const { deps, begun, parts } = await planned(invocationId, source, 'events_forged');
    const forged = { ...parts[1]!, end: WINDOW.end };
    await expect(extractLoadPart({ ...begun, part: forged }, deps)).rejects.toMatchObject({
      code: 'delivery.part_plan_invalid',
    });
    await expect(extractLoadPart({ ...begun, part: { part: 1 } }, deps)).rejects.toMatchObject({
      code: 'delivery.part_plan_invalid',
    });
    expect(source.streams).toHaveLength(0);
  });

  it('a Map item that keeps failing fails the flow (Delivery.StepRefused via the Map Run); reconcile proves the partial stage, retire drops it: nothing published', async () => {
    const invocationId = newInvocationId();
    const stagesBefore = await world.stagesLeft(); // the other tests' stages, on their own tables
    world.targetFaults.arm('delivery.target.load-chunk:fail@50*');
    let result;
    try {
      result = await world.runFlow('deliver-window', beginInput(invocationId, 'events_map'));
    } finally {
      world.targetFaults.disarm();
    }
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(result.mapRuns[0]).toMatchObject({ state: 'ExtractLoadParts', failed: expect.any(Number) });
    expect(result.mapRuns[0]?.failed).toBeGreaterThan(0);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('WRITING_UNKNOWN');

    const recovery = world.recoveryDeps(routeOf('events_map'));
    const manifestText = manifestOf('events_map');
    expect(await reconcile({ invocationId, manifestText, selector }, recovery)).toMatchObject({
      state: 'PARTIAL_PROVED',
    });
    expect(await retire({ invocationId, manifestText, selector }, recovery)).toMatchObject({ state: 'RETIRED' });
    expect(await world.stagesLeft()).toBe(stagesBefore);
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect(await world.targetWindowIds('events_map', WINDOW)).toEqual([]);

    // A new invocation then delivers the window exactly once.
    const next = newInvocationId();
    const again = await world.runFlow('deliver-window', beginInput(next, 'events_map'));
    expect(again).toMatchObject({ status: 'SUCCEEDED', output: { state: 'CUSTODY_RELEASED' } });
    expect(await world.targetWindowIds('events_map', WINDOW)).toEqual(windowIds);
  });
});
