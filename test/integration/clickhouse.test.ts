import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dateTime64Param, openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';

/**
 * Embedded ClickHouse (chdb inside this test process) through the official client. The
 * engine is one per process and binds one data directory at a time, so the tests in this
 * file share one handle and run in order; the restart test opens the next engine only
 * after closing the shared one.
 */
let ch: ClickHouseHandle;
let dataDir: string;

async function rows<T>(query: string, query_params?: Record<string, unknown>): Promise<T[]> {
  const result = await ch.client.query({ query, format: 'JSONEachRow', ...(query_params ? { query_params } : {}) });
  return result.json<T>();
}

/** Where the engine really keeps its data: the default disk's path. */
async function enginePath(handle: ClickHouseHandle): Promise<string> {
  const result = await handle.client.query({
    query: "SELECT path FROM system.disks WHERE name = 'default'",
    format: 'JSONEachRow',
  });
  const [disk] = await result.json<{ path: string }>();
  if (!disk) throw new Error('no default disk');
  return disk.path;
}

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
  dataDir = await enginePath(ch);
});

afterAll(async () => {
  await ch.close();
});

describe('embedded ClickHouse', () => {
  it('runs in a fresh temporary directory, in UTC', async () => {
    expect(dataDir.startsWith(join(tmpdir(), 'cutpoint-clickhouse-'))).toBe(true);
    expect(existsSync(dataDir)).toBe(true);
    expect(await rows('SELECT timezone() AS tz')).toEqual([{ tz: 'UTC' }]);
  });

  it('selects a half-open UTC window [start, end) exactly, in order, bound by parameters', async () => {
    await ch.client.command({
      query:
        "CREATE TABLE events (id UInt32, ts DateTime64(3, 'UTC'), body String) ENGINE = MergeTree ORDER BY (ts, id)",
    });
    // Inserted out of order, with rows on and either side of both bounds.
    await ch.client.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: [
        { id: 5, ts: '2024-03-01 10:00:01.000', body: 'at end: excluded' },
        { id: 2, ts: '2024-03-01 10:00:00.000', body: 'at start: included' },
        { id: 1, ts: '2024-03-01 09:59:59.999', body: 'before start' },
        { id: 4, ts: '2024-03-01 10:00:00.999', body: 'last included' },
        { id: 3, ts: '2024-03-01 10:00:00.000', body: 'tie on start, higher id' },
        { id: 6, ts: '2024-03-01 10:00:01.001', body: 'after end' },
      ],
    });
    const window = {
      start: dateTime64Param(new Date('2024-03-01T10:00:00.000Z')),
      end: dateTime64Param(new Date('2024-03-01T10:00:01.000Z')),
    };
    expect(window).toEqual({ start: '2024-03-01 10:00:00.000', end: '2024-03-01 10:00:01.000' });
    const selected = await rows<{ id: number; ts: string; body: string }>(
      'SELECT id, ts, body FROM events WHERE ts >= {start:DateTime64(3)} AND ts < {end:DateTime64(3)} ORDER BY ts, id',
      window,
    );
    expect(selected).toEqual([
      { id: 2, ts: '2024-03-01 10:00:00.000', body: 'at start: included' },
      { id: 3, ts: '2024-03-01 10:00:00.000', body: 'tie on start, higher id' },
      { id: 4, ts: '2024-03-01 10:00:00.999', body: 'last included' },
    ]);
    // A bound to the millisecond: moving end by 1 ms takes in exactly the row on it.
    const widened = await rows<{ id: number }>(
      'SELECT id FROM events WHERE ts >= {start:DateTime64(3)} AND ts < {end:DateTime64(3)} ORDER BY ts, id',
      { ...window, end: dateTime64Param(new Date('2024-03-01T10:00:01.001Z')) },
    );
    expect(widened.map((r) => r.id)).toEqual([2, 3, 4, 5]);
  });

  it('EXCHANGE TABLES swaps two tables atomically', async () => {
    for (const name of ['live', 'staged']) {
      await ch.client.command({ query: `CREATE TABLE ${name} (k UInt32, v String) ENGINE = MergeTree ORDER BY k` });
    }
    await ch.client.insert({ table: 'live', format: 'JSONEachRow', values: [{ k: 1, v: 'old' }] });
    await ch.client.insert({
      table: 'staged',
      format: 'JSONEachRow',
      values: [
        { k: 1, v: 'new' },
        { k: 2, v: 'new' },
      ],
    });
    await ch.client.command({ query: 'EXCHANGE TABLES live AND staged' });
    expect(await rows('SELECT k, v FROM live ORDER BY k')).toEqual([
      { k: 1, v: 'new' },
      { k: 2, v: 'new' },
    ]);
    expect(await rows('SELECT k, v FROM staged ORDER BY k')).toEqual([{ k: 1, v: 'old' }]);
  });

  it('close removes the temporary directory, and a persistent dataDir keeps its data across engines', async () => {
    await ch.close();
    await ch.close(); // idempotent
    expect(existsSync(dataDir)).toBe(false);

    const persistent = mkdtempSync(join(tmpdir(), 'cutpoint-clickhouse-test-'));
    try {
      const first = await openClickHouse({ kind: 'embedded', dataDir: persistent });
      expect(await enginePath(first)).toBe(`${persistent}/`);
      await first.client.command({ query: 'CREATE TABLE kept (k UInt32) ENGINE = MergeTree ORDER BY k' });
      await first.client.insert({ table: 'kept', format: 'JSONEachRow', values: [{ k: 7 }] });
      await first.close();
      expect(existsSync(persistent)).toBe(true);

      const second = await openClickHouse({ kind: 'embedded', dataDir: persistent });
      try {
        const result = await second.client.query({ query: 'SELECT k FROM kept', format: 'JSONEachRow' });
        expect(await result.json()).toEqual([{ k: 7 }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(persistent, { recursive: true, force: true });
    }
  });
});
