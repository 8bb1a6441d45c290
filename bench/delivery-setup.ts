import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { dateTime64Param, type ClickHouseHandle } from '../src/adapters/clickhouse/client.js';
import type { BeginInput } from '../src/delivery/steps/begin.js';
import { invocationIdFrom } from '../src/domain/delivery/identifiers.js';
import type { SealedWindow } from '../src/domain/delivery/window.js';

/**
 * What every delivery bench section shares: the synthetic source (`src.events` in the
 * embedded ClickHouse, one row per second), the manifest of the bench's routes (each a
 * fixed window of whole rows into its own target table), fresh invocations.
 */

/** Source rows are one per second from BASE_MS on; every window is a run of whole rows. */
const BASE_MS = Date.parse('2025-01-01T00:00:00.000Z');
const STEP_MS = 1000;
const SEED_BATCH = 10_000;
export const SELECTOR_FILE = '/bench/route.yaml';

export interface BenchRoute {
  name: string;
  table: string;
  /** First row (0-based) and row count of its window. */
  firstRow: number;
  rows: number;
  chunkRows: number;
  /** Omitted: the manifest's defaults. */
  partRows?: number;
  maxConcurrency?: number;
}

/** The target tables' columns (also (b)'s fresh table, without the key). */
export const TARGET_COLUMN_TYPES: Readonly<Record<string, string>> = {
  event_id: 'bigint',
  event_time: 'timestamptz',
  region: 'text',
  amount: 'numeric(18, 4)',
  note: 'text',
};

/**
 * A route's target table: window-partitioned (RANGE on event_time, the route's window one
 * partition), as a user with windows of 10^8 rows runs it, so the bench measures the O(1)
 * publication (the stage swapped in as the window's partition, no row copied).
 */
export const TARGET_TABLE_DDL = (schema: string, route: BenchRoute): string =>
  `CREATE TABLE ${schema}.${route.table} (event_id bigint NOT NULL, event_time timestamptz NOT NULL, region text, amount numeric(18, 4), note text,
     PRIMARY KEY (event_id, event_time)) PARTITION BY RANGE (event_time);
   CREATE TABLE ${schema}.${route.table}_window PARTITION OF ${schema}.${route.table}
     FOR VALUES FROM ('${instant(route.firstRow)}') TO ('${instant(route.firstRow + route.rows)}')`;

function instant(row: number): string {
  return new Date(BASE_MS + row * STEP_MS).toISOString();
}

export function manifestOf(routes: readonly BenchRoute[]): string {
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
      // The target's key includes its time column, as any unique key of a window-partitioned
      // table must (its primary key is (event_id, event_time)): quality then probes key
      // duplicates part by part (docs/delivery.md "Limits a user must know").
      `    target: { binding: warehouse, table: dwh.${r.table}, key_columns: [event_id, event_time], mode: replace_window }`,
      '    quality:',
      '      unique_keys: true',
      '      not_null: [event_id, event_time]',
      `    chunk_rows: ${r.chunkRows}`,
    );
    if (r.partRows !== undefined) lines.push(`    part_rows: ${r.partRows}`);
    if (r.maxConcurrency !== undefined) lines.push(`    max_concurrency: ${r.maxConcurrency}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `src.events` in the embedded ClickHouse, `rows` synthetic events one second apart,
 * ordered by (event_time, event_id) as an event table read by time windows is: a part's
 * range read is pruned by the primary key and read in order, like the raw read (a).
 * Duplicates test/support/delivery-source.ts `seedSourceEvents` (same table, same columns,
 * values generated here): bench does not import from test/.
 */
export async function seedSource(ch: ClickHouseHandle, rows: number): Promise<void> {
  await ch.client.command({ query: 'CREATE DATABASE src' });
  await ch.client.command({
    query: `CREATE TABLE src.events (event_id UInt64, event_time DateTime64(3, 'UTC'), region String, amount Decimal(18, 4), note Nullable(String))
            ENGINE = MergeTree ORDER BY (event_time, event_id)`,
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

export const newInvocationId = (): string => invocationIdFrom(new Uint8Array(randomBytes(16)));

export function beginInput(invocationId: string, manifestText: string, route: string): BeginInput {
  return {
    invocationId,
    session: `bench-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: `${SELECTOR_FILE}#${route}`,
  };
}

export async function targetRowsIn(admin: pg.Client, table: string, window: SealedWindow): Promise<number> {
  const result = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM dwh.${table} WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz`,
    [window.start, window.end],
  );
  return result.rows[0]?.n ?? -1;
}
