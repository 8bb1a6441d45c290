// Over ~300 lines (353), kept whole — one job: the delivery bench (its sides measured slice by slice in one run, and their print).
import pg from 'pg';
import { FLOWS } from '../src/registry/index.js';
import { openClickHouse, type ClickHouseHandle } from '../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../src/adapters/clickhouse/source.js';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../src/adapters/postgres/target.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import { deliverWindow } from '../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../src/delivery/deps.js';
import { TRANSACTION_MODE } from '../src/delivery/transaction-mode.js';
import { loadInvocation } from '../src/delivery/journal/records.js';
import { parseManifest, selectRoute } from '../src/domain/delivery/manifest.js';
import { resolveWindow, type SealedWindow } from '../src/domain/delivery/window.js';
import {
  startEmbeddedPostgres,
  type EmbeddedPostgres,
  type LocalPostgresEngine,
} from '../src/local/embedded-postgres.js';
import type { Ports } from '../src/ports/index.js';
import { RequestMeter } from '../src/adapters/request-meter.js';
import type { SourcePort } from '../src/ports/source.js';
import type { SourceRelationRequest } from '../src/domain/delivery/source-types.js';
import { FLOW_NAME, oneFlowExecution, type DeliveryTransitions } from './delivery-flow.js';
import { rawLoadChunks, rawLoadSlice, rawReadSlice } from './delivery-raw.js';
import {
  beginInput,
  manifestOf,
  newInvocationId,
  seedSource,
  TARGET_COLUMN_TYPES,
  TARGET_TABLE_DDL,
  targetRowsIn,
  type BenchRoute,
} from './delivery-setup.js';
import { interleave, median, meterDelta, perOp, round3, type SliceFn } from './measure.js';
import { benchChunkCompression, type ChunkCompressionResult } from './chunk-compression.js';
import { oneContinue, type ContinueResult } from './delivery-continue.js';

/**
 * Delivery rows/s: `deliverWindow` (the in-process deliver-window: custody + seal, staging,
 * plan, parts extracted and loaded `max_concurrency` at a time, EOF and quality gates,
 * publish, evidence, checkpoint, cleanup, release) of one fixed window from embedded
 * ClickHouse (chdb) into the embedded PostgreSQL server, against two raw sides measured in
 * the same rounds (delivery-raw.ts): (a) the raw source read of the same window that
 * parses every row, and (b) the raw bulk load of the same rows, chunked as the route
 * chunks them, into a fresh table on the same server with `max_concurrency` loaders.
 *
 * Sides take turns slice by slice (measure.ts): (a) is the baseline; (b), the delivery of
 * the big window and the delivery of a small window (same route settings, one part) run
 * once per slice each. Per round: delivery/(a), delivery/(b) and (b)/(a) — the sink's own
 * bound: delivery/(a) can never beat it — medians over rounds. Issue 9's goals: delivery
 * ≥ 0.25 × (a) and ≥ 0.5 × (b). The two window sizes give time = fixed + perRow × rows.
 *
 * Each route's target is window-partitioned (delivery-setup.ts TARGET_TABLE_DDL), so every
 * delivery publishes in O(1): the stage swapped in as the window's partition, no row
 * copied (the bench refuses a run whose receipt says otherwise).
 *
 * Every delivery is a fresh invocation of the same route and window (replace_window: a
 * re-delivery of a delivered window is legal once custody is released; the checkpoint
 * simply does not move again). Then one deliver-window FLOW execution per flow route
 * (delivery-flow.ts): transitions and Lambda invocations at 1 part and at ≥ 20 parts.
 *
 * Embedded ClickHouse is one engine per process: opened once here.
 */

export interface DeliveryBenchOptions {
  config: CutpointConfig;
  /** Rows in the throughput window. */
  windowRows: number;
  /** Rows in the small window (the fixed-cost fit's second point). */
  smallWindowRows: number;
  /** Route settings of both throughput windows. */
  chunkRows: number;
  partRows: number;
  maxConcurrency: number;
  slicesPerRound: number;
  /** Measured rounds, at most: fewer when budgetMs runs out (at least 3). */
  rounds: number;
  warmupRounds: number;
  budgetMs: number;
  /** Flow routes: one deliver-window execution each (e.g. 1 part, ≥ 20 parts). */
  flowRoutes: ReadonlyArray<{ rows: number; chunkRows: number; partRows?: number }>;
  /** The continue case's window (delivery-continue.ts): ~20 parts. */
  continueRoute: { rows: number; chunkRows: number; partRows: number; maxConcurrency: number };
  progress: (line: string) => void;
}

export interface DeliveryResult {
  /** The PostgreSQL the target ran on ('pglite' only as the fallback). */
  postgres: LocalPostgresEngine;
  rows: number;
  chunkRows: number;
  partRows: number;
  parts: number;
  maxConcurrency: number;
  rounds: number;
  /** Medians over rounds, rows/s. */
  rawReadRowsPerSec: number;
  rawLoadRowsPerSec: number;
  /** (a∥b): the raw read and the raw load of the window at the same time, rows/s. */
  rawBothRowsPerSec: number;
  deliveryRowsPerSec: number;
  /** Medians over rounds of the per-round quotients. */
  deliveryOfRead: number;
  deliveryOfLoad: number;
  /** delivery/(a∥b): what the exactly-once machinery leaves of moving the rows on the same cores. */
  deliveryOfBoth: number;
  /** (b)/(a): what the sink allows of the source read at best. */
  sinkBound: number;
  goals: { deliveryOfRead: number; deliveryOfLoad: number };
  /** time = fixedMs + perRowUs × rows, from the median times at the two window sizes. */
  fit: { smallRows: number; smallMs: number; bigMs: number; fixedMs: number; perRowUs: number };
  /** AWS requests per delivery of the big window (timed deliveries, warm-up included). */
  requestsPerDelivery: Record<string, number>;
  /** Rates (rows/s) per measured round, per side. */
  perRound: { read: number[]; load: number[]; both: number[]; delivery: number[]; small: number[] };
  /** The quotients per measured round. */
  perRoundRatios: { deliveryOfRead: number[]; deliveryOfLoad: number[]; deliveryOfBoth: number[]; sinkBound: number[] };
  flow: { name: string; type: 'STANDARD' | 'EXPRESS' };
  transitionsPerWindow: DeliveryTransitions[];
  /** The chunk objects of one big-window delivery: stored gzip against JSONL (chunk-compression.ts). */
  compression: ChunkCompressionResult;
  /** A ~20-part window with one part down, continued (delivery-continue.ts). */
  continued: ContinueResult;
}

export const GOALS = { deliveryOfRead: 0.25, deliveryOfLoad: 0.5 } as const;

interface Env {
  ch: ClickHouseHandle;
  pgServer: EmbeddedPostgres;
  source: SourcePort;
  target: PostgresTarget;
  admin: pg.Client;
  ports: Ports;
  meter: RequestMeter;
}

export async function benchDelivery(opts: DeliveryBenchOptions): Promise<DeliveryResult> {
  const { progress } = opts;
  const settings = { chunkRows: opts.chunkRows, partRows: opts.partRows, maxConcurrency: opts.maxConcurrency };
  const big: BenchRoute = {
    name: 'throughput',
    table: 'bench_events',
    firstRow: 0,
    rows: opts.windowRows,
    ...settings,
  };
  const small: BenchRoute = {
    name: 'small',
    table: 'bench_small',
    firstRow: opts.windowRows,
    rows: opts.smallWindowRows,
    ...settings,
  };
  const flowRoutes: BenchRoute[] = [];
  let next = big.rows + small.rows;
  for (const [i, f] of opts.flowRoutes.entries()) {
    flowRoutes.push({ name: `flow-${i}`, table: `bench_flow_${i}`, firstRow: next, ...f });
    next += f.rows;
  }
  const continueRoute: BenchRoute = {
    name: 'continue',
    table: 'bench_continue',
    firstRow: next,
    ...opts.continueRoute,
  };
  next += continueRoute.rows;
  const routes = [big, small, ...flowRoutes, continueRoute];
  const manifestText = manifestOf(routes);

  const meter = new RequestMeter();
  const ports = awsPorts(opts.config, inertFaults, meter);
  let ch: ClickHouseHandle | undefined;
  let pgServer: EmbeddedPostgres | undefined;
  let admin: pg.Client | undefined;
  let target: PostgresTarget | undefined;
  try {
    const t0 = performance.now();
    ch = await openClickHouse({ kind: 'embedded' });
    await seedSource(ch, next);
    const source = createClickHouseSource(ch, { closeHandle: false });
    pgServer = await startEmbeddedPostgres();
    admin = new pg.Client({ connectionString: pgServer.connectionString });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query('CREATE SCHEMA dwh');
    for (const r of routes) await admin.query(TARGET_TABLE_DDL('dwh', r));
    target = openPostgresTarget({
      connectionString: pgServer.connectionString,
      faults: inertFaults,
      receiptTable: { schema: 'dwh', table: 'cutpoint_receipts' },
    });
    progress(
      `delivery: embedded ClickHouse seeded with ${next} rows, embedded PostgreSQL (${pgServer.engine}) up, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const env: Env = { ch, pgServer, source, target, admin, ports, meter };
    const { lastInvocationId, ...measured } = await measureThroughput(opts, big, small, manifestText, env);
    const compression = await benchChunkCompression(ports, lastInvocationId);
    const transitionsPerWindow: DeliveryTransitions[] = [];
    for (const r of flowRoutes) transitionsPerWindow.push(await oneFlowExecution(r, manifestText, env, progress));
    const continued = await oneContinue(continueRoute, manifestText, env, progress);
    return {
      ...measured,
      postgres: pgServer.engine,
      flow: { name: FLOW_NAME, type: FLOWS.find((f) => f.name === FLOW_NAME)?.type ?? 'STANDARD' },
      transitionsPerWindow,
      compression,
      continued,
    };
  } finally {
    await target?.close();
    await admin?.end();
    await pgServer?.stop();
    await ch?.close();
  }
}

type Measured = Omit<DeliveryResult, 'flow' | 'transitionsPerWindow' | 'postgres' | 'compression' | 'continued'> & {
  lastInvocationId: string;
};

async function measureThroughput(
  opts: DeliveryBenchOptions,
  big: BenchRoute,
  small: BenchRoute,
  manifestText: string,
  env: Env,
): Promise<Measured> {
  const { ch, source, target, admin, ports, meter, pgServer } = env;
  const manifest = parseManifest(manifestText, '/bench/route.yaml');
  const bigRoute = selectRoute(manifest, big.name);
  const window = resolveWindow(bigRoute.route.window, new Date());
  const { source: src } = bigRoute.route;
  const relation: SourceRelationRequest = { from: src.from, timeColumn: src.timeColumn, keyColumns: src.keyColumns };

  const chunks = await rawLoadChunks(source, relation, window, big.chunkRows, TARGET_COLUMN_TYPES);
  const readSlice = rawReadSlice(ch, relation, window, big.rows);
  const loadSlice = rawLoadSlice(pgServer.connectionString, chunks, opts.maxConcurrency, 'dwh');
  const bothSlice = rawLoadSlice(pgServer.connectionString, chunks, opts.maxConcurrency, 'dwh', readSlice);

  let deliveries = 0;
  let parts = 0;
  let lastInvocationId = '';
  const counts: Record<string, number> = {};
  const deliverySlice = (r: BenchRoute, metered: boolean): SliceFn => {
    const deps: DeliveryDeps = { ports, target, mode: TRANSACTION_MODE, source, route: selectRoute(manifest, r.name) };
    const expected = resolveWindow(deps.route.route.window, new Date());
    return async () => {
      const before = meter.snapshot();
      const run = await deliverWindow(beginInput(newInvocationId(), manifestText, r.name), deps);
      if (run.state !== 'CUSTODY_RELEASED' || !sameWindow(run.window, expected)) {
        throw new Error(
          `bench bug: delivery ended ${run.state} (${run.stoppedAt ?? '-'}: ${run.reasons?.join(', ') ?? '-'}) for ${JSON.stringify(run.window)}`,
        );
      }
      if (metered) {
        lastInvocationId = run.invocationId;
        for (const [k, n] of Object.entries(meterDelta(before, meter.snapshot()))) counts[k] = (counts[k] ?? 0) + n;
        if (deliveries++ === 0) {
          parts = (await loadInvocation(ports, run.invocationId)).facts.plan?.parts ?? 0;
          const method = (await target.probeReceipt(run.invocationId))?.method;
          if (method !== 'partition_swap')
            throw new Error(
              `bench bug: the delivery published ${method ?? 'without a receipt'}, not by partition swap`,
            );
        }
      }
      return r.rows;
    };
  };

  opts.progress(
    `delivery: ${big.rows} rows (and ${small.rows}), chunk_rows ${big.chunkRows}, part_rows ${big.partRows ?? '-'}, max_concurrency ${opts.maxConcurrency}: ` +
      `${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices, each slice (a) raw read+parse, (b) raw load, one delivery of each window`,
  );
  const result = await interleave({
    rounds: opts.rounds,
    warmupRounds: opts.warmupRounds,
    slicesPerRound: opts.slicesPerRound,
    budgetMs: opts.budgetMs,
    baseline: { name: '(a) read', run: readSlice },
    sides: [
      { name: '(b) load', run: loadSlice },
      { name: '(a∥b)', run: bothSlice },
      { name: 'delivery', run: deliverySlice(big, true) },
      { name: `delivery ${small.rows}`, run: deliverySlice(small, false) },
    ],
    onRound: (line) => opts.progress(`  ${line} (rows/s)`),
  });
  const [load, both, delivery, smallSide] = result.sides;
  if (!load || !both || !delivery || !smallSide) throw new Error('bench bug: a delivery bench side is missing');
  // Every delivery replaced its window: the target holds it exactly once.
  for (const r of [big, small]) {
    const w = resolveWindow(selectRoute(manifest, r.name).route.window, new Date());
    const landed = await targetRowsIn(admin, r.table, w);
    if (landed !== r.rows)
      throw new Error(`bench bug: target holds ${landed} rows of ${r.name}'s window, expected ${r.rows}`);
  }
  const read = result.baseline.rates;
  const at = (xs: readonly number[], i: number): number => xs[i] ?? Number.NaN;
  const quotients = (top: readonly number[], bottom: readonly number[]): number[] =>
    read.map((_, i) => round3(at(top, i) / at(bottom, i)));
  const perRoundRatios = {
    deliveryOfRead: quotients(delivery.rates, read),
    deliveryOfLoad: quotients(delivery.rates, load.rates),
    deliveryOfBoth: quotients(delivery.rates, both.rates),
    sinkBound: quotients(load.rates, read),
  };
  // Median time per delivery at each size, then the line through both points.
  const bigMs = median(delivery.rates.map((rate) => (big.rows * 1000) / rate));
  const smallMs = median(smallSide.rates.map((rate) => (small.rows * 1000) / rate));
  const perRowMs = (bigMs - smallMs) / (big.rows - small.rows);
  return {
    rows: big.rows,
    chunkRows: big.chunkRows,
    partRows: opts.partRows,
    parts,
    maxConcurrency: opts.maxConcurrency,
    rounds: read.length,
    rawReadRowsPerSec: round3(result.baseline.median),
    rawLoadRowsPerSec: round3(load.median),
    rawBothRowsPerSec: round3(both.median),
    deliveryRowsPerSec: round3(delivery.median),
    deliveryOfRead: round3(median(perRoundRatios.deliveryOfRead)),
    deliveryOfLoad: round3(median(perRoundRatios.deliveryOfLoad)),
    deliveryOfBoth: round3(median(perRoundRatios.deliveryOfBoth)),
    sinkBound: round3(median(perRoundRatios.sinkBound)),
    goals: { ...GOALS },
    fit: {
      smallRows: small.rows,
      smallMs: round3(smallMs),
      bigMs: round3(bigMs),
      fixedMs: round3(smallMs - perRowMs * small.rows),
      perRowUs: round3(perRowMs * 1000),
    },
    requestsPerDelivery: perOp(counts, deliveries),
    perRound: {
      read: read.map(round3),
      load: load.rates.map(round3),
      both: both.rates.map(round3),
      delivery: delivery.rates.map(round3),
      small: smallSide.rates.map(round3),
    },
    perRoundRatios,
    lastInvocationId,
  };
}

function sameWindow(a: SealedWindow, b: SealedWindow): boolean {
  return a.start === b.start && a.end === b.end;
}
