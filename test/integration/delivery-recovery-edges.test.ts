import { SEQ_LIMIT } from '../../src/domain/delivery/parts.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { quality } from '../../src/delivery/steps/quality.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { publish } from '../../src/delivery/steps/publish.js';
import { stagingTableNameOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { Clock } from '../../src/ports/clock.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import {
  eventsTableDdl,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { publishCrashingAfterCommit, stepsThrough } from '../support/delivery-steps.js';

/**
 * Recovery edges (docs/rules.md#recovery-actions) the other files do not reach (issue 8): an EMPTY_STAGING
 * invocation whose stage was created but never journaled, receipt-first resume, the
 * diagram's WRITING_UNKNOWN → INCIDENT_RETAINED, PUBLICATION_UNKNOWN → REEXTRACT_REQUIRED,
 * and a rolling window recovered after the clock moved past midnight. Real components
 * (test/support/delivery-world.ts); every scenario has a target table of its own, since an
 * incident keeps that target's custody.
 */

const STEP_MS = 144_000; // 600 rows a day
const rows = generateEvents(3000, STEP_MS);
const FIXED = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const TABLES = [
  'e_crash',
  'e_before',
  'e_foreign',
  'e_receipt',
  'e_writing',
  'e_unpub',
  'e_rolling',
  'e_unrunnable',
] as const;
type Table = (typeof TABLES)[number];

const routeText = (table: Table, window: string) => `  ${table}:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: ${window}
    target: { binding: warehouse, table: dwh.${table}, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time${table === 'e_unrunnable' ? ', note' : ''}]
    chunk_rows: 300`;
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
${TABLES.map((t) => routeText(t, t === 'e_rolling' ? '{ kind: rolling, days: 1, boundary: day }' : '{ kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }')).join('\n')}
`;
const FILE = '/config/route.yaml';
const manifest = parseManifest(manifestText, FILE);

let world: DeliveryWorld;
let refusing: GuardedSource;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows });
  for (const t of TABLES) await world.admin.query(eventsTableDdl(t));
  refusing = forbiddenSource();
}, 120_000);

afterAll(() => world?.close());

/** Deps for `table`'s route, optionally with the authority ports reading another clock. */
function depsOf(table: Table, clock?: Clock): DeliveryDeps {
  const deps = world.deps(selectRoute(manifest, table));
  return clock ? { ...deps, ports: { ...deps.ports, clock } } : deps;
}
function recoveryDepsOf(table: Table, clock?: Clock): RecoveryDeps {
  const deps = world.recoveryDeps(selectRoute(manifest, table), refusing);
  return clock ? { ...deps, ports: { ...deps.ports, clock } } : deps;
}
const beginInput = (invocationId: string, table: Table): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector: `${FILE}#${table}`,
});
const recoveryInput = (invocationId: string, table: Table): RecoveryInput => ({
  invocationId,
  manifestText,
  selector: `${FILE}#${table}`,
});

async function stageExists(invocationId: string): Promise<boolean> {
  const r = await world.admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname = $1`,
    [stagingTableNameOf(invocationId)],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Begins an invocation and crashes its create-staging step at the target cut point with `kind`. */
async function crashAtCreateStaging(table: Table, kind: 'crash-after' | 'crash-before') {
  const invocationId = newInvocationId();
  const deps = depsOf(table);
  const begun = await begin(beginInput(invocationId, table), deps);
  const fault = world.targetFaults.arm(`delivery.target.create-staging:${kind}`);
  try {
    await expect(createStaging(begun, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
  } finally {
    world.targetFaults.disarm();
  }
  expect(fault.fired).toHaveLength(1);
  const record = await loadInvocation(world.stores.ports, invocationId);
  expect(record).toMatchObject({ state: 'EMPTY_STAGING', facts: { ownedStagesRecorded: false } });
  expect(record.facts.staging).toBeUndefined();
  return { invocationId, begun };
}

/** Drives `table`'s invocation to VERIFIED_EOF with the in-process steps. */
async function toVerified(table: Table, deps = depsOf(table)) {
  const invocationId = newInvocationId();
  const begun = await begin(beginInput(invocationId, table), deps);
  await stepsThrough(begun, deps);
  return { invocationId, begun, deps };
}

/** Moves one staged row to another chunk seq: the stage's total is unchanged, its per-chunk receipts no longer hold. */
async function skewStage(invocationId: string): Promise<void> {
  const stage = `dwh.${stagingTableNameOf(invocationId)}`;
  await world.admin.query(
    `UPDATE ${stage} SET _cutpoint_seq = 1 WHERE event_id = (SELECT min(event_id) FROM ${stage} WHERE _cutpoint_seq = 0)`,
  );
}

describe('EMPTY_STAGING with no recorded stage (a crash between CREATE and its journal write)', () => {
  it('offers retire, which finds the stage by its derived name and owner marker, journals it, drops exactly it, proves absence → RETIRED, custody released', async () => {
    const { invocationId } = await crashAtCreateStaging('e_crash', 'crash-after');
    expect(await stageExists(invocationId)).toBe(true);
    expect(await inspectInvocation(world.stores.ports, invocationId)).toMatchObject({
      state: 'EMPTY_STAGING',
      permitted_actions: ['retire'],
      holds_custody: true,
    });

    expect(await retire(recoveryInput(invocationId, 'e_crash'), recoveryDepsOf('e_crash'))).toMatchObject({
      state: 'RETIRED',
      projection: { permitted_actions: [] },
    });
    expect(await stageExists(invocationId)).toBe(false);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts).toMatchObject({
      ownedStagesRecorded: true,
      absence: { objectId: record.facts.staging?.objectId },
    });
    expect(record.facts.staging?.table).toEqual({ schema: 'dwh', table: stagingTableNameOf(invocationId) });
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    expect(await world.journalTransitions(invocationId)).toEqual(['EMPTY_STAGING>RETIRED']);
    expect(refusing.attempts).toHaveLength(0);
  }, 60_000);

  it('crash before the CREATE: retire proves the derived name absent → RETIRED', async () => {
    const { invocationId } = await crashAtCreateStaging('e_before', 'crash-before');
    expect(await stageExists(invocationId)).toBe(false);
    expect(await retire(recoveryInput(invocationId, 'e_before'), recoveryDepsOf('e_before'))).toMatchObject({
      state: 'RETIRED',
    });
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.absence).toEqual({ table: { schema: 'dwh', table: stagingTableNameOf(invocationId) } });
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED' });
  }, 60_000);

  it('a table under the derived name without our owner marker is never touched: INCIDENT_RETAINED, custody held', async () => {
    const { invocationId } = await crashAtCreateStaging('e_foreign', 'crash-before');
    await world.admin.query(`CREATE TABLE dwh.${stagingTableNameOf(invocationId)} (x int)`);
    await expect(retire(recoveryInput(invocationId, 'e_foreign'), recoveryDepsOf('e_foreign'))).rejects.toMatchObject({
      code: 'delivery.retire_not_ours',
      state: 'INCIDENT_RETAINED',
    });
    expect(await stageExists(invocationId)).toBe(true);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('INCIDENT_RETAINED');
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
  }, 60_000);
});

describe('receipt first', () => {
  it('resume of a published invocation journaled VERIFIED_EOF (a crash after the COMMIT) whose stage no longer verifies: the receipt decides (PUBLISHED → CUSTODY_RELEASED), never REEXTRACT_REQUIRED', async () => {
    const { invocationId, begun, deps } = await toVerified('e_receipt');
    await publishCrashingAfterCommit(world, begun, deps);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    await skewStage(invocationId);
    expect(await resume(recoveryInput(invocationId, 'e_receipt'), recoveryDepsOf('e_receipt'))).toMatchObject({
      state: 'CUSTODY_RELEASED',
    });
    expect(await world.journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    expect(await world.targetWindowIds('e_receipt', FIXED)).toEqual(windowIdsOf(rows, FIXED));
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await stageExists(invocationId)).toBe(false);
  }, 60_000);
});

describe('untested seed edges', () => {
  it('WRITING_UNKNOWN → INCIDENT_RETAINED: the stage holds rows no journaled receipt explains; reconcile retains custody and the stage (exit 1)', async () => {
    const invocationId = newInvocationId();
    world.targetFaults.arm('delivery.target.load-chunk:fail@2*');
    try {
      await expect(deliverWindow(beginInput(invocationId, 'e_writing'), depsOf('e_writing'))).rejects.toMatchObject({
        name: 'Cutpoint.EffectFailed',
      });
    } finally {
      world.targetFaults.disarm();
    }
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('WRITING_UNKNOWN');
    await world.admin.query(
      `INSERT INTO dwh.${stagingTableNameOf(invocationId)} (event_id, event_time, _cutpoint_seq) VALUES (999999, '2026-11-02T01:00:00Z', ${SEQ_LIMIT - 1})`,
    ); // a seq no planned part owns
    await expect(
      reconcile(recoveryInput(invocationId, 'e_writing'), recoveryDepsOf('e_writing')),
    ).rejects.toMatchObject({ code: 'delivery.reconcile_ambiguous', state: 'INCIDENT_RETAINED' });
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('INCIDENT_RETAINED');
    expect((await world.journalTransitions(invocationId)).at(-1)).toBe('WRITING_UNKNOWN>INCIDENT_RETAINED');
    expect(await inspectInvocation(world.stores.ports, invocationId)).toMatchObject({
      permitted_actions: [],
      holds_custody: true,
    });
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    expect(await stageExists(invocationId)).toBe(true);
    expect(await world.receiptsOf(invocationId)).toBe(0);
  }, 60_000);

  it('PUBLICATION_UNKNOWN → REEXTRACT_REQUIRED: no receipt (the COMMIT never reached the target) and a stage that no longer verifies; retire then → RETIRED, nothing published', async () => {
    const { invocationId, begun, deps } = await toVerified('e_unpub');
    world.targetFaults.arm('delivery.publish.commit:lose-request');
    try {
      expect(await publish(begun, deps)).toMatchObject({ state: 'PUBLICATION_UNKNOWN' });
    } finally {
      world.targetFaults.disarm();
    }
    await skewStage(invocationId);
    expect(await reconcile(recoveryInput(invocationId, 'e_unpub'), recoveryDepsOf('e_unpub'))).toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      projection: { permitted_actions: ['retire'] },
    });
    expect(await retire(recoveryInput(invocationId, 'e_unpub'), recoveryDepsOf('e_unpub'))).toMatchObject({
      state: 'RETIRED',
    });
    expect((await world.journalTransitions(invocationId)).slice(-3)).toEqual([
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>REEXTRACT_REQUIRED',
      'REEXTRACT_REQUIRED>RETIRED',
    ]);
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect(await world.targetWindowIds('e_unpub', FIXED)).toEqual([]);
    expect(await stageExists(invocationId)).toBe(false);
  }, 60_000);

  it('a quality check the target cannot run on the stage (a column gone since Begin checked it) fails the stage: REEXTRACT_REQUIRED, retire permitted and releasing custody — never VERIFIED_EOF held for a resume that can never pass', async () => {
    const { invocationId, begun, deps } = await toVerified('e_unrunnable');
    // Past Begin's up-front check: the column quality.not_null names leaves the stage.
    await world.admin.query(`ALTER TABLE dwh.${stagingTableNameOf(invocationId)} DROP COLUMN note`);
    const judged = await quality(begun, deps);
    expect(judged).toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      failures: [expect.stringMatching(/^unrunnable: a quality check cannot run on the stage: .*42703/)],
    });
    expect(await inspectInvocation(world.stores.ports, invocationId)).toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      permitted_actions: ['retire'],
      holds_custody: true,
    });
    // resume is not offered (it could never pass); retire releases custody.
    await expect(
      resume(recoveryInput(invocationId, 'e_unrunnable'), recoveryDepsOf('e_unrunnable')),
    ).rejects.toMatchObject({ code: 'delivery.recovery_action_not_permitted' });
    expect(await retire(recoveryInput(invocationId, 'e_unrunnable'), recoveryDepsOf('e_unrunnable'))).toMatchObject({
      state: 'RETIRED',
    });
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect((await loadCustody(world.stores.ports, record.targetId))?.state).not.toBe('HELD');
    expect(await stageExists(invocationId)).toBe(false);
    expect(await world.receiptsOf(invocationId)).toBe(0);
  }, 60_000);

  it('a rolling window recovered after the clock moved past midnight: the sealed window is published, not one re-derived from the clock', async () => {
    let now = new Date('2026-11-04T23:50:00.000Z');
    const clock: Clock = { now: () => now };
    const sealed = { start: '2026-11-03T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
    const { invocationId, begun, deps } = await toVerified('e_rolling', depsOf('e_rolling', clock));
    expect((await loadInvocation(world.stores.ports, invocationId)).sealed.window).toMatchObject(sealed);
    world.targetFaults.arm('delivery.publish.commit:lose-response');
    try {
      expect(await publish(begun, deps)).toMatchObject({ state: 'PUBLICATION_UNKNOWN' });
    } finally {
      world.targetFaults.disarm();
    }
    now = new Date('2026-11-05T00:10:00.000Z'); // a rolling day resolved now would be 2026-11-04
    expect(await reconcile(recoveryInput(invocationId, 'e_rolling'), recoveryDepsOf('e_rolling', clock))).toMatchObject(
      { state: 'PUBLISHED' },
    );
    expect(await resume(recoveryInput(invocationId, 'e_rolling'), recoveryDepsOf('e_rolling', clock))).toMatchObject({
      state: 'CUSTODY_RELEASED',
    });
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.sealed.window).toMatchObject(sealed);
    expect(record.facts.checkpoint).toMatchObject({ windowEnd: sealed.end, moved: true });
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'e_rolling')).toMatchObject({
      windowEnd: sealed.end,
    });
    const published = await world.admin.query<{ id: string }>('SELECT event_id::text AS id FROM dwh.e_rolling');
    expect(published.rows.map((r) => r.id).sort()).toEqual(windowIdsOf(rows, sealed));
    const receipt = await world.admin.query<{ s: Date; e: Date }>(
      'SELECT window_start AS s, window_end AS e FROM dwh.cutpoint_receipts WHERE invocation_id = $1',
      [invocationId],
    );
    expect(receipt.rows.map((r) => [r.s.toISOString(), r.e.toISOString()])).toEqual([[sealed.start, sealed.end]]);
  }, 60_000);
});
