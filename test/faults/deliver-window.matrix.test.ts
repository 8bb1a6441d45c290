import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../../src/adapters/postgres/target.js';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { DELIVERY_CUT_POINTS, TARGET_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation, loadInvocation, type InvocationRecord } from '../../src/delivery/journal-store.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput, RecoveryResult } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { invocationIdFrom } from '../../src/domain/delivery/identifiers.js';
import { JOURNAL_STATES, permittedActions, type JournalState, type LiveAction } from '../../src/domain/delivery/journal-states.js';
import { parseManifest, selectRoute, type SelectedRoute } from '../../src/domain/delivery/manifest.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { guardedSource, type SourcePort } from '../../src/ports/source.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { seedSourceEvents } from '../support/delivery-source.js';

/**
 * The deliver-window fault matrix (issue 4): every cut point the forward path hits × every
 * fault kind, armed persistently so the in-process reruns cannot absorb it. After the
 * faulted run, the journal state must be one of the seed's, inspect must offer exactly the
 * seed's permitted actions, and applying them (with a source armed to refuse: recovery
 * never opens ClickHouse) must end in CUSTODY_RELEASED (every window row exactly once, one
 * receipt, the checkpoint advanced once) or RETIRED (nothing published, no receipt, the
 * checkpoint not moved). Each case delivers to its own target table, so custody and
 * checkpoints are per case. Real components: DynamoDB Local and the S3 emulator, embedded
 * ClickHouse (chdb, one engine per file) as the source, embedded PostgreSQL as the target.
 */

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const STEP_MS = 864_000; // 100 rows a day
const GENERATED = 500; // five days
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

const manifestTextFor = (table: string) => `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.${table}, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
    chunk_rows: 50
`;
const selector = '/config/route.yaml#daily';

const sourceRows: Array<{ event_id: number; event_time: number; region: string; amount: number; note: string | null }> = [];
for (let i = 1; i <= GENERATED; i++) {
  sourceRows.push({ event_id: i, event_time: BASE + i * STEP_MS, region: i % 3 === 0 ? 'eu' : 'us', amount: (i % 1000) / 8, note: i % 2 === 0 ? null : `note ${i}` });
}
const windowIds = sourceRows.filter((r) => r.event_time >= START_MS && r.event_time < END_MS).map((r) => String(r.event_id)).sort();

/** The forward path's effects (the seal is not a separate effect of the in-process run). */
const FORWARD_CUT_POINTS = [
  DELIVERY_CUT_POINTS.custodyAcquire,
  DELIVERY_CUT_POINTS.stagingRecord,
  DELIVERY_CUT_POINTS.chunkPut,
  DELIVERY_CUT_POINTS.chunkReceipt,
  DELIVERY_CUT_POINTS.loadReceipt,
  DELIVERY_CUT_POINTS.journalTransition,
  DELIVERY_CUT_POINTS.checkpointAdvance,
  DELIVERY_CUT_POINTS.evidencePut,
  DELIVERY_CUT_POINTS.custodyRelease,
  TARGET_CUT_POINTS.createStaging,
  TARGET_CUT_POINTS.loadChunk,
  TARGET_CUT_POINTS.publishCommit,
  TARGET_CUT_POINTS.dropStaging,
];
const TARGET_POINTS = new Set<string>(Object.values(TARGET_CUT_POINTS));
const cases = FORWARD_CUT_POINTS.flatMap((cutPoint) => FAULT_KINDS.map((kind) => [cutPoint, kind] as const));
const ACTION_ORDER: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];
const ACTIONS: Record<LiveAction, (input: RecoveryInput, deps: RecoveryDeps) => Promise<RecoveryResult>> = { reconcile, resume, retire };

let stores: TestStores;
let ch: ClickHouseHandle;
let source: SourcePort;
let pgServer: EmbeddedPostgres;
let admin: pg.Client;
let target: PostgresTarget;
const targetFaults = new FaultSwitch();
let tableSeq = 0;

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
  target = openPostgresTarget({ connectionString: pgServer.connectionString, faults: targetFaults, receiptTable: { schema: 'dwh', table: 'cutpoint_receipts' } });
}, 120_000);

afterAll(async () => {
  await target?.close();
  await admin?.end();
  await pgServer?.stop();
  await ch?.close();
});

async function targetWindowIds(table: string): Promise<string[]> {
  const result = await admin.query<{ id: string }>(`SELECT event_id::text AS id FROM dwh.${table} WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`, [WINDOW.start, WINDOW.end]);
  return result.rows.map((r) => r.id).sort();
}

async function stagesLeft(): Promise<number> {
  const result = await admin.query(`SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname LIKE 'cutpoint_stg_%'`);
  return result.rowCount ?? 0;
}

async function receiptsOf(invocationId: string): Promise<number> {
  const exists = await admin.query(`SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname = 'cutpoint_receipts'`);
  if (!exists.rowCount) return 0;
  return (await admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount ?? 0;
}

async function tryLoad(invocationId: string): Promise<InvocationRecord | undefined> {
  try {
    return await loadInvocation(stores.ports, invocationId);
  } catch (error) {
    if ((error as { code?: string }).code === 'delivery.recovery_journal_unavailable') return undefined;
    throw error;
  }
}

describe('deliver-window: a persistent fault at each cut point, then the permitted recovery actions', () => {
  it.each(cases)(
    '%s × %s* → CUSTODY_RELEASED (rows exactly once) or RETIRED (nothing published), recovery source-free',
    async (cutPoint, kind) => {
      const table = `ev_${++tableSeq}`;
      await admin.query(`CREATE TABLE dwh.${table} (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text)`);
      const manifestText = manifestTextFor(table);
      const route: SelectedRoute = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');
      const deps: DeliveryDeps = { ports: stores.ports, target, source, route };
      const refusing = guardedSource(source, () => true);
      const recoveryDeps: RecoveryDeps = { ports: stores.ports, target, route, source: refusing };
      const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
      const beginInput: BeginInput = { invocationId, session: `run-${invocationId.slice(4, 14)}`, manifestText, selector };
      const recoveryInput: RecoveryInput = { invocationId, manifestText, selector };

      const switchboard = TARGET_POINTS.has(cutPoint) ? targetFaults : stores.faults;
      const injector = switchboard.arm(`${cutPoint}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      let firstOutcome: string;
      try {
        const run = await deliverWindow(beginInput, deps);
        firstOutcome = `returned ${run.state}`;
      } catch (error) {
        firstOutcome = `threw ${(error as Error).name}`;
      } finally {
        switchboard.disarm();
      }
      // The forward path reached the cut point.
      expect(injector.fired.length, `${cutPoint} was not hit (${firstOutcome})`).toBeGreaterThan(0);

      const history: string[] = [firstOutcome];
      let record = await tryLoad(invocationId);
      if (!record) {
        // Begin never happened: the same invocation, run again, completes.
        const again = await deliverWindow(beginInput, deps);
        expect(again.state).toBe('CUSTODY_RELEASED');
        history.push('rerun begin');
        record = await loadInvocation(stores.ports, invocationId);
      }

      for (let i = 0; ; i++) {
        const state: JournalState = record.state;
        history.push(state);
        expect(JOURNAL_STATES).toContain(state);
        if (state === 'CUSTODY_RELEASED' || state === 'RETIRED') break;
        expect(i, `no convergence: ${history.join(' → ')}`).toBeLessThan(6);
        const actions = permittedActions(state, record.facts);
        const projection = await inspectInvocation(stores.ports, invocationId);
        expect(projection.state).toBe(state);
        expect([...projection.permitted_actions].sort()).toEqual([...actions].sort());
        const action = ACTION_ORDER.find((a) => actions.includes(a));
        if (action) {
          try {
            const result = await ACTIONS[action](recoveryInput, recoveryDeps);
            history.push(`${action} → ${result.state}`);
          } catch (error) {
            history.push(`${action} threw ${(error as Error).name}: ${(error as Error).message}`);
          }
        } else {
          // No live action: only the same invocation finishing (EMPTY_STAGING before its stage was recorded).
          expect(['EMPTY_STAGING', 'WRITING_UNKNOWN'], `stuck with no action: ${history.join(' → ')}`).toContain(state);
          try {
            const run = await deliverWindow(beginInput, deps);
            history.push(`same invocation → ${run.state}`);
          } catch (error) {
            history.push(`same invocation threw ${(error as Error).name}: ${(error as Error).message}`);
          }
        }
        record = await loadInvocation(stores.ports, invocationId);
      }

      const checkpoint = await loadCheckpoint(stores.ports, record.targetId, 'daily');
      expect(checkpoint?.version ?? 0, history.join(' → ')).toBeLessThanOrEqual(1);
      if (record.state === 'CUSTODY_RELEASED') {
        expect(await targetWindowIds(table), history.join(' → ')).toEqual(windowIds);
        expect(await receiptsOf(invocationId)).toBe(1);
        expect(checkpoint).toMatchObject({ windowEnd: WINDOW.end, invocationId, version: 1 });
      } else {
        expect(await targetWindowIds(table), history.join(' → ')).toEqual([]);
        expect(await receiptsOf(invocationId)).toBe(0);
        expect(checkpoint?.version ?? 0).toBe(0);
      }
      expect(await stagesLeft(), history.join(' → ')).toBe(0);
      // Recovery never opened ClickHouse.
      expect(refusing.attempts).toHaveLength(0);
    },
    60_000,
  );
});
