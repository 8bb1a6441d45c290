import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { routeOfEvent } from '../functions/lib/delivery-deps.js';
import { FLOWS } from '../functions/registry.js';
import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../src/adapters/clickhouse/client.js';
import { createClickHouseSource, windowQuery } from '../src/adapters/clickhouse/source.js';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../src/adapters/postgres/target.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import { deliverWindow } from '../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../src/delivery/deps.js';
import { loadInvocation } from '../src/delivery/journal/records.js';
import type { BeginInput } from '../src/delivery/steps/begin.js';
import { invocationIdFrom } from '../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute, type SelectedRoute } from '../src/domain/delivery/manifest.js';
import { resolveWindow, type SealedWindow } from '../src/domain/delivery/window.js';
import { loadAsl, taskStates } from '../src/local/asl.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/local/embedded-postgres.js';
import { runFlow } from '../src/local/flow-runner.js';
import type { Ports } from '../src/ports/index.js';
import { RequestMeter } from '../src/ports/meter.js';
import type { SourcePort } from '../src/ports/source.js';
import { interleave, meterDelta, perOp, round3, type InterleaveResult, type SliceFn } from './measure.js';

/**
 * Delivery rows/s: `deliverWindow` (the in-process deliver-window: custody + seal, staging,
 * chunked extract to S3 objects, load into PostgreSQL, EOF and quality gates, publish,
 * evidence, checkpoint, cleanup, release) of one fixed window from embedded ClickHouse
 * (chdb) into embedded PostgreSQL (PGlite), against a raw read of the SAME window in the
 * same run: the exact statement the source adapter issues (`windowQuery`), streamed
 * through the same ClickHouse client, rows counted and nothing else done. Interleaved
 * slice by slice (measure.ts), so the ratio
 *
 *   delivered rows/s ÷ raw ClickHouse read rows/s
 *
 * is per round, median over rounds: the share of the source's read speed that a delivery
 * keeps. Every delivery is a fresh invocation of the same route and window (replace_window:
 * a re-delivery of a delivered window is legal once custody is released; the checkpoint
 * simply does not move again).
 *
 * Alongside: the state transitions of one deliver-window execution through the local flow
 * runner (the same handlers Lambda runs) at two window sizes — what a Standard workflow
 * bills per window.
 *
 * Embedded ClickHouse is one engine per process: opened once here. Its connection
 * materialises each result in native memory before the client streams it; production
 * over HTTP does not, so the raw read here is a fast baseline, not a slow one.
 */

export interface DeliveryBenchOptions {
  config: CutpointConfig;
  /** Rows in the throughput window. */
  windowRows: number;
  /** chunk_rows of the throughput route. */
  chunkRows: number;
  /** Raw reads of the window per slice (the baseline side); one delivery per slice on the other. */
  rawReadsPerSlice: number;
  slicesPerRound: number;
  /** Measured rounds, at most: fewer when budgetMs runs out (at least 3). */
  rounds: number;
  warmupRounds: number;
  budgetMs: number;
  /** Window sizes (rows) for the transition count through the flow runner. */
  flowWindowRows: readonly number[];
  /** chunk_rows of the flow routes. */
  flowChunkRows: number;
  progress: (line: string) => void;
}

export interface DeliveryTransitions {
  rows: number;
  chunks: number;
  /** States entered plus retries in one execution: what a Standard workflow bills. */
  transitions: number;
  /** Task states entered: one Lambda invocation each when deployed. */
  lambdaInvocations: number;
  /** AWS requests (DynamoDB, S3) of the execution. */
  requests: Record<string, number>;
}

export interface DeliveryResult {
  rows: number;
  chunkRows: number;
  rounds: number;
  /** Median raw ClickHouse read rows/s of the window. */
  rawReadRowsPerSec: number;
  /** Median delivered rows/s, measured in the same slices. */
  deliveryRowsPerSec: number;
  /** Median over rounds of delivery rows/s ÷ raw read rows/s. */
  ratio: number;
  /** AWS requests per delivery over every timed delivery (warm-up included). */
  requestsPerDelivery: Record<string, number>;
  perRound: InterleaveResult;
  flow: { name: string; type: 'STANDARD' | 'EXPRESS'; chunkRows: number };
  transitionsPerWindow: DeliveryTransitions[];
}

/** Source rows are one per second from BASE_MS on; every window is a run of whole rows. */
const BASE_MS = Date.parse('2025-01-01T00:00:00.000Z');
const STEP_MS = 1000;
const SEED_BATCH = 10_000;
const SELECTOR_FILE = '/bench/route.yaml';

interface BenchRoute {
  name: string;
  table: string;
  /** First row (0-based) and row count of its window. */
  firstRow: number;
  rows: number;
  chunkRows: number;
}

const instant = (row: number): string => new Date(BASE_MS + row * STEP_MS).toISOString();

function manifestOf(routes: readonly BenchRoute[]): string {
  const lines = [
    'version: 1',
    'bindings:',
    '  events_ch: { kind: clickhouse, url_env: CH_URL }',
    '  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }',
    'routes:',
  ];
  for (const r of routes) {
    lines.push(
      `  ${r.name}:`,
      '    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }',
      `    window: { kind: fixed, start: "${instant(r.firstRow)}", end: "${instant(r.firstRow + r.rows)}" }`,
      `    target: { binding: warehouse, table: dwh.${r.table}, key_columns: [event_id], mode: replace_window }`,
      '    quality:',
      '      unique_keys: true',
      '      not_null: [event_id, event_time]',
      `    chunk_rows: ${r.chunkRows}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `src.events` in the embedded ClickHouse, `rows` synthetic events one second apart.
 * Duplicates test/support/delivery-source.ts `seedSourceEvents` (same table, same columns,
 * values generated here): bench does not import from test/.
 */
async function seedSource(ch: ClickHouseHandle, rows: number): Promise<void> {
  await ch.client.command({ query: 'CREATE DATABASE src' });
  await ch.client.command({
    query: `CREATE TABLE src.events (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
            ENGINE = MergeTree ORDER BY event_id`,
  });
  for (let from = 0; from < rows; from += SEED_BATCH) {
    const values = [];
    for (let k = from; k < Math.min(rows, from + SEED_BATCH); k++) {
      const i = k + 1;
      values.push({
        event_id: i,
        event_time: dateTime64Param(new Date(BASE_MS + k * STEP_MS)),
        region: i % 3 === 0 ? 'eu' : 'us',
        amount: (i % 1000) / 8,
        note: i % 2 === 0 ? null : `note ${i}`,
      });
    }
    await ch.client.insert({ table: 'src.events', format: 'JSONEachRow', values });
  }
}

const newInvocationId = (): string => invocationIdFrom(new Uint8Array(randomBytes(16)));

function beginInput(invocationId: string, manifestText: string, route: string): BeginInput {
  return {
    invocationId,
    session: `bench-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: `${SELECTOR_FILE}#${route}`,
  };
}

export async function benchDelivery(opts: DeliveryBenchOptions): Promise<DeliveryResult> {
  const { progress } = opts;
  const throughput: BenchRoute = { name: 'throughput', table: 'bench_events', firstRow: 0, rows: opts.windowRows, chunkRows: opts.chunkRows };
  const flowRoutes: BenchRoute[] = [];
  let next = opts.windowRows;
  for (const rows of opts.flowWindowRows) {
    flowRoutes.push({ name: `flow-${rows}`, table: `bench_flow_${rows}`, firstRow: next, rows, chunkRows: opts.flowChunkRows });
    next += rows;
  }
  const totalRows = next;
  const manifestText = manifestOf([throughput, ...flowRoutes]);
  const selected = (name: string): SelectedRoute => selectRoute(parseManifest(manifestText, SELECTOR_FILE), name);

  const meter = new RequestMeter();
  const ports = awsPorts(opts.config, inertFaults, meter);
  let ch: ClickHouseHandle | undefined;
  let pgServer: EmbeddedPostgres | undefined;
  let admin: pg.Client | undefined;
  let target: PostgresTarget | undefined;
  try {
    const t0 = performance.now();
    ch = await openClickHouse({ kind: 'embedded' });
    await seedSource(ch, totalRows);
    const source = createClickHouseSource(ch, { closeHandle: false });
    pgServer = await startEmbeddedPostgres();
    admin = new pg.Client({ connectionString: pgServer.connectionString });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query('CREATE SCHEMA dwh');
    for (const r of [throughput, ...flowRoutes]) {
      await admin.query(`CREATE TABLE dwh.${r.table} (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text)`);
    }
    target = openPostgresTarget({ connectionString: pgServer.connectionString, faults: inertFaults, receiptTable: { schema: 'dwh', table: 'cutpoint_receipts' } });
    progress(
      `delivery: embedded ClickHouse seeded with ${totalRows} rows, embedded PostgreSQL up, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const measured = await measureThroughput(opts, throughput, manifestText, selected(throughput.name), { ch, source, target, admin, ports, meter });
    const transitionsPerWindow: DeliveryTransitions[] = [];
    for (const r of flowRoutes) {
      transitionsPerWindow.push(await oneFlowExecution(r, manifestText, { source, target, admin, ports, meter }, progress));
    }
    const name = 'deliver-window';
    return {
      ...measured,
      flow: { name, type: FLOWS.find((f) => f.name === name)?.type ?? 'STANDARD', chunkRows: opts.flowChunkRows },
      transitionsPerWindow,
    };
  } finally {
    await target?.close();
    await admin?.end();
    await pgServer?.stop();
    await ch?.close();
  }
}

interface Env {
  ch: ClickHouseHandle;
  source: SourcePort;
  target: PostgresTarget;
  admin: pg.Client;
  ports: Ports;
  meter: RequestMeter;
}

async function targetRowsIn(admin: pg.Client, table: string, window: SealedWindow): Promise<number> {
  const result = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM dwh.${table} WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`,
    [window.start, window.end],
  );
  return result.rows[0]?.n ?? -1;
}

async function measureThroughput(
  opts: DeliveryBenchOptions,
  r: BenchRoute,
  manifestText: string,
  route: SelectedRoute,
  env: Env,
): Promise<Omit<DeliveryResult, 'flow' | 'transitionsPerWindow'>> {
  const { ch, source, target, admin, ports, meter } = env;
  const deps: DeliveryDeps = { ports, target, source, route };
  const { source: src } = route.route;
  const window = resolveWindow(route.route.window, new Date());
  // The exact statement the source adapter's streamWindow issues for this route and window.
  const statement = windowQuery({ from: src.from, timeColumn: src.timeColumn, keyColumns: src.keyColumns, window });

  const rawRead = async (): Promise<number> => {
    const rs = await ch.client.query({ query: statement.query, format: 'JSONEachRow', query_params: statement.query_params });
    let n = 0;
    for await (const rows of rs.stream()) n += rows.length;
    if (n !== r.rows) throw new Error(`bench bug: raw read of the window returned ${n} rows, expected ${r.rows}`);
    return n;
  };
  const rawSlice: SliceFn = async () => {
    let rows = 0;
    for (let i = 0; i < opts.rawReadsPerSlice; i++) rows += await rawRead();
    return rows;
  };

  let deliveries = 0;
  const counts: Record<string, number> = {};
  const deliverySlice: SliceFn = async () => {
    const before = meter.snapshot();
    const run = await deliverWindow(beginInput(newInvocationId(), manifestText, r.name), deps);
    if (run.state !== 'CUSTODY_RELEASED' || run.window.start !== window.start || run.window.end !== window.end) {
      throw new Error(`bench bug: delivery ended ${run.state} (${run.stoppedAt ?? '-'}: ${run.reasons?.join(', ') ?? '-'}) for ${JSON.stringify(run.window)}`);
    }
    for (const [k, n] of Object.entries(meterDelta(before, meter.snapshot()))) counts[k] = (counts[k] ?? 0) + n;
    deliveries++;
    return r.rows;
  };

  opts.progress(
    `delivery, ${r.rows} rows, chunk_rows ${r.chunkRows}: ${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices ` +
      `(1 delivery vs ${opts.rawReadsPerSlice} raw reads of the window per slice)`,
  );
  const result = await interleave({
    rounds: opts.rounds,
    warmupRounds: opts.warmupRounds,
    slicesPerRound: opts.slicesPerRound,
    budgetMs: opts.budgetMs,
    baseline: { name: 'raw read', run: rawSlice },
    sides: [{ name: 'delivery', run: deliverySlice }],
    onRound: (line) => opts.progress(`  ${line} (rows/s)`),
  });
  const side = result.sides[0];
  if (!side) throw new Error('bench bug: no delivery side');
  // Every delivery replaced the window: the target holds it exactly once.
  const landed = await targetRowsIn(admin, r.table, window);
  if (landed !== r.rows) throw new Error(`bench bug: target holds ${landed} rows of the window after ${deliveries} deliveries, expected ${r.rows}`);
  return {
    rows: r.rows,
    chunkRows: r.chunkRows,
    rounds: result.baseline.rates.length,
    rawReadRowsPerSec: round3(result.baseline.median),
    deliveryRowsPerSec: round3(side.median),
    ratio: round3(side.medianRatio),
    requestsPerDelivery: perOp(counts, deliveries),
    perRound: result,
  };
}

/** One deliver-window execution through the local runner: transitions, chunks, requests. */
async function oneFlowExecution(
  r: BenchRoute,
  manifestText: string,
  env: Omit<Env, 'ch'>,
  progress: (line: string) => void,
): Promise<DeliveryTransitions> {
  const name = 'deliver-window';
  const { source, target, admin, ports, meter } = env;
  const invocationId = newInvocationId();
  const before = meter.snapshot();
  const started = performance.now();
  const result = await runFlow(name, beginInput(invocationId, manifestText, r.name), {
    ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ports, target, source, route: routeOfEvent(event) }),
  });
  const seconds = (performance.now() - started) / 1000;
  const requests = meterDelta(before, meter.snapshot());
  const output = result.output as { state?: string } | undefined;
  if (result.status !== 'SUCCEEDED' || output?.state !== 'CUSTODY_RELEASED') {
    throw new Error(`bench bug: ${name} ${result.status} ${String(output?.state)}: ${result.error ?? ''} ${result.cause ?? ''}`);
  }
  const record = await loadInvocation(ports, invocationId);
  const landed = await targetRowsIn(admin, r.table, record.sealed.window);
  if (landed !== r.rows) throw new Error(`bench bug: ${name} of ${r.rows} rows left ${landed} in the target`);
  const tasks = new Set(taskStates(loadAsl(name)).map((t) => t.state));
  const lambdaInvocations = result.events.filter((e) => e.type === 'StateEntered' && e.state !== undefined && tasks.has(e.state)).length;
  const chunks = record.facts.parts?.chunks ?? 0;
  progress(`  ${name} flow, ${r.rows} rows in ${chunks} chunk${chunks === 1 ? '' : 's'}: ${result.transitions} state transitions, ${lambdaInvocations} Lambda invocations (${seconds.toFixed(1)} s)`);
  return { rows: r.rows, chunks, transitions: result.transitions, lambdaInvocations, requests };
}
