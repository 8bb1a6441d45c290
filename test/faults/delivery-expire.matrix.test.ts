import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind } from '../../src/domain/faults.js';
import { generateEvents, openDeliveryWorld, type DeliveryWorld } from '../support/delivery-world.js';
import { deliver, expired, objectsOf, releasedIds, runExpire } from '../support/expire-world.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { withKinds } from '../support/matrix-lane.js';

/**
 * delivery-expire's fault matrix (docs/delivery.md "Chunk retention"): each of its cut points
 * (the work objects' DeleteObjects, the released-index entry's delete) × every fault kind,
 * first once (the flow's own Retry and the next listing absorb it), then persistently (the
 * flow may end failed once its retries are spent; the recovery is the next run, as the
 * schedule would start it). Then the invariant: the finished invocation has no work object left, its
 * evidence is exactly what it was, and its index entry is gone; nothing else was touched.
 */

const CUT_POINTS = matrixCutPoints('delivery-expire', {});
const cases = withKinds(CUT_POINTS);

let world: DeliveryWorld;
let tableSeq = 0;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: generateEvents(500, 864_000) });
}, 120_000);

afterAll(() => world?.close());

async function finishedDelivery(): Promise<{ id: string; kept: string[] }> {
  const { invocationId, run } = await deliver(world, `exm_${++tableSeq}`);
  expect(run.status).toBe('SUCCEEDED');
  const objects = await objectsOf(world, invocationId);
  expect(objects.work.length).toBeGreaterThan(0);
  return { id: invocationId, kept: objects.kept };
}

async function expectExpired(finished: { id: string; kept: string[] }): Promise<void> {
  expect(await objectsOf(world, finished.id)).toEqual({ work: [], kept: finished.kept });
  expect(await releasedIds(world)).toEqual([]);
}

/** Runs delivery-expire with `spec` armed; how it ended. A fault never makes it spin: a few pages at most. */
async function expireWith(spec: string): Promise<string> {
  world.stores.faults.arm(spec);
  try {
    const run = await runExpire(world, { retentionDays: 1 }, 2);
    expect(run.transitions).toBeLessThan(20);
    return `${run.status}${run.error ? ` ${run.error}` : ''}`;
  } finally {
    world.stores.faults.disarm();
  }
}

describe('delivery-expire: a fault at each cut point, then the next run', () => {
  it.each(cases)(
    '%s × %s: once, then persistently → work objects gone, evidence kept, entry gone',
    async (cutPoint, kind: FaultKind) => {
      // Once: the flow finishes the job by itself.
      const once = await finishedDelivery();
      expect(await expireWith(`${cutPoint}:${kind}`)).toBe('SUCCEEDED');
      await expectExpired(once);
      // Persistently: whatever the flow ended with, the next run (no fault) finishes it.
      const persistent = await finishedDelivery();
      const ended = await expireWith(`${cutPoint}:${kind}*`);
      // Retries spent: the step's own error (Cutpoint.WorkerCrashed, EffectFailed, OutcomeUnknown).
      expect(ended).toMatch(/^(SUCCEEDED|FAILED (Delivery\.ExpireRefused|Cutpoint\.[A-Za-z]+))$/);
      const recovery = expired(await runExpire(world, { retentionDays: 1 }, 2));
      expect(recovery.done).toBe(true);
      await expectExpired(persistent);
    },
    120_000,
  );
});
