import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spyHandle } from '../support/clickhouse-spy.js';
import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { countQuery, createClickHouseSource, windowQuery } from '../../src/adapters/clickhouse/source.js';
import { canonicalJson } from '../../src/domain/digest.js';
import {
  decodeChunk,
  encodeChunk,
  encodeSourceChunk,
  type ExtractedChunkReceipt,
} from '../../src/delivery/chunk-codec.js';
import type { SealedWindow } from '../../src/domain/delivery/window.js';
import type { SourceChunk, SourcePort } from '../../src/ports/source.js';
import type { StreamWindowRequest } from '../../src/domain/delivery/source-types.js';
import { SourceForbiddenError } from '../../src/domain/delivery/source-errors.js';
import { sourceKeyOf } from '../../src/domain/delivery/source-rules.js';
import { forbiddenSource, guardedSource } from '../../src/delivery/source-guard.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';
import { chunkDigest } from '../../src/domain/delivery/target-rules.js';

/**
 * The ClickHouse delivery source on embedded ClickHouse (chdb, in this test process)
 * through the official client. One engine per process: the whole file shares one handle.
 */
let ch: ClickHouseHandle;
/** Every statement the spied handle sent, in order. */
const sent: string[] = [];
let spied: ClickHouseHandle;
let source: SourcePort;

const DAY = 86_400_000;
const BASE = Date.parse('2026-11-01T00:00:00.000Z');
/** Five days of rows, one every 144 s: ids 600 and 1800 fall exactly on the window bounds. */
const GENERATED = 3000;
const STEP_MS = 144_000;
const WINDOW: SealedWindow = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

const INJECTIONS = [
  "'); DROP TABLE src.events; --",
  '` OR 1=1 --',
  '{cutpoint_window_start:DateTime64(3)}',
  'back\\slash "quotes" \n newline \t tab \u0000 nul',
  'unicode ✓ 😀 \u2028 Ω',
  '',
];

interface Inserted {
  event_id: number;
  event_time: number;
  region: string;
  amount: number;
  body: string;
  note: string | null;
}

const inserted: Inserted[] = [];

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
function expected(row: Inserted): TargetRow {
  return {
    event_id: row.body === 'huge id' ? '18446744073709551615' : String(row.event_id),
    event_time: new Date(row.event_time).toISOString(),
    region: row.region,
    amount: String(row.amount),
    body: row.body,
    note: row.note,
  };
}

const COLUMNS = ['event_id', 'event_time', 'region', 'amount', 'body', 'note'];

function expectedWindow(filter: (r: Inserted) => boolean = () => true): TargetRow[] {
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

const tableRequest = (chunkRows: number, overrides: Partial<StreamWindowRequest> = {}): StreamWindowRequest => ({
  from: { kind: 'table', table: { schema: 'src', name: 'events' } },
  timeColumn: 'event_time',
  keyColumns: ['event_id'],
  window: WINDOW,
  chunkRows,
  ...overrides,
});

async function collect(iterable: AsyncIterable<SourceChunk>): Promise<SourceChunk[]> {
  const out: SourceChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

const spy = (handle: ClickHouseHandle): ClickHouseHandle => spyHandle(handle, sent);

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
  spied = spy(ch);
  source = createClickHouseSource(spied, { closeHandle: false });
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
});

afterAll(async () => {
  await ch?.close();
});

describe('ClickHouse source: one sealed window as ordered chunks', () => {
  it('streams exactly the half-open window, in (time, key) order, in contiguous chunks of chunkRows', async () => {
    const want = expectedWindow();
    expect(want.length).toBeGreaterThan(1000);
    const chunks = await collect(source.streamWindow(tableRequest(250)));
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.slice(0, -1).every((c) => c.rows.length === 250)).toBe(true);
    expect(chunks.at(-1)?.rows.length).toBe(want.length - 250 * (chunks.length - 1));
    const rows = chunks.flatMap((c) => c.rows);
    expect(rows).toEqual(want);
    for (const c of chunks) {
      expect(c.columns).toEqual(COLUMNS);
      expect(c.firstKey).toEqual(sourceKeyOf(c.rows[0] as TargetRow, 'event_time', ['event_id']));
      expect(c.lastKey).toEqual(sourceKeyOf(c.rows.at(-1) as TargetRow, 'event_time', ['event_id']));
      for (const row of c.rows) expect(Object.keys(row)).toEqual(COLUMNS);
    }
    // The bounds, to the millisecond: start and end - 1 ms in, start - 1 ms and end out.
    const ids = new Set(rows.map((r) => r.event_id));
    for (const id of ['10002', '10003', '10004', '600']) expect(ids.has(id)).toBe(true);
    for (const id of ['10001', '10005', '10006', '1800', '599']) expect(ids.has(id)).toBe(false);
    expect(rows[0]).toMatchObject({ event_time: WINDOW.start, event_id: '600' });
    expect(rows.at(-1)).toMatchObject({ event_time: '2026-11-03T23:59:59.999Z', event_id: '10004' });
    // Values: ISO UTC time text, UInt64 and Decimal as exact text, NULL as null.
    expect(rows.find((r) => r.body === 'huge id')).toEqual({
      event_id: '18446744073709551615',
      event_time: '2026-11-02T00:00:01.234Z',
      region: 'eu',
      amount: '0',
      body: 'huge id',
      note: null,
    });
  });

  it('counts the same rows it streams', async () => {
    const want = expectedWindow().length;
    expect(await source.countWindow(tableRequest(1))).toBe(want);
    const total = (await collect(source.streamWindow(tableRequest(1000)))).reduce((n, c) => n + c.rows.length, 0);
    expect(total).toBe(want);
  });

  it('re-extraction gives byte-identical chunks, also after the storage is rewritten', async () => {
    let proved = 0;
    let spelled = 0;
    const receipts = async (chunkRows: number) => {
      const out: Array<{ bytes: Buffer; receipt: ExtractedChunkReceipt }> = [];
      for await (const chunk of source.streamWindow(tableRequest(chunkRows))) {
        // Rows whose engine text is proved canonical are taken as is (line-proof.ts), the others spelled.
        const taken = (chunk.lines ?? []).filter((line) => line !== undefined).length;
        proved += taken;
        spelled += chunk.rows.length - taken;
        const { bytes, receipt } = encodeSourceChunk(chunk);
        out.push({ bytes: Buffer.from(bytes), receipt });
      }
      return out;
    };
    const first = await receipts(97);
    expect(proved).toBeGreaterThan(0);
    expect(spelled).toBeGreaterThan(0);
    const second = await receipts(97);
    expect(second.map((x) => x.receipt)).toEqual(first.map((x) => x.receipt));
    // Merging every part changes the physical order; the chunks do not change.
    await ch.client.command({ query: 'OPTIMIZE TABLE src.events FINAL' });
    const third = await receipts(97);
    expect(third.map((x) => x.receipt)).toEqual(first.map((x) => x.receipt));
    // The window's bytes do not depend on how they are cut.
    const whole = Buffer.concat((await receipts(100_000)).map((x) => x.bytes));
    expect(whole.equals(Buffer.concat(first.map((x) => x.bytes)))).toBe(true);
    // A verified re-read of each object gives back the receipt's rows and digest.
    for (const { bytes, receipt } of first) {
      const rows = decodeChunk(bytes, COLUMNS);
      expect(rows).toHaveLength(receipt.rows);
      expect(chunkDigest(COLUMNS, rows)).toBe(receipt.digest);
      expect(Buffer.from(encodeChunk(rows, COLUMNS)).equals(bytes)).toBe(true);
    }
  });

  it('orders rows that tie on the whole key by their values, and respects chunkRows 1 across the tie', async () => {
    const chunks = await collect(source.streamWindow(tableRequest(1)));
    const dups = chunks.flatMap((c) => c.rows).filter((r) => r.event_id === '20001');
    expect(dups.map((r) => r.body)).toEqual(['dup a', 'dup m', 'dup z']);
    expect(chunks.every((c) => c.rows.length === 1)).toBe(true);
  });

  it('reads a query source as a bounded subquery', async () => {
    const request = tableRequest(333, {
      from: {
        kind: 'query',
        // A trailing comment must not swallow the bound the source adds after it.
        sql: "SELECT event_id, event_time, body FROM src.events WHERE region = 'eu' -- only the EU",
      },
    });
    const want = expectedWindow((r) => r.region === 'eu').map((r) => ({
      event_id: r.event_id,
      event_time: r.event_time,
      body: r.body,
    }));
    const chunks = await collect(source.streamWindow(request));
    expect(chunks.flatMap((c) => c.rows)).toEqual(want);
    expect(chunks[0]?.columns).toEqual(['event_id', 'event_time', 'body']);
    expect(await source.countWindow(request)).toBe(want.length);
    expect(await source.describe(request)).toEqual([
      { name: 'event_id', type: 'UInt64' },
      { name: 'event_time', type: "DateTime64(3, 'UTC')" },
      { name: 'body', type: 'String' },
    ]);
    // An authored query can use the window parameters itself.
    const pushed = tableRequest(5000, {
      from: {
        kind: 'query',
        sql: 'SELECT * FROM src.events WHERE event_time >= {cutpoint_window_start:DateTime64(3)}',
      },
    });
    expect(await source.countWindow(pushed)).toBe(expectedWindow().length);
  });

  it('binds the window as parameters and keeps injection strings in the data as data', async () => {
    const statement = windowQuery(tableRequest(10));
    expect(statement.query).not.toContain('2026');
    expect(statement.query).toContain('{cutpoint_window_start:DateTime64(3)}');
    expect(statement.query_params).toEqual({
      cutpoint_window_start: '2026-11-02 00:00:00.000',
      cutpoint_window_end: '2026-11-04 00:00:00.000',
    });
    expect(countQuery(tableRequest(10)).query).not.toContain('2026');
    const rows = (await collect(source.streamWindow(tableRequest(500)))).flatMap((c) => c.rows);
    const bodies = new Set(rows.map((r) => r.body));
    const injected = inserted.filter(
      (r) => INJECTIONS.includes(r.body) && r.event_time >= START_MS && r.event_time < END_MS,
    );
    expect(injected.length).toBeGreaterThanOrEqual(INJECTIONS.length);
    for (const r of injected) expect(bodies.has(r.body)).toBe(true);
    // And through the chunk object.
    const decoded = decodeChunk(encodeChunk(rows, COLUMNS), COLUMNS);
    expect(decoded).toEqual(rows);
    // The table is still there.
    expect(await source.countWindow(tableRequest(1))).toBe(rows.length);
  });

  it('refuses bad identifiers, windows and chunk sizes before any query', async () => {
    const before = sent.length;
    const bad: Array<Partial<StreamWindowRequest>> = [
      { from: { kind: 'table', table: { schema: 'src', name: 'events`; DROP TABLE src.events; --' } } },
      { from: { kind: 'table', table: { schema: 'src`', name: 'events' } } },
      { from: { kind: 'table', table: { schema: '', name: 'events' } } },
      { from: { kind: 'query', sql: '   ' } },
      { timeColumn: 'event_time) OR (1=1' },
      { timeColumn: '`event_time`' },
      { keyColumns: [] },
      { keyColumns: ['event_id', 'EVENT_ID'] },
      { keyColumns: ['event id'] },
      { window: { start: '2026-11-02 00:00:00', end: WINDOW.end } },
      { window: { start: WINDOW.end, end: WINDOW.start } },
      { chunkRows: 0 },
      { chunkRows: 1.5 },
      { chunkRows: 2_000_000 },
    ];
    for (const overrides of bad) {
      const request = tableRequest(10, overrides);
      const invalid = expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.source_invalid' });
      // Thrown by the call itself, not on first iteration.
      expect(() => source.streamWindow(request), JSON.stringify(overrides)).toThrow(invalid);
      if (overrides.chunkRows === undefined) await expect(source.countWindow(request)).rejects.toThrow(invalid);
      if (overrides.window === undefined && overrides.chunkRows === undefined)
        await expect(source.describe(request)).rejects.toThrow(invalid);
    }
    expect(sent.slice(before)).toEqual([]);
  });

  it('refuses a source whose schema does not fit, after DESCRIBE and before reading rows', async () => {
    const cases: Array<[Partial<StreamWindowRequest>, RegExp]> = [
      [{ timeColumn: 'missing' }, /no time column missing/],
      [{ timeColumn: 'body' }, /must be Date, DateTime or DateTime64/],
      [{ keyColumns: ['nope'] }, /no key column nope/],
      [
        {
          from: {
            kind: 'query',
            sql: 'SELECT event_id, event_time, count() FROM src.events GROUP BY event_id, event_time',
          },
        },
        /not an SQL identifier/,
      ],
    ];
    for (const [overrides, message] of cases) {
      const before = sent.length;
      await expect(collect(source.streamWindow(tableRequest(10, overrides)))).rejects.toThrow(
        expect.objectContaining({ code: 'delivery.source_schema_invalid', message: expect.stringMatching(message) }),
      );
      expect(sent.slice(before).map((q) => q.split(' ')[0])).toEqual(['DESCRIBE']);
    }
  });

  it('reports a ClickHouse failure as Delivery.SourceUnavailable', async () => {
    const request = tableRequest(10, { from: { kind: 'query', sql: "SELECT 1 + 'a' AS event_time, 1 AS event_id" } });
    await expect(collect(source.streamWindow(request))).rejects.toMatchObject({
      name: 'Delivery.SourceUnavailable',
      code: 'delivery.source_unavailable',
    });
  });

  it('names a source table (or database) that does not exist: delivery.source_table_missing, a configuration refusal', async () => {
    for (const table of [
      { schema: 'src', name: 'absent' },
      { schema: 'no_such_db', name: 'events' },
    ]) {
      const request = tableRequest(10, { from: { kind: 'table', table } });
      const refusal = {
        name: 'Cutpoint.ValidationError',
        code: 'delivery.source_table_missing',
        message: expect.stringContaining(`source table ${table.schema}.${table.name} does not exist`),
      };
      await expect(collect(source.streamWindow(request))).rejects.toMatchObject(refusal);
      await expect(source.describe(request)).rejects.toMatchObject(refusal);
    }
  });
});

describe('the recovery fence', () => {
  it('refuses every call while armed without reaching ClickHouse, and passes through when not', async () => {
    let armed = true;
    const guarded = guardedSource(source, () => armed);
    const before = sent.length;
    expect(() => guarded.streamWindow(tableRequest(10))).toThrow(SourceForbiddenError);
    await expect(guarded.countWindow(tableRequest(10))).rejects.toMatchObject({
      name: 'Delivery.SourceForbidden',
      code: 'delivery.source_forbidden',
    });
    await expect(guarded.describe(tableRequest(10))).rejects.toMatchObject({ name: 'Delivery.SourceForbidden' });
    expect(sent.length).toBe(before);
    expect(guarded.refusals).toBe(3);
    expect(guarded.attempts).toEqual([
      { method: 'streamWindow', refused: true },
      { method: 'countWindow', refused: true },
      { method: 'describe', refused: true },
    ]);

    // An iterable obtained while disarmed cannot be drained once the fence is armed.
    armed = false;
    const iterable = guarded.streamWindow(tableRequest(10));
    armed = true;
    await expect(collect(iterable)).rejects.toMatchObject({ name: 'Delivery.SourceForbidden' });
    expect(sent.length).toBe(before);

    // Arming mid-stream stops at the next chunk.
    armed = false;
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const chunk of guarded.streamWindow(tableRequest(10))) {
          seen.push(chunk.seq);
          armed = true;
        }
      })(),
    ).rejects.toMatchObject({ code: 'delivery.source_forbidden' });
    expect(seen).toEqual([0]);

    armed = false;
    expect(await guarded.countWindow(tableRequest(10))).toBe(expectedWindow().length);
  });

  it('a recovery that never touches the source leaves no attempts; forbiddenSource refuses everything', async () => {
    const guarded = guardedSource(source, () => true);
    // (a recovery flow would run here)
    expect(guarded.attempts).toEqual([]);
    expect(guarded.refusals).toBe(0);
    const none = forbiddenSource();
    expect(() => none.streamWindow(tableRequest(10))).toThrow(
      expect.objectContaining({ code: 'delivery.source_forbidden' }),
    );
    await expect(none.countWindow(tableRequest(10))).rejects.toThrow(SourceForbiddenError);
    await none.close();
    expect(none.refusals).toBe(2);
  });
});
