import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../../src/adapters/postgres/target.js';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliverWindow, runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys, journalOf, loadCustody, loadInvocation, transition } from '../../src/delivery/journal-store.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { extractChunks } from '../../src/delivery/steps/extract-chunks.js';
import { loadChunks } from '../../src/delivery/steps/load-chunks.js';
import { publish } from '../../src/delivery/steps/publish.js';
import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { invocationIdFrom } from '../../src/domain/delivery/identifiers.js';
import { canTransition, isJournalState } from '../../src/domain/delivery/journal-states.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { forbiddenSource, type GuardedSource, type SourcePort } from '../../src/ports/source.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { seedSourceEvents } from '../support/delivery-source.js';

/**
 * The live recovery actions (seed 004: reconcile, resume, retire) on real components:
 * DynamoDB Local and the S3 emulator, embedded ClickHouse (chdb, opened once) as the
 * source of the original run, embedded PostgreSQL as the target. Each scenario drives a
 * real delivery into a recoverable state with faults, then applies exactly the permitted
 * actions; recovery runs with a refusing source and must never call it.
 */

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const STEP_MS = 144_000;
const GENERATED = 3000;
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
      assertions:
        - name: no_negative_amounts
          sql: "SELECT COUNT(*) FROM {staging} WHERE amount < 0"
          expect: 0
    chunk_rows: 50
`;
const selector = '/config/route.yaml#daily';
const route = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');

const newInvocationId = () => invocationIdFrom(new Uint8Array(randomBytes(16)));
const beginInput = (invocationId: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector,
});
const recoveryInput = (invocationId: string): RecoveryInput => ({ invocationId, manifestText, selector });

const sourceRows: Array<{ event_id: number; event_time: number; region: string; amount: number; note: string | null }> = [];
for (let i = 1; i <= GENERATED; i++) {
  sourceRows.push({ event_id: i, event_time: BASE + i * STEP_MS, region: i % 3 === 0 ? 'eu' : 'us', amount: (i % 1000) / 8, note: i % 2 === 0 ? null : `note ${i}` });
}
const windowIds = sourceRows.filter((r) => r.event_time >= START_MS && r.event_time < END_MS).map((r) => String(r.event_id)).sort();

let stores: TestStores;
let ch: ClickHouseHandle;
let source: SourcePort;
let pgServer: EmbeddedPostgres;
let admin: pg.Client;
let target: PostgresTarget;
const targetFaults = new FaultSwitch();
let deps: DeliveryDeps;
/** Every recovery action gets this refusing source; it must see no call at all. */
let refusing: GuardedSource;
let recoveryDeps: RecoveryDeps;

beforeAll(async () => {
  stores = await freshStores();
  ch = await openClickHouse({ kind: 'embedded' });
  await seedSourceEvents(ch, sourceRows);
  source = createClickHouseSource(ch, { closeHandle: false });
  pgServer = await startEmbeddedPostgres();
  admin = new pg.Client({ connectionString: pgServer.connectionString });
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query('CREATE SCHEMA dwh');
  await admin.query('CREATE TABLE dwh.events (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text)');
  target = openPostgresTarget({ connectionString: pgServer.connectionString, faults: targetFaults, receiptTable: { schema: 'dwh', table: 'cutpoint_receipts' } });
  deps = { ports: stores.ports, target, source, route };
  refusing = forbiddenSource();
  recoveryDeps = { ports: stores.ports, target, route, source: refusing };
});

afterAll(async () => {
  await target?.close();
  await admin?.end();
  await pgServer?.stop();
  await ch?.close();
});

async function targetWindowIds(table = 'dwh.events'): Promise<string[]> {
  const result = await admin.query<{ id: string }>(`SELECT event_id::text AS id FROM ${table} WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`, [WINDOW.start, WINDOW.end]);
  return result.rows.map((r) => r.id).sort();
}

async function stagesLeft(): Promise<number> {
  const result = await admin.query(`SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname LIKE 'cutpoint_stg_%'`);
  return result.rowCount ?? 0;
}

async function receiptsOf(invocationId: string): Promise<number> {
  return (await admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount ?? 0;
}

/** Everything recovery could change, as one comparable text. */
async function snapshot(invocationId: string): Promise<string> {
  const a = stores.ports.authority;
  const record = await loadInvocation(stores.ports, invocationId);
  const parts = await Promise.all([
    a.query(`target#${record.targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(record.targetId), 'inv#'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
  ]);
  const events = (await admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows;
  const receipts = (await admin.query('SELECT * FROM dwh.cutpoint_receipts ORDER BY invocation_id')).rows;
  return JSON.stringify([...parts, events, receipts, await stagesLeft()]);
}

/** The journal's transitions, each a seed state moved along a permitted edge. */
async function journalTransitions(invocationId: string): Promise<string[]> {
  const entries = await journalOf(stores.ports.authority, invocationId).read();
  const moves: string[] = [];
  for (const e of entries) {
    const { from, to } = e.data as { from?: unknown; to?: unknown };
    if (to === undefined) continue;
    expect(isJournalState(from) && isJournalState(to) && canTransition(from, to)).toBe(true);
    moves.push(`${String(from)}>${String(to)}`);
  }
  return moves;
}

function expectNoSourceCall(): void {
  expect(refusing.attempts).toHaveLength(0);
}

describe('live recovery actions', () => {
  it('PUBLICATION_UNKNOWN (lost COMMIT acknowledgement): a not-permitted resume and a mismatched authority are refused without writes; reconcile → PUBLISHED, resume → CUSTODY_RELEASED; the old session is fenced', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    targetFaults.arm('delivery.publish.commit:lose-response');
    try {
      expect((await runDeliverySteps(begun, deps)).state).toBe('PUBLICATION_UNKNOWN');
    } finally {
      targetFaults.disarm();
    }
    const before = await snapshot(invocationId);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({ code: 'delivery.recovery_action_not_permitted' });
    // The same objects under another bucket: the sealed work root no longer matches.
    const elsewhere = Object.create(stores.ports.objects, { location: { value: '/s3/elsewhere' } }) as typeof stores.ports.objects;
    await expect(reconcile(recoveryInput(invocationId), { ...recoveryDeps, ports: { ...stores.ports, objects: elsewhere } })).rejects.toMatchObject({
      code: 'delivery.recovery_authority_mismatch',
    });
    await expect(reconcile({ ...recoveryInput(invocationId), targetIdentity: { ...(await target.identity()), system: 'other' } }, recoveryDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_authority_mismatch',
    });
    expect(await snapshot(invocationId)).toBe(before);

    const reconciled = await reconcile(recoveryInput(invocationId), recoveryDeps);
    expect(reconciled).toMatchObject({ state: 'PUBLISHED', projection: { state: 'PUBLISHED', permitted_actions: ['resume'] } });
    // The original session is a zombie now: it cannot act.
    await expect(runDeliverySteps(begun, deps)).rejects.toMatchObject({ name: 'Delivery.Fenced' });
    expect((await loadInvocation(stores.ports, invocationId)).state).toBe('PUBLISHED');

    const resumed = await resume(recoveryInput(invocationId), recoveryDeps);
    expect(resumed).toMatchObject({ state: 'CUSTODY_RELEASED', projection: { state: 'CUSTODY_RELEASED', permitted_actions: [] } });
    expect(await targetWindowIds()).toEqual(windowIds);
    expect(await receiptsOf(invocationId)).toBe(1);
    expect(await stagesLeft()).toBe(0);
    const record = await loadInvocation(stores.ports, invocationId);
    expect(record.facts.checkpoint?.moved).toBe(true);
    expect(await loadCheckpoint(stores.ports, record.targetId, 'daily')).toMatchObject({ windowEnd: WINDOW.end, invocationId, version: 1 });
    expect(await loadCustody(stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    expect(await journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    // Repeating a finished action is refused and changes nothing.
    const done = await snapshot(invocationId);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({ code: 'delivery.recovery_action_not_permitted' });
    expect(await snapshot(invocationId)).toBe(done);
    expectNoSourceCall();
  });

  it('PUBLICATION_UNKNOWN without a commit: reconcile proves non-publication → VERIFIED_EOF; resume publishes once → CUSTODY_RELEASED, the checkpoint not moved again', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await createStaging(begun, deps);
    await extractChunks(begun, deps);
    await loadChunks(begun, deps);
    expect((await verifyEof(begun, deps)).state).toBe('VERIFIED_EOF');
    // The publish acknowledgement is lost before the COMMIT reached the target.
    await transition(stores.ports, { targetId: begun.targetId, invocationId }, { from: 'VERIFIED_EOF', to: 'PUBLICATION_UNKNOWN', fence: begun.fence, transitionId: `publish-unknown.${invocationId}` });
    expect(await receiptsOf(invocationId)).toBe(0);

    expect(await reconcile(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'VERIFIED_EOF', projection: { permitted_actions: ['resume'] } });
    expect(await receiptsOf(invocationId)).toBe(0);
    expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    expect(await targetWindowIds()).toEqual(windowIds);
    expect(await receiptsOf(invocationId)).toBe(1);
    expect(await stagesLeft()).toBe(0);
    const record = await loadInvocation(stores.ports, invocationId);
    expect(record.facts.checkpoint?.moved).toBe(false);
    expect(await loadCheckpoint(stores.ports, record.targetId, 'daily')).toMatchObject({ version: 1 });
    expect(await journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    expectNoSourceCall();
  });

  it('a crash after the publication COMMIT: resume resolves it from the exact receipt before any target write', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await createStaging(begun, deps);
    await extractChunks(begun, deps);
    await loadChunks(begun, deps);
    await verifyEof(begun, deps);
    targetFaults.arm('delivery.publish.commit:crash-after');
    try {
      await expect(publish(begun, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    } finally {
      targetFaults.disarm();
    }
    expect((await loadInvocation(stores.ports, invocationId)).state).toBe('VERIFIED_EOF');
    expect(await receiptsOf(invocationId)).toBe(1);
    // Any publish attempt would fail: the receipt must resolve it first.
    const spy = targetFaults.arm('delivery.publish.commit:fail*');
    try {
      expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    } finally {
      targetFaults.disarm();
    }
    expect(spy.fired).toHaveLength(0);
    expect(await receiptsOf(invocationId)).toBe(1);
    expect(await targetWindowIds()).toEqual(windowIds);
    expect(await stagesLeft()).toBe(0);
    expect((await journalTransitions(invocationId)).slice(1)).toEqual(['WRITING_UNKNOWN>VERIFIED_EOF', 'VERIFIED_EOF>PUBLISHED', 'PUBLISHED>SUCCEEDED', 'SUCCEEDED>CUSTODY_RELEASED']);
    expectNoSourceCall();
  });

  it('WRITING_UNKNOWN (a persistent load fault): reconcile proves a partial stage → PARTIAL_PROVED; retire drops the exact stage → RETIRED; nothing published', async () => {
    const invocationId = newInvocationId();
    const publishedBefore = (await admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows;
    targetFaults.arm('delivery.target.load-chunk:fail@4*');
    try {
      await expect(deliverWindow(beginInput(invocationId), deps)).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    } finally {
      targetFaults.disarm();
    }
    const record = await loadInvocation(stores.ports, invocationId);
    expect(record.state).toBe('WRITING_UNKNOWN');
    expect(await stagesLeft()).toBe(1);
    await expect(retire(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({ code: 'delivery.recovery_action_not_permitted' });

    expect(await reconcile(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'PARTIAL_PROVED', projection: { permitted_actions: ['retire'] } });
    expect(await stagesLeft()).toBe(1);
    expect(await retire(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'RETIRED', projection: { permitted_actions: [] } });
    expect(await stagesLeft()).toBe(0);
    expect(await receiptsOf(invocationId)).toBe(0);
    expect((await admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows).toEqual(publishedBefore);
    expect(await loadCustody(stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    expect(await loadCheckpoint(stores.ports, record.targetId, 'daily')).toMatchObject({ version: 1 });
    expect(await journalTransitions(invocationId)).toEqual(['EMPTY_STAGING>WRITING_UNKNOWN', 'WRITING_UNKNOWN>PARTIAL_PROVED', 'PARTIAL_PROVED>RETIRED']);
    expectNoSourceCall();
  });

  it('REEXTRACT_REQUIRED (a quality failure): retire drops the stage → RETIRED; the target table stays empty', async () => {
    const strictText = manifestText
      .replace('daily:', 'strict:')
      .replace('table: dwh.events,', 'table: dwh.events_strict,')
      .replace('no_negative_amounts', 'all_negative_amounts')
      .replace('WHERE amount < 0', 'WHERE amount >= 0');
    const strict = selectRoute(parseManifest(strictText, '/config/strict.yaml'), 'strict');
    await admin.query('CREATE TABLE dwh.events_strict (LIKE dwh.events INCLUDING ALL)');
    const invocationId = newInvocationId();
    const run = await deliverWindow({ ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' }, { ...deps, route: strict });
    expect(run.state).toBe('REEXTRACT_REQUIRED');
    const input = { ...recoveryInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' };
    const strictDeps = { ...recoveryDeps, route: strict };
    // The manifest must be the exact text sealed: an edited copy is refused, nothing touched.
    await expect(retire({ ...input, manifestText: `${strictText}# edited\n` }, strictDeps)).rejects.toMatchObject({ code: 'delivery.recovery_authority_mismatch' });
    expect(await stagesLeft()).toBe(1);
    expect(await retire(input, strictDeps)).toMatchObject({ state: 'RETIRED' });
    expect(await stagesLeft()).toBe(0);
    expect(await targetWindowIds('dwh.events_strict')).toEqual([]);
    expect(await receiptsOf(invocationId)).toBe(0);
    expect((await journalTransitions(invocationId)).at(-1)).toBe('REEXTRACT_REQUIRED>RETIRED');
    expectNoSourceCall();
  });
});
