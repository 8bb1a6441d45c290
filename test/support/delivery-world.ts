import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import { routeOfEvent } from '../../src/delivery/deps-provider.js';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import {
  openPostgresTarget,
  type PostgresTarget,
  type PostgresTargetOptions,
} from '../../src/adapters/postgres/target.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { journalOf } from '../../src/delivery/journal/keys.js';
import type { RecoveryDeps } from '../../src/delivery/recovery/recovery-session.js';
import { invocationIdFrom } from '../../src/domain/delivery/identifiers.js';
import { canTransition, isJournalState } from '../../src/domain/delivery/journal-states.js';
import type { SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import type { Ports } from '../../src/ports/index.js';
import type { SourcePort } from '../../src/ports/source.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import type { TargetPort } from '../../src/ports/target.js';
import type { TableRef } from '../../src/domain/delivery/target-types.js';
import { seedSourceEvents, type SourceEvent } from './delivery-source.js';
import { freshStores, type TestStores } from './emulators.js';
import { HoldingFaults, type HeldEffect } from './held-effect.js';
import { TRANSACTION_MODE } from '../../src/delivery/transaction-mode.js';

/**
 * The world the delivery integration tests run in, on real components only: a fresh table
 * and bucket on DynamoDB Local and the S3 emulator (journal, custody, chunk and evidence
 * objects), embedded ClickHouse (chdb) seeded with `src.events` as the source, and embedded
 * PostgreSQL as the target, with the event tables in schema `dwh` and the receipt table
 * `dwh.cutpoint_receipts`. chdb allows one engine per process: open one world per file.
 */

/** The first generated event is one step after this instant. */
export const EVENTS_BASE = Date.parse('2026-11-01T00:00:00.000Z');

/**
 * Events 1..count, one every `stepMs` after EVENTS_BASE: every third in region eu (the rest
 * us), amount (id % 1000) / 8, no note on even ids.
 */
export function generateEvents(count: number, stepMs: number): SourceEvent[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    return {
      event_id: i,
      event_time: EVENTS_BASE + i * stepMs,
      region: i % 3 === 0 ? 'eu' : 'us',
      amount: (i % 1000) / 8,
      note: i % 2 === 0 ? null : `note ${i}`,
    };
  });
}

/** The ids (as text, sorted) of the events inside [window.start, window.end). */
export function windowIdsOf(events: readonly SourceEvent[], window: { start: string; end: string }): string[] {
  const start = Date.parse(window.start);
  const end = Date.parse(window.end);
  return events
    .filter((r) => r.event_time >= start && r.event_time < end)
    .map((r) => String(r.event_id))
    .sort();
}

/** The target table `dwh.<table>` the events are delivered into (the columns of `src.events`). */
export function eventsTableDdl(table: string): string {
  return `CREATE TABLE dwh.${table} (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text)`;
}

export const newInvocationId = (): string => invocationIdFrom(new Uint8Array(randomBytes(16)));

/**
 * A manifest of fixed-window routes over `src.events` (2026-11-02 to 2026-11-04 UTC), one
 * per name, each delivering to `dwh.<table>` with replace_window, unique keys and
 * not-null key and time: the world most delivery tests run in. Bindings name variables only.
 */
export function fixedWindowManifest(
  routes: Record<string, { table: string; chunkRows: number; partRows?: number; maxConcurrency?: number }>,
): string {
  const route = ([name, { table, chunkRows, partRows, maxConcurrency }]: [
    string,
    { table: string; chunkRows: number; partRows?: number; maxConcurrency?: number },
  ]) => `  ${name}:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.${table}, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
    chunk_rows: ${chunkRows}${partRows === undefined ? '' : `\n    part_rows: ${partRows}`}${maxConcurrency === undefined ? '' : `\n    max_concurrency: ${maxConcurrency}`}`;
  return `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
${Object.entries(routes).map(route).join('\n')}
`;
}

/** Where the world's target keeps its receipts. */
export const WORLD_RECEIPTS: TableRef = { schema: 'dwh', table: 'cutpoint_receipts' };

/** Embedded ClickHouse with `src.events` seeded, and the source port over it. */
export interface EventSource {
  ch: ClickHouseHandle;
  source: SourcePort;
  close(): Promise<void>;
}

export async function openEventSource(events: readonly SourceEvent[]): Promise<EventSource> {
  const ch = await openClickHouse({ kind: 'embedded' });
  await seedSourceEvents(ch, events);
  return { ch, source: createClickHouseSource(ch, { closeHandle: false }), close: () => ch.close() };
}

/** Embedded PostgreSQL with schema `dwh` and the given event tables, an admin client, and the target adapter on it. */
export interface Warehouse {
  pgServer: EmbeddedPostgres;
  /** A plain client for setup and assertions (errors after the server stops are ignored). */
  admin: pg.Client;
  target: PostgresTarget;
  /** The target adapter's fault switch. */
  targetFaults: FaultSwitch;
  /** Holds the target's next effect at a cut point until released (test/support/held-effect.ts); the armed faults apply after. */
  holdTarget(cutPoint: string): HeldEffect;
  /** Ids (as text, sorted) in `dwh.<table>` inside [window.start, window.end). */
  targetWindowIds(table: string, window: { start: string; end: string }): Promise<string[]>;
  /** Owned stages (cutpoint_stg_*) left in schema `dwh`. */
  stagesLeft(): Promise<number>;
  /** Receipt rows of one invocation in `dwh.cutpoint_receipts` (0 while the table does not exist). */
  receiptsOf(invocationId: string): Promise<number>;
  close(): Promise<void>;
}

export interface WarehouseOptions {
  /** Event tables to create in `dwh` (none by default). */
  tables?: readonly string[];
  /** The target's receipt table; WORLD_RECEIPTS by default, 'adapter default' for the adapter's own (public.cutpoint_receipts). */
  receiptTable?: TableRef | 'adapter default';
  /**
   * The target adapter's own options: an injector instead of `targetFaults` (the fault
   * scheduler's, test/support/sched/stores.ts), its lock timeout and pool.
   */
  target?: Pick<PostgresTargetOptions, 'faults' | 'lockTimeoutMs' | 'pool'>;
}

export async function openWarehouse(options: WarehouseOptions = {}): Promise<Warehouse> {
  const pgServer = await startEmbeddedPostgres();
  const admin = new pg.Client({ connectionString: pgServer.connectionString });
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query('CREATE SCHEMA dwh');
  for (const table of options.tables ?? []) await admin.query(eventsTableDdl(table));
  const targetFaults = new FaultSwitch();
  const holding = new HoldingFaults(targetFaults);
  const receiptTable = options.receiptTable ?? WORLD_RECEIPTS;
  const target = openPostgresTarget({
    connectionString: pgServer.connectionString,
    faults: holding,
    ...options.target,
    ...(receiptTable === 'adapter default' ? {} : { receiptTable }),
  });
  return {
    pgServer,
    admin,
    target,
    targetFaults,
    holdTarget: (cutPoint) => holding.hold(cutPoint),
    async targetWindowIds(table, window) {
      const result = await admin.query<{ id: string }>(
        `SELECT event_id::text AS id FROM dwh.${table} WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`,
        [window.start, window.end],
      );
      return result.rows.map((r) => r.id).sort();
    },
    async stagesLeft() {
      const result = await admin.query(
        `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relkind = 'r' AND c.relname LIKE 'cutpoint_stg_%'`,
      );
      return result.rowCount ?? 0;
    },
    async receiptsOf(invocationId) {
      const exists = await admin.query(
        `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname = 'cutpoint_receipts'`,
      );
      if (!exists.rowCount) return 0;
      return (
        (await admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount ??
        0
      );
    },
    async close() {
      await target.close();
      await admin.end();
      await pgServer.stop();
    },
  };
}

/** What a flow's Task steps are handed besides their input: the route comes from each Task's input, as in Lambda. */
export interface FlowParts {
  ports: Ports;
  target: TargetPort;
  source: SourcePort;
}

/** Runs a flow (deliver-window, delivery-reconcile|resume|retire) with the local runner, retry pauses 0. */
export function runDeliveryFlow(flow: string, input: unknown, parts: FlowParts): Promise<FlowResult> {
  return runFlow(flow, input, {
    ports: parts.ports,
    retryIntervalMs: 0,
    stepDeps: (event) =>
      Promise.resolve({
        ports: parts.ports,
        target: parts.target,
        mode: TRANSACTION_MODE,
        source: parts.source,
        route: routeOfEvent(event),
      }),
  });
}

export interface DeliveryWorld extends EventSource, Warehouse {
  stores: TestStores;
  /** Deps for the in-process steps: the world's stores, target and (unless given another) source. */
  deps(route: SelectedRoute, source?: SourcePort): DeliveryDeps;
  /** Deps for a recovery action: a fresh refusing source unless one is given. */
  recoveryDeps(route: SelectedRoute, source?: GuardedSource): RecoveryDeps;
  /** A flow over the world's stores and target, with the world's source unless another is given. */
  runFlow(flow: string, input: unknown, source?: SourcePort): Promise<FlowResult>;
  /** The invocation's journaled state transitions as `FROM>TO`, each checked (expect) to be an edge of the journal's graph. */
  journalTransitions(invocationId: string): Promise<string[]>;
}

/**
 * Fresh stores, then embedded ClickHouse with `rows` seeded into `src.events`, then embedded
 * PostgreSQL with `dwh.<tables>`; `close()` stops them in reverse.
 */
export async function openDeliveryWorld(options: {
  rows: readonly SourceEvent[];
  tables?: readonly string[];
}): Promise<DeliveryWorld> {
  const stores = await freshStores();
  const events = await openEventSource(options.rows);
  let warehouse: Warehouse;
  try {
    warehouse = await openWarehouse({ tables: options.tables });
  } catch (error) {
    await events.close();
    throw error;
  }
  const { source } = events;
  const { target } = warehouse;
  return {
    ...events,
    ...warehouse,
    stores,
    deps: (route, other = source) => ({ ports: stores.ports, target, mode: TRANSACTION_MODE, source: other, route }),
    recoveryDeps: (route, refusing = forbiddenSource()) => ({
      ports: stores.ports,
      target,
      mode: TRANSACTION_MODE,
      route,
      source: refusing,
    }),
    runFlow: (flow, input, other = source) =>
      runDeliveryFlow(flow, input, { ports: stores.ports, target, source: other }),
    async journalTransitions(invocationId) {
      const moves: string[] = [];
      for (const e of await journalOf(stores.ports.authority, invocationId).read()) {
        const { from, to } = e.data as { from?: unknown; to?: unknown };
        if (to === undefined) continue;
        expect(isJournalState(from) && isJournalState(to) && canTransition(from, to)).toBe(true);
        moves.push(`${String(from)}>${String(to)}`);
      }
      return moves;
    },
    async close() {
      await warehouse.close();
      await events.close();
    },
  };
}
