import { describe, expect, it } from 'vitest';
import {
  collect,
  COLUMNS,
  END_MS,
  expectedWindow,
  INJECTIONS,
  inserted,
  START_MS,
  tableRequest,
  WINDOW,
  sourceEngine,
} from '../support/clickhouse-source-data.js';
import { countQuery, windowQuery } from '../../src/adapters/clickhouse/source.js';
import {
  decodeChunk,
  encodeChunk,
  encodeSourceChunk,
  type ExtractedChunkReceipt,
} from '../../src/delivery/chunk-codec.js';
import { sourceKeyOf } from '../../src/domain/delivery/source-rules.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';
import { chunkDigest } from '../../src/domain/delivery/target-rules.js';

/**
 * The ClickHouse delivery source on embedded ClickHouse (chdb, in this test process)
 * through the official client. One engine per process: the whole file shares one handle.
 */
const engine = sourceEngine();

describe('ClickHouse source: one sealed window as ordered chunks', () => {
  it('streams exactly the half-open window, in (time, key) order, in contiguous chunks of chunkRows', async () => {
    const want = expectedWindow();
    expect(want.length).toBeGreaterThan(1000);
    const chunks = await collect(engine.source.streamWindow(tableRequest(250)));
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
    expect(await engine.source.countWindow(tableRequest(1))).toBe(want);
    const total = (await collect(engine.source.streamWindow(tableRequest(1000)))).reduce(
      (n, c) => n + c.rows.length,
      0,
    );
    expect(total).toBe(want);
  });

  it('re-extraction gives byte-identical chunks, also after the storage is rewritten', async () => {
    let proved = 0;
    let spelled = 0;
    const receipts = async (chunkRows: number) => {
      const out: Array<{ bytes: Buffer; receipt: ExtractedChunkReceipt }> = [];
      for await (const chunk of engine.source.streamWindow(tableRequest(chunkRows))) {
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
    await engine.ch.client.command({ query: 'OPTIMIZE TABLE src.events FINAL' });
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
    const chunks = await collect(engine.source.streamWindow(tableRequest(1)));
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
    const chunks = await collect(engine.source.streamWindow(request));
    expect(chunks.flatMap((c) => c.rows)).toEqual(want);
    expect(chunks[0]?.columns).toEqual(['event_id', 'event_time', 'body']);
    expect(await engine.source.countWindow(request)).toBe(want.length);
    expect(await engine.source.describe(request)).toEqual([
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
    expect(await engine.source.countWindow(pushed)).toBe(expectedWindow().length);
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
    const rows = (await collect(engine.source.streamWindow(tableRequest(500)))).flatMap((c) => c.rows);
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
    expect(await engine.source.countWindow(tableRequest(1))).toBe(rows.length);
  });
});
