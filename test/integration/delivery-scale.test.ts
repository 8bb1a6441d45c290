import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { listHeads, listReceipts } from '../../src/delivery/parts/part-store.js';
import {
  generateEvents,
  fixedWindowManifest,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';

/**
 * A window past the old ceiling (~1,200 chunks, when every receipt grew the one invocation
 * item): 2,000+ chunks of small rows delivered by the deliver-window flow — its
 * Distributed Map run by the local runner, one child execution per part — to
 * CUSTODY_RELEASED, every row exactly once. No authority item grows with the number of
 * chunks: the invocation item stays the size of a small window's, and every part item is
 * bounded by 16 receipts. Real components (test/support/delivery-world.ts).
 */

const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const STEP_MS = 36_000; // 2,400 rows a day: 4,800 in the window
const rows = generateEvents(7_300, STEP_MS);
const windowIds = windowIdsOf(rows, WINDOW);
const CHUNK_ROWS = 2;
const manifestText = fixedWindowManifest({
  wide: { table: 'events', chunkRows: CHUNK_ROWS, partRows: 1_000, maxConcurrency: 4 },
});

/** An item's stored size as DynamoDB counts it, near enough: attribute names plus JSON values. */
const itemBytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item), 'utf8');

let world: DeliveryWorld;
beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: ['events'] });
}, 120_000);
afterAll(() => world?.close());

describe('a window of more than 2,000 chunks', () => {
  it('is delivered by the flow in parts to CUSTODY_RELEASED, exactly once, with no item growing with the chunk count', async () => {
    expect(windowIds.length).toBe(4_800);
    const invocationId = newInvocationId();
    const result = await world.runFlow('deliver-window', {
      invocationId,
      session: `scale-${invocationId.slice(4, 14)}`,
      manifestText,
      selector: '/config/route.yaml#wide',
    });
    expect(result, JSON.stringify(result.events.filter((e) => e.error)).slice(0, 2_000)).toMatchObject({
      status: 'SUCCEEDED',
      output: { invocationId, state: 'CUSTODY_RELEASED' },
    });

    // Every window row exactly once; one receipt; custody released.
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });

    // The parts: several, each run as its own child execution of the Map.
    const heads = await listHeads(world.stores.ports, invocationId);
    const receipts = await listReceipts(world.stores.ports, invocationId);
    expect(receipts.length).toBeGreaterThanOrEqual(2_000);
    expect(record.facts.parts).toMatchObject({ chunks: receipts.length, rows: 4_800, parts: heads.length });
    expect(heads.length).toBeGreaterThanOrEqual(4);
    expect(result.mapRuns).toEqual([
      expect.objectContaining({ state: 'ExtractLoadParts', items: heads.length, succeeded: heads.length, failed: 0 }),
    ]);

    // Bounded items: the invocation item holds summaries only; a part's items hold <= 16 receipts.
    const invocationItem = await world.stores.ports.authority.get(
      deliveryKeys.invocation(record.targetId, invocationId),
    );
    expect(itemBytes(invocationItem)).toBeLessThan(6_000);
    const partItems = [
      ...(await world.stores.ports.authority.query(deliveryKeys.partsOf(invocationId), 'part#')),
      ...(await world.stores.ports.authority.query(deliveryKeys.partsOf(invocationId), 'batch#')),
    ];
    expect(Math.max(...partItems.map(itemBytes))).toBeLessThan(8_000);
    console.log(
      `delivery-scale: ${receipts.length} chunks in ${heads.length} parts, ${result.transitions} transitions; ` +
        `invocation item ${itemBytes(invocationItem)} B, largest part item ${Math.max(...partItems.map(itemBytes))} B`,
    );
  }, 240_000); // 16.5 s at load 4-8, 39.8 s at load 8 beside another heavy file: x4 of idle with room to spare
});
