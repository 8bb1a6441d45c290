import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeOfEvent } from '../../functions/lib/delivery-deps.js';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../../src/adapters/postgres/target.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal-store.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { invocationIdFrom } from '../../src/domain/delivery/identifiers.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { SourcePort } from '../../src/ports/source.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { seedSourceEvents } from '../support/delivery-source.js';

/**
 * The deliver-window flow (statemachines/deliver-window.asl.json) run by the local runner
 * over the same handlers Lambda runs, on real components: DynamoDB Local and the S3
 * emulator, embedded ClickHouse (chdb, one engine per process: opened once here) as the
 * source and embedded PostgreSQL as the target.
 */

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const STEP_MS = 144_000; // 600 rows a day
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

/** Two routes over the same window and target, differing only in chunk size. */
const routeYaml = (chunkRows: number) => `
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
    chunk_rows: ${chunkRows}`;
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  small:${routeYaml(50)}
  large:${routeYaml(600)}
`;

const newInvocationId = () => invocationIdFrom(new Uint8Array(randomBytes(16)));
const flowInput = (invocationId: string, route: string): BeginInput => ({
  invocationId,
  session: `flow-${invocationId.slice(4, 14)}`,
  manifestText,
  selector: `/config/route.yaml#${route}`,
});

const GENERATED = 3000;
const rows = Array.from({ length: GENERATED }, (_, k) => {
  const i = k + 1;
  return { event_id: i, event_time: BASE + i * STEP_MS, region: i % 3 === 0 ? 'eu' : 'us', amount: (i % 1000) / 8, note: i % 2 === 0 ? null : `note ${i}` };
});
const windowIds = rows.filter((r) => r.event_time >= START_MS && r.event_time < END_MS).map((r) => String(r.event_id)).sort();

let stores: TestStores;
let ch: ClickHouseHandle;
let source: SourcePort;
let pgServer: EmbeddedPostgres;
let admin: pg.Client;
let target: PostgresTarget;
const targetFaults = new FaultSwitch();

beforeAll(async () => {
  stores = await freshStores();
  ch = await openClickHouse({ kind: 'embedded' });
  await seedSourceEvents(ch, rows);
  source = createClickHouseSource(ch, { closeHandle: false });

  pgServer = await startEmbeddedPostgres();
  admin = new pg.Client({ connectionString: pgServer.connectionString });
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query('CREATE SCHEMA dwh');
  await admin.query('CREATE TABLE dwh.events (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text)');
  target = openPostgresTarget({ connectionString: pgServer.connectionString, faults: targetFaults, receiptTable: { schema: 'dwh', table: 'cutpoint_receipts' } });
});

afterAll(async () => {
  await target?.close();
  await admin?.end();
  await pgServer?.stop();
  await ch?.close();
});

/** The flow over the embedded source and target; the route comes from each Task's input, as in Lambda. */
const run = (input: BeginInput): Promise<FlowResult> =>
  runFlow('deliver-window', input, {
    ports: stores.ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ports: stores.ports, target, source, route: routeOfEvent(event) }),
  });

async function targetWindowIds(): Promise<string[]> {
  const result = await admin.query<{ id: string }>(`SELECT event_id::text AS id FROM dwh.events WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`, [WINDOW.start, WINDOW.end]);
  return result.rows.map((r) => r.id).sort();
}

describe('deliver-window flow (local runner)', () => {
  const transitions: Record<string, number> = {};

  it.each([
    ['small', 24],
    ['large', 2],
  ])('route %s: CUSTODY_RELEASED, every row exactly once, one receipt', async (route, chunks) => {
    const invocationId = newInvocationId();
    const result = await run(flowInput(invocationId, route));
    expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({ status: 'SUCCEEDED', output: { invocationId, state: 'CUSTODY_RELEASED' } });
    expect(await targetWindowIds()).toEqual(windowIds);
    expect((await admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount).toBe(1);
    const record = await loadInvocation(stores.ports, invocationId);
    expect(record.facts.chunks).toHaveLength(chunks);
    expect(await loadCustody(stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    transitions[route] = result.transitions;
  });

  it('state transitions per window do not depend on row count or chunk size', () => {
    console.log(`deliver-window transitions per window: chunk_rows 50 -> ${transitions.small}, chunk_rows 600 -> ${transitions.large}`);
    expect(transitions.small).toBeGreaterThan(0);
    expect(transitions.small).toBe(transitions.large);
  });

  it('a lost publish commit ends the execution at PUBLICATION_UNKNOWN with Delivery.NeedsRecovery; custody stays held', async () => {
    const invocationId = newInvocationId();
    const armed = targetFaults.arm('delivery.publish.commit:lose-response');
    let result: FlowResult;
    try {
      result = await run(flowInput(invocationId, 'small'));
    } finally {
      targetFaults.disarm();
    }
    expect(armed.fired.map((f) => `${f.cutPoint}:${f.kind}`)).toEqual(['delivery.publish.commit:lose-response']);
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.NeedsRecovery' });
    expect(result.cause).toContain('PUBLICATION_UNKNOWN');
    const record = await loadInvocation(stores.ports, invocationId);
    expect(record.state).toBe('PUBLICATION_UNKNOWN');
    expect(await loadCustody(stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    // The COMMIT applied: the rows are there exactly once, the receipt awaits reconcile.
    expect(await targetWindowIds()).toEqual(windowIds);
    expect((await admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount).toBe(1);
  });
});
