import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { windowPartitionNameOf } from '../../src/domain/delivery/window-partition.js';
import {
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { publishCrashingAfterCommit, runLosingCommitAnswer, stepsThrough } from '../support/delivery-steps.js';

/**
 * Delivery into a window-partitioned target (PostgreSQL, partitioned by RANGE on the time
 * column with a partition for the route's window): the publication swaps the stage in as
 * the window's partition, cleanup proves the stage gone as a stage by its attachment
 * (ATTACHED), and custody is released; a crash after the publication COMMIT and a lost
 * COMMIT answer are recovered to CUSTODY_RELEASED from the receipt.
 */

const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const manifestText = fixedWindowManifest({ daily: { table: 'events', chunkRows: 50, partRows: 600 } });
const selector = '/config/route.yaml#daily';
const route = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');
const sourceRows = generateEvents(3000, 144_000);
const windowIds = windowIdsOf(sourceRows, WINDOW);
const PARTITION = windowPartitionNameOf(
  { schema: 'dwh', table: 'events' },
  { start: new Date(WINDOW.start), end: new Date(WINDOW.end) },
);

const beginInput = (invocationId: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector,
});
const recoveryInput = (invocationId: string): RecoveryInput => ({ invocationId, manifestText, selector });

let world: DeliveryWorld;
let deps: DeliveryDeps;
let recoveryDeps: RecoveryDeps;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows });
  await world.admin
    .query(`CREATE TABLE dwh.events (event_id bigint NOT NULL, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text,
    PRIMARY KEY (event_id, event_time)) PARTITION BY RANGE (event_time)`);
  await world.admin.query(
    `CREATE TABLE dwh.events_before PARTITION OF dwh.events FOR VALUES FROM (MINVALUE) TO ('${WINDOW.start}')`,
  );
  await world.admin.query(
    `CREATE TABLE dwh.events_window PARTITION OF dwh.events FOR VALUES FROM ('${WINDOW.start}') TO ('${WINDOW.end}')`,
  );
  await world.admin.query(
    `CREATE TABLE dwh.events_after PARTITION OF dwh.events FOR VALUES FROM ('${WINDOW.end}') TO (MAXVALUE)`,
  );
  // A row outside the window that must survive, and a stale row inside it that the swap must remove.
  await world.admin.query(
    `INSERT INTO dwh.events VALUES (1, '2026-11-01T00:02:24Z', 'old', 1, 'outside'), (99999, '2026-11-02T12:00:00Z', 'stale', 0, 'inside')`,
  );
  deps = world.deps(route);
  recoveryDeps = world.recoveryDeps(route, forbiddenSource());
});

afterAll(() => world?.close());

/** The window partition's object id, and the target's rows outside the window. */
async function targetFacts(): Promise<{ partitionId: string | undefined; outside: string[] }> {
  const partition = await world.admin.query<{ oid: string }>(
    `SELECT c.oid::text AS oid FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'dwh.events'::regclass AND c.relname = $1`,
    [PARTITION],
  );
  const outside = await world.admin.query<{ id: string }>(
    `SELECT event_id::text AS id FROM dwh.events WHERE event_time < $1 OR event_time >= $2 ORDER BY 1`,
    [WINDOW.start, WINDOW.end],
  );
  return { partitionId: partition.rows[0]?.oid, outside: outside.rows.map((r) => r.id) };
}

/** The run ended with the stage swapped in: exactly the window, the journal's stage is the partition, custody released with the attachment proof. */
async function expectSwapped(invocationId: string): Promise<void> {
  const record = await loadInvocation(world.stores.ports, invocationId);
  expect(record.state).toBe('CUSTODY_RELEASED');
  expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
  expect(await targetFacts()).toEqual({ partitionId: record.facts.staging?.objectId, outside: ['1'] });
  expect(record.facts.absence).toEqual({
    table: record.facts.staging?.table,
    objectId: record.facts.staging?.objectId,
    attached: { schema: 'dwh', table: PARTITION },
  });
  expect(record.facts.publication?.stagingObjectId).toBe(record.facts.staging?.objectId);
  expect(await world.target.probeReceipt(invocationId)).toMatchObject({
    method: 'partition_swap',
    rows: windowIds.length,
  });
  expect(await world.receiptsOf(invocationId)).toBe(1);
  expect(await world.stagesLeft()).toBe(0);
  expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
}

describe('delivery into a window-partitioned PostgreSQL target', () => {
  it('deliverWindow swaps the stage in as the window partition and reaches CUSTODY_RELEASED; the target holds exactly the window', async () => {
    const invocationId = newInvocationId();
    const run = await deliverWindow(beginInput(invocationId), deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(run.steps.find((s) => s.step === 'cleanup')).toMatchObject({ acted: true, state: 'CUSTODY_RELEASED' });
    await expectSwapped(invocationId);
    // The old window partition (and its stale row) is gone.
    expect((await world.admin.query(`SELECT 1 FROM pg_class WHERE relname = 'events_window'`)).rowCount).toBe(0);
  });

  it('a crash after the publication COMMIT: resume resolves it from the receipt, cleanup proves the attachment → CUSTODY_RELEASED', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps);
    await publishCrashingAfterCommit(world, begun, deps);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('VERIFIED_EOF');
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    await expectSwapped(invocationId);
  });

  it('a lost COMMIT answer: PUBLICATION_UNKNOWN, reconcile → PUBLISHED from the receipt, resume → CUSTODY_RELEASED', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await runLosingCommitAnswer(world, begun, deps);
    expect(await reconcile(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'PUBLISHED' });
    expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    await expectSwapped(invocationId);
    expect(await world.journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
  });
});
