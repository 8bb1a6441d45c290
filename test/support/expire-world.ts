import { expect } from 'vitest';
import { invocationObjectsPrefixOf } from '../../src/domain/delivery/identifiers.js';
import { isWorkObjectKey } from '../../src/domain/delivery/work-objects.js';
import type { ExpireRun } from '../../src/delivery/expiry/expire-run.js';
import { RELEASED_PK, RELEASED_SK_PREFIX } from '../../src/delivery/journal/keys.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import {
  runDeliveryFlow,
  eventsTableDdl,
  fixedWindowManifest,
  newInvocationId,
  type DeliveryWorld,
} from './delivery-world.js';
import { SELECTOR } from './delivery-matrix.js';

/**
 * Finished (and unfinished) deliveries for delivery-expire's tests: each delivers the
 * world's fixed window to its own table through the deliver-window flow, and the expire
 * flow runs with the world's stores on a clock moved forward by whole days.
 */

const DAY_MS = 86_400_000;
export const ROUTE = 'daily';

/** Delivers the window to `dwh.<table>` through deliver-window; `faults` is armed for the run (an unfinished one). */
export async function deliver(
  world: DeliveryWorld,
  table: string,
  options: { chunkRows?: number; partRows?: number; faults?: string } = {},
): Promise<{ invocationId: string; run: FlowResult; manifestText: string }> {
  await world.admin.query(eventsTableDdl(table));
  const manifestText = fixedWindowManifest({
    [ROUTE]: { table, chunkRows: options.chunkRows ?? 30, partRows: options.partRows ?? 100, maxConcurrency: 2 },
  });
  const invocationId = newInvocationId();
  if (options.faults) world.stores.faults.arm(options.faults);
  try {
    const run = await world.runFlow('deliver-window', {
      invocationId,
      session: `run-${invocationId.slice(4, 14)}`,
      manifestText,
      selector: SELECTOR,
    });
    return { invocationId, run, manifestText };
  } finally {
    world.stores.faults.disarm();
  }
}

/** delivery-expire run by the local runner with the world's stores, its clock `days` ahead. */
export async function runExpire(world: DeliveryWorld, input: unknown, days: number): Promise<FlowResult> {
  const ports = { ...world.stores.ports, clock: { now: () => new Date(Date.now() + days * DAY_MS) } };
  return runDeliveryFlow('delivery-expire', input, { ports, target: world.target, source: world.source });
}

/** The flow's run, asserting it succeeded. */
export function expired(run: FlowResult): ExpireRun {
  expect(run.error, `${run.error}: ${run.cause}`).toBeUndefined();
  expect(run.status).toBe('SUCCEEDED');
  return run.output as ExpireRun;
}

/** An invocation's objects: its work objects and the rest (its evidence). */
export async function objectsOf(
  world: DeliveryWorld,
  invocationId: string,
): Promise<{ work: string[]; kept: string[] }> {
  const prefix = invocationObjectsPrefixOf(ROUTE, invocationId);
  const keys = await world.stores.ports.objects.list(prefix);
  return {
    work: keys.filter((k) => isWorkObjectKey(prefix, k)),
    kept: keys.filter((k) => !isWorkObjectKey(prefix, k)),
  };
}

/** The invocation ids in the released index, in release order. */
export async function releasedIds(world: DeliveryWorld): Promise<string[]> {
  const items = await world.stores.ports.authority.query(RELEASED_PK, RELEASED_SK_PREFIX);
  return items.map((i) => String(i.invocationId));
}

export async function stateOf(world: DeliveryWorld, invocationId: string): Promise<string> {
  return (await loadInvocation(world.stores.ports, invocationId)).state;
}
