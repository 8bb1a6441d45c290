import { afterAll, beforeAll } from 'vitest';
import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { spyHandle } from './clickhouse-spy.js';
import { canonicalJson } from '../../src/domain/digest.js';
import type { SealedWindow } from '../../src/domain/delivery/window.js';
import type { SourceChunk, SourcePort } from '../../src/ports/source.js';
import type { StreamWindowRequest } from '../../src/domain/delivery/source-types.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';

/**
 * The ClickHouse source tests' data (test/integration/clickhouse-source*.test.ts): five days
 * of generated rows with injection strings in the data, rows on and around the window's
 * bounds, duplicates on one full key and an id past 2^53; what the source must make of them;
 * and the embedded engine holding them (one engine per process: a file opens it once).
 */

const DAY = 86_400_000;
const BASE = Date.parse('2026-11-01T00:00:00.000Z');
/** Five days of rows, one every 144 s: ids 600 and 1800 fall exactly on the window bounds. */
const GENERATED = 3000;
const STEP_MS = 144_000;
export const WINDOW: SealedWindow = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
export const START_MS = Date.parse(WINDOW.start);
export const END_MS = Date.parse(WINDOW.end);

export const INJECTIONS = [
  "'); DROP TABLE src.events; --",
  '` OR 1=1 --',
  '{cutpoint_window_start:DateTime64(3)}',
  'back\\slash "quotes" \n newline \t tab \u0000 nul',
  'unicode ✓ 😀 \u2028 Ω',
  '',
];

export interface Inserted {
  event_id: number;
  event_time: number;
  region: string;
  amount: number;
  body: string;
  note: string | null;
}

export const inserted: Inserted[] = [];

function add(row: Inserted): void {
  inserted.push(row);
}

for (let i = 1; i <= GENERATED; i++) {
  add({
    event_id: i,
    event_time: BASE + i * STEP_MS,
    region: i % 3 === 0 ? 'eu' : 'us',
    amount: (i % 1000) / 8,
    body: i % 97 === 0 ? (INJECTIONS[i % INJECTIONS.length] as string) : `body-${i}`,
    note: i % 2 === 0 ? null : `note ${i}`,
  });
}
// Around both bounds, to the millisecond, and ties on the time column.
for (const [id, t] of [
  [10_001, START_MS - 1],
  [10_002, START_MS],
  [10_003, START_MS],
  [10_004, END_MS - 1],
  [10_005, END_MS],
  [10_006, END_MS + 1],
] as const) {
  add({ event_id: id, event_time: t, region: 'eu', amount: 1.5, body: `bound ${id}`, note: null });
}
// Two rows on one full key (time, id) — duplicates must still come out in one order.
for (const body of ['dup z', 'dup a', 'dup m']) {
  add({ event_id: 20_001, event_time: START_MS + (5 * DAY) / 10, region: 'us', amount: 2, body, note: 'dup' });
}
// A row whose id exceeds 2^53: it must come back exact, as text.
add({ event_id: 0, event_time: START_MS + 1234, region: 'eu', amount: 0, body: 'huge id', note: null });

/** How the source represents an inserted row (see src/ports/source.ts). */
export function expected(row: Inserted): TargetRow {
  return {
    event_id: row.body === 'huge id' ? '18446744073709551615' : String(row.event_id),
    event_time: new Date(row.event_time).toISOString(),
    region: row.region,
    amount: String(row.amount),
    body: row.body,
    note: row.note,
  };
}

export const COLUMNS = ['event_id', 'event_time', 'region', 'amount', 'body', 'note'];

export function expectedWindow(filter: (r: Inserted) => boolean = () => true): TargetRow[] {
  return inserted
    .filter((r) => r.event_time >= START_MS && r.event_time < END_MS && filter(r))
    .map(expected)
    .sort((a, b) => {
      const ka = canonicalJson([
        a.event_time,
        BigInt(a.event_id as string)
          .toString()
          .padStart(20, '0'),
      ]);
      const kb = canonicalJson([
        b.event_time,
        BigInt(b.event_id as string)
          .toString()
          .padStart(20, '0'),
      ]);
      if (ka !== kb) return ka < kb ? -1 : 1;
      const ta = canonicalJson(COLUMNS.map((c) => a[c]));
      const tb = canonicalJson(COLUMNS.map((c) => b[c]));
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    });
}

export const tableRequest = (chunkRows: number, overrides: Partial<StreamWindowRequest> = {}): StreamWindowRequest => ({
  from: { kind: 'table', table: { schema: 'src', name: 'events' } },
  timeColumn: 'event_time',
  keyColumns: ['event_id'],
  window: WINDOW,
  chunkRows,
  ...overrides,
});

export async function collect(iterable: AsyncIterable<SourceChunk>): Promise<SourceChunk[]> {
  const out: SourceChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

/** Embedded ClickHouse holding `inserted` as `src.events`, sorted by id (the window order must come from the query). */
export async function openSourceEngine(): Promise<ClickHouseHandle> {
  const ch = await openClickHouse({ kind: 'embedded' });
  await ch.client.command({ query: 'CREATE DATABASE src' });
  // Sorted by id, not time: the window order must come from the query, not storage.
  await ch.client.command({
    query: `CREATE TABLE src.events (
      event_id UInt64, event_time DateTime64(3, 'UTC'), region LowCardinality(String),
      amount Decimal(18, 4), body String, note Nullable(String)
    ) ENGINE = MergeTree ORDER BY event_id`,
  });
  // Several inserts, several parts, in shuffled order.
  const rows = inserted.map((r) => ({
    event_id: r.body === 'huge id' ? '18446744073709551615' : r.event_id,
    event_time: dateTime64Param(new Date(r.event_time)),
    region: r.region,
    amount: r.amount,
    body: r.body,
    note: r.note,
  }));
  const shuffled = rows
    .map((r, i) => ({ r, k: (i * 7919) % rows.length }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.r);
  for (let i = 0; i < shuffled.length; i += 700) {
    await ch.client.insert({ table: 'src.events', format: 'JSONEachRow', values: shuffled.slice(i, i + 700) });
  }
  return ch;
}

/** The enclosing file's engine: the handle, the source over its spied twin, and every statement the twin sent. */
export interface SourceEngine {
  ch: ClickHouseHandle;
  spied: ClickHouseHandle;
  source: SourcePort;
  /** Every statement the spied handle sent, in order. */
  sent: string[];
  /** Another handle's statements, recorded into `sent` too. */
  spy(handle: ClickHouseHandle): ClickHouseHandle;
}

/** Opens the engine (`openSourceEngine`) before the enclosing file's tests, closes it after. */
export function sourceEngine(): SourceEngine {
  const sent: string[] = [];
  const engine = { sent, spy: (handle: ClickHouseHandle) => spyHandle(handle, sent) } as SourceEngine;
  beforeAll(async () => {
    engine.ch = await openSourceEngine();
    engine.spied = engine.spy(engine.ch);
    engine.source = createClickHouseSource(engine.spied, { closeHandle: false });
  });
  afterAll(async () => {
    await engine.ch?.close();
  });
  return engine;
}
