import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invocationObjectsPrefixOf } from '../../src/domain/delivery/identifiers.js';
import { PAGE_OBJECTS } from '../../src/delivery/expiry/expire-run.js';
import { generateEvents, openDeliveryWorld, type DeliveryWorld } from '../support/delivery-world.js';
import { SELECTOR } from '../support/delivery-matrix.js';
import { deliver, expired, objectsOf, releasedIds, ROUTE, runExpire, stateOf } from '../support/expire-world.js';

/**
 * Chunk retention (docs/delivery.md "Chunk retention"): a finished delivery's work objects (chunks,
 * part plan, part results) are deleted by delivery-expire once it finished more than the
 * retention ago, its evidence stays, and an unfinished one keeps everything, whatever its
 * age. Real DynamoDB Local, S3 emulator, ClickHouse and PostgreSQL; the flows on the local runner.
 */

let world: DeliveryWorld;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: generateEvents(500, 864_000) });
}, 120_000);

afterAll(() => world?.close());

describe('delivery-expire', () => {
  let finished: string;
  let held: { invocationId: string; manifestText: string };

  it('a finished delivery is in the released index with its work objects; an unfinished one is not', async () => {
    const a = await deliver(world, 'ex_finished');
    expect(a.run.status).toBe('SUCCEEDED');
    finished = a.invocationId;
    expect(await stateOf(world, finished)).toBe('CUSTODY_RELEASED');
    const b = await deliver(world, 'ex_held', { faults: 'delivery.evidence.put:fail*' });
    expect(b.run.status).toBe('FAILED');
    held = b;
    expect(await stateOf(world, held.invocationId)).not.toMatch(/^(CUSTODY_RELEASED|RETIRED)$/);
    expect(await releasedIds(world)).toEqual([finished]);
    // 200 rows in the window, 100-row parts of 30-row chunks: 2 parts x 4 chunks, the plan, the part results.
    const objects = await objectsOf(world, finished);
    expect(objects.work.filter((k) => k.includes('/chunk-'))).toHaveLength(8);
    expect(objects.work.some((k) => k.endsWith('/plan.json'))).toBe(true);
    expect(objects.kept.some((k) => k.endsWith('/evidence.json'))).toBe(true);
  }, 120_000);

  it('within the retention nothing is deleted', async () => {
    const run = expired(await runExpire(world, { retentionDays: 1 }, 0));
    expect(run).toMatchObject({ done: true, totals: { invocations: 0, objects: 0 } });
    expect((await objectsOf(world, finished)).work.length).toBeGreaterThan(0);
  });

  it('a dry run counts what would go and deletes nothing', async () => {
    const before = await objectsOf(world, finished);
    const run = expired(await runExpire(world, { retentionDays: 1, dryRun: true }, 2));
    expect(run.totals).toMatchObject({ invocations: 1, objects: before.work.length });
    expect(run.totals.bytes).toBeGreaterThan(0);
    expect(await objectsOf(world, finished)).toEqual(before);
    expect(await releasedIds(world)).toEqual([finished]);
  });

  it('past the retention a finished delivery loses its work objects, never its evidence; an unfinished one keeps all', async () => {
    const before = await objectsOf(world, finished);
    const heldBefore = await objectsOf(world, held.invocationId);
    const run = expired(await runExpire(world, { retentionDays: 1 }, 2));
    expect(run).toMatchObject({
      done: true,
      retentionDays: 1,
      totals: { invocations: 1, objects: before.work.length },
    });
    expect(await objectsOf(world, finished)).toEqual({ work: [], kept: before.kept });
    expect(await releasedIds(world)).toEqual([]);
    expect(await objectsOf(world, held.invocationId)).toEqual(heldBefore);
    // Again: nothing left to do.
    expect(expired(await runExpire(world, { retentionDays: 1 }, 2)).totals.invocations).toBe(0);
  }, 60_000);

  it('a delivery finished by its recovery is expired like any other', async () => {
    const resumed = await world.runFlow('delivery-resume', {
      invocationId: held.invocationId,
      manifestText: held.manifestText,
      selector: SELECTOR,
      yes: true,
    });
    expect(resumed.error, `${resumed.error}: ${resumed.cause}`).toBeUndefined();
    expect(await stateOf(world, held.invocationId)).toBe('CUSTODY_RELEASED');
    expect(await releasedIds(world)).toEqual([held.invocationId]);
    const run = expired(await runExpire(world, { retentionDays: 3 }, 4));
    expect(run.totals.invocations).toBe(1);
    expect((await objectsOf(world, held.invocationId)).work).toEqual([]);
  }, 120_000);

  it('an invocation with more work objects than a page deletes goes on in the next page, in batches of 1,000', async () => {
    const a = await deliver(world, 'ex_large');
    expect(a.run.status).toBe('SUCCEEDED');
    // Chunks of a big window, as extraction would have left them (the keys expiry lists).
    const prefix = invocationObjectsPrefixOf(ROUTE, a.invocationId);
    const extra = PAGE_OBJECTS + 700;
    const bytes = new TextEncoder().encode('{}\n');
    for (let i = 0; i < extra; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, extra - i) }, (_, j) =>
          world.stores.ports.objects.put(
            'delivery.chunk.put',
            `${prefix}chunk-${String(1_000_000 + i + j).padStart(10, '0')}.jsonl.gz`,
            bytes,
            {},
          ),
        ),
      );
    const before = await objectsOf(world, a.invocationId);
    expect(before.work.length).toBeGreaterThan(PAGE_OBJECTS + 700);
    const run = expired(await runExpire(world, { retentionDays: 1 }, 2));
    expect(run).toMatchObject({ done: true, pages: 2, totals: { invocations: 1, objects: before.work.length } });
    expect(await objectsOf(world, a.invocationId)).toEqual({ work: [], kept: before.kept });
  }, 240_000);

  it('refuses an input without a retention, or with a bad one, before it reads anything', async () => {
    for (const input of [
      {},
      { retentionDays: 0 },
      { retentionDays: 1.5 },
      { retentionDays: '7' },
      { retentionDays: 7, dryRun: 'yes' },
    ]) {
      const run = await runExpire(world, input, 2);
      expect(run.status).toBe('FAILED');
      expect(run.error).toBe('Delivery.ExpireRefused');
      expect(run.cause).toMatch(/retentionDays must be given|dryRun must be a boolean/);
    }
  });
});
