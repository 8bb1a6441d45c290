import { describe, expect, it } from 'vitest';
import { collect, expectedWindow, tableRequest, WINDOW, sourceEngine } from '../support/clickhouse-source-data.js';
import type { StreamWindowRequest } from '../../src/domain/delivery/source-types.js';
import { SourceForbiddenError } from '../../src/domain/delivery/source-errors.js';
import { forbiddenSource, guardedSource } from '../../src/delivery/source-guard.js';

/**
 * The ClickHouse delivery source's refusals, and the recovery fence around it, on embedded ClickHouse (chdb, in this test process)
 * through the official client. One engine per process: the whole file shares one handle.
 */
const engine = sourceEngine();
const { sent } = engine;

describe('ClickHouse source: refusals', () => {
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
      expect(() => engine.source.streamWindow(request), JSON.stringify(overrides)).toThrow(invalid);
      if (overrides.chunkRows === undefined) await expect(engine.source.countWindow(request)).rejects.toThrow(invalid);
      if (overrides.window === undefined && overrides.chunkRows === undefined)
        await expect(engine.source.describe(request)).rejects.toThrow(invalid);
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
      await expect(collect(engine.source.streamWindow(tableRequest(10, overrides)))).rejects.toThrow(
        expect.objectContaining({ code: 'delivery.source_schema_invalid', message: expect.stringMatching(message) }),
      );
      expect(sent.slice(before).map((q) => q.split(' ')[0])).toEqual(['DESCRIBE']);
    }
  });

  it('reports a ClickHouse failure as Delivery.SourceUnavailable', async () => {
    const request = tableRequest(10, { from: { kind: 'query', sql: "SELECT 1 + 'a' AS event_time, 1 AS event_id" } });
    await expect(collect(engine.source.streamWindow(request))).rejects.toMatchObject({
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
      await expect(collect(engine.source.streamWindow(request))).rejects.toMatchObject(refusal);
      await expect(engine.source.describe(request)).rejects.toMatchObject(refusal);
    }
  });
});
describe('the recovery fence', () => {
  it('refuses every call while armed without reaching ClickHouse, and passes through when not', async () => {
    let armed = true;
    const guarded = guardedSource(engine.source, () => armed);
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
    const guarded = guardedSource(engine.source, () => true);
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
