import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget } from '../../src/adapters/postgres/target.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { runDeliveryFlow, WORLD_RECEIPTS } from '../support/delivery-world.js';
import {
  eventsTableDdl,
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { SELECTOR } from '../support/delivery-matrix.js';
import { openTcpGate, type TcpGate } from '../support/tcp-gate.js';

/**
 * Automatic recovery with backoff (docs/operate.md "Automatic recovery"): the reconcile the
 * dispatcher starts for a failed delivery probes the target first and waits while it is
 * down. The target is the embedded PostgreSQL behind a loopback gate that resets
 * connections while shut — a server that is down, as a client sees it. Waits run at 0 ms
 * (the local runner's pause override); the policy is the one the Lambda reads.
 */

let world: DeliveryWorld;
let gate: TcpGate;
let tables = 0;
const POLICY = { attempts: 4, firstWaitSeconds: 1, maxWaitSeconds: 4, totalSeconds: 600 };

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: generateEvents(500, 864_000) });
  gate = await openTcpGate(Number(new URL(world.pgServer.connectionString).port));
  process.env.CUTPOINT_RECOVERY_BACKOFF = JSON.stringify(POLICY);
}, 120_000);

afterEach(() => gate.open());

afterAll(async () => {
  delete process.env.CUTPOINT_RECOVERY_BACKOFF;
  await gate?.close();
  await world?.close();
});

/** A delivery stopped in PUBLICATION_UNKNOWN (its COMMIT's answer lost), and the input the dispatcher gives its reconcile. */
async function failedDelivery(): Promise<{ invocationId: string; automatic: object }> {
  const table = `bo_${++tables}`;
  await world.admin.query(eventsTableDdl(table));
  const invocationId = newInvocationId();
  const input = {
    invocationId,
    session: `run-${invocationId.slice(4, 14)}`,
    manifestText: fixedWindowManifest({ daily: { table, chunkRows: 50 } }),
    selector: SELECTOR,
  };
  world.targetFaults.arm('delivery.publish.commit:lose-response*');
  const run = await world.runFlow('deliver-window', input).finally(() => world.targetFaults.disarm());
  expect(run.status).toBe('FAILED');
  expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLICATION_UNKNOWN');
  const recoveryOf = `arn:aws:states:eu-west-1:111111111111:execution:deliver-window:${invocationId}`;
  return { invocationId, automatic: { recoveryOf, originalInput: JSON.stringify(input) } };
}

/** The automatic reconcile with the target reached through the gate. */
function reconcileThroughGate(input: object) {
  const url = new URL(world.pgServer.connectionString);
  url.port = String(gate.port);
  const target = openPostgresTarget({
    connectionString: url.toString(),
    receiptTable: WORLD_RECEIPTS,
    faults: inertFaults,
  });
  return runDeliveryFlow('delivery-reconcile', input, {
    ports: world.stores.ports,
    target,
    source: forbiddenSource(),
  }).finally(() => target.close());
}

const entered = (run: { events: Array<{ type: string; state?: string }> }, state: string) =>
  run.events.filter((e) => e.type === 'StateEntered' && e.state === state).length;

describe('the automatic reconcile waits for its target', () => {
  it('a target down for 2 probes: it waits twice, then reconciles once the target is back', async () => {
    const { invocationId, automatic } = await failedDelivery();
    gate.shut(2);
    const run = await reconcileThroughGate(automatic);
    expect(run.error, `${run.error}: ${run.cause}`).toBeUndefined();
    expect(gate.refused()).toBeGreaterThanOrEqual(2);
    expect(entered(run, 'ProbeTarget')).toBe(3);
    expect(entered(run, 'WaitForTarget')).toBe(2);
    expect(entered(run, 'Reconcile')).toBe(1);
    // The lost COMMIT had landed: reconcile proves it from the receipt.
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLISHED');
  }, 120_000);

  it('a target that stays down: after the policy’s last probe it stops, paged, with nothing changed', async () => {
    const { invocationId, automatic } = await failedDelivery();
    const before = await loadInvocation(world.stores.ports, invocationId);
    gate.shut();
    const run = await reconcileThroughGate(automatic);
    expect(run.status).toBe('FAILED');
    expect(run.error).toBe('Delivery.TargetUnreachable');
    expect(run.cause).toContain(`through ${POLICY.attempts} probe(s)`);
    expect(run.cause).toContain(`cutpoint delivery inspect ${invocationId}`);
    expect(entered(run, 'ProbeTarget')).toBe(POLICY.attempts);
    expect(entered(run, 'WaitForTarget')).toBe(POLICY.attempts - 1);
    expect(entered(run, 'Reconcile')).toBe(0);
    const after = await loadInvocation(world.stores.ports, invocationId);
    expect(after).toEqual(before);
    expect((await loadCustody(world.stores.ports, after.targetId))?.state).toBe('HELD');
  }, 120_000);

  it('an operator’s reconcile does not wait: it acts at once', async () => {
    const { invocationId, automatic } = await failedDelivery();
    const { manifestText, selector } = JSON.parse((automatic as { originalInput: string }).originalInput) as {
      manifestText: string;
      selector: string;
    };
    const run = await reconcileThroughGate({ invocationId, manifestText, selector, yes: true });
    expect(run.error, `${run.error}: ${run.cause}`).toBeUndefined();
    expect(entered(run, 'ProbeTarget')).toBe(0);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLISHED');
  }, 120_000);
});
