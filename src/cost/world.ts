import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routeOfEvent } from '../delivery/deps-provider.js';
import { openClickHouse } from '../adapters/clickhouse/client.js';
import { inertFaults } from '../adapters/fault-injector.js';
import { openPostgresAdmin } from '../adapters/postgres/admin.js';
import { awsPorts } from '../adapters/ports.js';
import { provisionLocal } from '../adapters/provision.js';
import { openLocalSource, openLocalTarget } from '../cli/commands/delivery-bindings.js';
import { loadInvocation } from '../delivery/journal/records.js';
import { TRANSACTION_MODE } from '../delivery/transaction-mode.js';
import { demoEvents, seedDemoEvents } from '../demo/source-events.js';
import { invocationIdFrom } from '../domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../domain/delivery/manifest.js';
import type { AppendOutcome } from '../domain/stream.js';
import { startEmbeddedPostgres } from '../local/embedded-postgres.js';
import { configForRuntime } from '../local/runtime-config.js';
import { startLocalRuntime } from '../local/runtime.js';
import type { Ports } from '../ports/index.js';
import { RequestMeter } from '../adapters/request-meter.js';
import { createStream } from '../stream/create-stream.js';
import { takeOverWithNewSession } from '../stream/takeover.js';
import { measureFlow, type FlowMeasurement } from './measure.js';

/**
 * The throw-away world `cutpoint cost` measures in, loopback only: DynamoDB Local and the
 * S3 emulator (metered), embedded ClickHouse as the source, embedded PostgreSQL as the
 * target. `close()` stops and removes everything.
 */
export interface CostWorld {
  ports: Ports;
  meter: RequestMeter;
  root: string;
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;
/** The variables the route's bindings name: set in this process only, never printed. */
const CLICKHOUSE_ENV = 'CUTPOINT_COST_CLICKHOUSE_URL';
const WAREHOUSE_ENV = 'CUTPOINT_COST_WAREHOUSE_URL';

export async function openCostWorld(progress: (line: string) => void): Promise<CostWorld> {
  const root = await mkdtemp(join(tmpdir(), 'cutpoint-cost-'));
  const stops: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true })];
  const close = async () => {
    for (const stop of stops) await stop().catch(() => undefined);
  };
  try {
    progress('starting DynamoDB Local and the S3 emulator (in-memory, loopback only) …');
    const runtime = await startLocalRuntime();
    stops.unshift(() => runtime.stop());
    const config = configForRuntime(runtime, 'cutpoint-cost');
    await provisionLocal(config);
    const meter = new RequestMeter();
    return { ports: awsPorts(config, inertFaults, meter), meter, root, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * One window of `rows` rows delivered by the deliver-window flow: ClickHouse (chdb, seeded
 * with one UTC day of events) → PostgreSQL (replace_window), `chunkRows` rows per chunk,
 * `partRows` per part; the execution must end CUSTODY_RELEASED.
 */
export async function measureDeliveredWindow(
  world: CostWorld,
  shape: { rows: number; chunkRows: number; partRows: number },
  progress: (line: string) => void,
): Promise<FlowMeasurement & { parts: number; chunks: number }> {
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - DAY_MS;
  const events = demoEvents(new Date(end), 1, Math.floor(DAY_MS / shape.rows)).slice(0, shape.rows);
  progress(`seeding ${events.length} events in embedded ClickHouse …`);
  const chDir = join(world.root, 'clickhouse');
  const ch = await openClickHouse({ kind: 'embedded', dataDir: chDir });
  try {
    await seedDemoEvents(ch, 'analytics', 'events', events);
  } finally {
    await ch.close();
  }
  progress('starting embedded PostgreSQL (loopback only) …');
  const pg = await startEmbeddedPostgres();
  try {
    const admin = await openPostgresAdmin(pg.connectionString);
    try {
      await admin.exec('CREATE SCHEMA dwh');
      await admin.exec(
        'CREATE TABLE dwh.events_daily (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text NOT NULL, amount numeric(18, 4) NOT NULL, note text)',
      );
    } finally {
      await admin.close();
    }
    process.env[CLICKHOUSE_ENV] = `chdb:${chDir}`;
    process.env[WAREHOUSE_ENV] = pg.connectionString;
    const manifestText = manifestOf(new Date(start).toISOString(), new Date(end).toISOString(), shape);
    const selector = `${join(world.root, 'route.yaml')}#window`;
    const route = selectRoute(parseManifest(manifestText, join(world.root, 'route.yaml')), 'window');
    const target = await openLocalTarget(route.targetBinding, inertFaults);
    const source = await openLocalSource(route.sourceBinding);
    try {
      const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
      progress(`running deliver-window over ${shape.rows} rows …`);
      const measured = await measureFlow(
        'deliver-window',
        { invocationId, session: `cost-${invocationId.slice(4, 14)}`, manifestText, selector },
        {
          ports: world.ports,
          meter: world.meter,
          stepDeps: (event) =>
            Promise.resolve({ ports: world.ports, target, mode: TRANSACTION_MODE, source, route: routeOfEvent(event) }),
        },
      );
      const output = measured.result.output as { state?: string } | undefined;
      if (measured.result.status !== 'SUCCEEDED' || output?.state !== 'CUSTODY_RELEASED') {
        throw new Error(
          `deliver-window ended ${measured.result.status} ${String(output?.state)}: ${measured.result.error ?? ''} ${measured.result.cause ?? ''}`,
        );
      }
      // Read after the measurement: the journal's own account of the parts and chunks.
      const facts = (await loadInvocation(world.ports, invocationId)).facts;
      return { ...measured, parts: facts.plan?.parts ?? 0, chunks: facts.parts?.chunks ?? 0 };
    } finally {
      await source.close();
      await target.close();
    }
  } finally {
    delete process.env[CLICKHOUSE_ENV];
    delete process.env[WAREHOUSE_ENV];
    await pg.stop();
  }
}

/** One batch of `records` records of `recordBytes` bytes appended by the stream-append flow to a lane this process owns. */
export async function measureAppendedBatch(
  world: CostWorld,
  shape: { records: number; recordBytes: number },
  progress: (line: string) => void,
): Promise<FlowMeasurement> {
  const stream = `cost-${Date.now().toString(36)}`;
  await createStream({ stream, partitions: 1 }, world.ports);
  const lane = { stream, partition: 0 };
  const fence = await takeOverWithNewSession(lane, 'cost-writer', world.ports);
  const records = Array.from({ length: shape.records }, () =>
    Buffer.from(randomBytes(shape.recordBytes)).toString('base64'),
  );
  progress(`running stream-append with one batch of ${shape.records} records …`);
  const measured = await measureFlow(
    'stream-append',
    { ...lane, attemptId: 'cost-1', session: fence, records },
    { ports: world.ports, meter: world.meter },
  );
  const outcome = measured.result.output as AppendOutcome | undefined;
  if (measured.result.status !== 'SUCCEEDED' || outcome?.status !== 'KNOWN_COMMITTED') {
    throw new Error(
      `stream-append ended ${measured.result.status} ${String(outcome?.status)}: ${measured.result.error ?? ''} ${measured.result.cause ?? ''}`,
    );
  }
  return measured;
}

function manifestOf(start: string, end: string, shape: { chunkRows: number; partRows: number }): string {
  return `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CLICKHOUSE_ENV} }
  warehouse: { kind: postgres, url_env: ${WAREHOUSE_ENV} }
routes:
  window:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "${start}", end: "${end}" }
    target: { binding: warehouse, table: dwh.events_daily, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id, event_time] }
    chunk_rows: ${shape.chunkRows}
    part_rows: ${shape.partRows}
`;
}
