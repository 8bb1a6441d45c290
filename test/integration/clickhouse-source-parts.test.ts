import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spyHandle } from '../support/clickhouse-spy.js';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { encodeSourceChunk } from '../../src/delivery/chunk-codec.js';
import { bucketsOf } from '../../src/domain/delivery/parts.js';
import type { SealedWindow } from '../../src/domain/delivery/window.js';
import type { SourceChunk, SourcePort } from '../../src/ports/source.js';
import type { CountBucketsRequest, StreamWindowRequest } from '../../src/domain/delivery/source-types.js';
import { sourceKeyOf, sourceKeyText } from '../../src/domain/delivery/source-rules.js';
import { guardedSource } from '../../src/delivery/source-guard.js';

/**
 * What begin and ExtractLoadPart ask of the source (issue 9): rows per equal time bucket
 * (`countBuckets`), and a part's stream started at `firstSeq` or resumed after a journaled
 * chunk (`resumeAfter`). Embedded ClickHouse (chdb), one engine for this file; the time
 * column is DateTime64(6) in a non-UTC zone, the key a UInt64 with values above 2^53.
 */
let ch: ClickHouseHandle;
let source: SourcePort;
const sent: string[] = [];

const WINDOW: SealedWindow = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-02T01:00:00.000Z' };
const START_US = Date.parse(WINDOW.start) * 1000;
const END_US = Date.parse(WINDOW.end) * 1000;
const BUCKETS = 7;

interface Row {
  us: number;
  id: string;
  nk: string | null;
  v: string;
}
const rows: Row[] = [];

// A deterministic spread around the window, with tie groups (same time and id) and rows a
// microsecond either side of every bucket bound.
let seed = 42;
const next = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
for (let i = 0; i < 500; i++) {
  const us = START_US - 600_000_000 + next(4_800_000) * 1000 + next(1000);
  const id = i % 17 === 0 ? (18446744073709551615n - BigInt(next(3))).toString() : String(next(40));
  const ties = i % 11 === 0 ? 2 + next(5) : 1;
  for (let t = 0; t < ties; t++)
    rows.push({ us, id, nk: next(4) === 0 ? null : (['a', 'b', 'c'][next(3)] as string), v: `v${i}.${t}` });
}
for (const b of bucketsOf(WINDOW, BUCKETS)) {
  const us = Date.parse(b.start) * 1000;
  for (const d of [-1, 0, 1]) rows.push({ us: us + d, id: '7', nk: null, v: `bound ${us + d}` });
}
rows.push({ us: END_US - 1, id: '1', nk: 'z', v: 'last µs' }, { us: END_US, id: '1', nk: 'z', v: 'end, out' });

const isoMicro = (us: number): string =>
  `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 19)}.${String(us % 1_000_000).padStart(6, '0')}Z`;

const spy = (handle: ClickHouseHandle): ClickHouseHandle => spyHandle(handle, sent);

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
  source = createClickHouseSource(spy(ch), { closeHandle: false });
  await ch.client.command({ query: 'CREATE DATABASE src' });
  await ch.client.command({
    query:
      "CREATE TABLE src.ev6 (ts DateTime64(6, 'Asia/Tokyo'), id UInt64, nk Nullable(String), v String) ENGINE = MergeTree ORDER BY v",
  });
  const values = rows.map((r) => ({ ts: isoMicro(r.us), id: r.id, nk: r.nk, v: r.v }));
  for (let i = 0; i < values.length; i += 200) {
    await ch.client.insert({
      table: 'src.ev6',
      format: 'JSONEachRow',
      values: values.slice(i, i + 200),
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
  }
});

afterAll(async () => {
  await ch?.close();
});

const EV6 = { kind: 'table', table: { schema: 'src', name: 'ev6' } } as const;
/** The same rows through a query, its time column a second-precision DateTime in Berlin. */
const BERLIN = { kind: 'query', sql: "SELECT toDateTime(ts, 'Europe/Berlin') AS t, id, v FROM src.ev6" } as const;

/** A Date time column (midnight UTC), over two days. */
const DATES = { kind: 'query', sql: "SELECT toDate(ts, 'UTC') AS d, id FROM src.ev6" } as const;
const TWO_DAYS: SealedWindow = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-03T00:00:00.000Z' };

const bucketRequest = (overrides: Partial<CountBucketsRequest> = {}): CountBucketsRequest => ({
  from: EV6,
  timeColumn: 'ts',
  keyColumns: ['id'],
  window: WINDOW,
  buckets: BUCKETS,
  ...overrides,
});

describe('countBuckets: rows per equal time bucket, one GROUP BY', () => {
  it('counts each bucket of bucketsOf exactly, zeros included, for DateTime64(6), DateTime and Date columns, table and query', async () => {
    for (const [request, toUs] of [
      [bucketRequest(), (us: number) => us],
      [
        bucketRequest({ from: BERLIN, timeColumn: 't', buckets: 50 }),
        (us: number) => Math.floor(us / 1_000_000) * 1_000_000,
      ],
      [bucketRequest({ buckets: 4096 }), (us: number) => us],
      [
        bucketRequest({ from: DATES, timeColumn: 'd', window: TWO_DAYS, buckets: 5 }),
        (us: number) => Math.floor(us / 86_400_000_000) * 86_400_000_000,
      ],
    ] as const) {
      const before = sent.length;
      const counts = await source.countBuckets(request);
      // One DESCRIBE and one GROUP BY, nothing else.
      expect(sent.slice(before).map((q) => q.split(' ')[0])).toEqual(['DESCRIBE', 'SELECT']);
      const want = bucketsOf(request.window, request.buckets);
      expect(counts.map(({ start, end }) => ({ start, end }))).toEqual(want);
      const reference = want.map(
        (b) =>
          rows.filter((r) => toUs(r.us) >= Date.parse(b.start) * 1000 && toUs(r.us) < Date.parse(b.end) * 1000).length,
      );
      expect(counts.map((c) => c.rows)).toEqual(reference);
      expect(counts.reduce((n, c) => n + c.rows, 0)).toBe(await source.countWindow(request));
      if (request.buckets === 4096) expect(counts.some((c) => c.rows === 0)).toBe(true);
    }
  });

  it('agrees with countWindow over each sub-window, bucket bounds to the microsecond', async () => {
    const counts = await source.countBuckets(bucketRequest());
    for (const c of counts) {
      expect(c.rows).toBe(await source.countWindow({ ...bucketRequest(), window: { start: c.start, end: c.end } }));
      expect(c.rows).toBeGreaterThan(0);
    }
    // A window shorter in milliseconds than the buckets asked for: one bucket per millisecond.
    const tiny = { start: '2026-11-02T00:10:00.000Z', end: '2026-11-02T00:10:00.004Z' };
    const few = await source.countBuckets(bucketRequest({ window: tiny, buckets: 100 }));
    expect(few.map((c) => c.start)).toEqual(bucketsOf(tiny, 100).map((b) => b.start));
    expect(few).toHaveLength(4);
  });

  it('refuses bad bucket counts and windows before any query, and counts as a source call behind the fence', async () => {
    const before = sent.length;
    for (const overrides of [
      { buckets: 0 },
      { buckets: 4097 },
      { buckets: 2.5 },
      { buckets: Number.NaN },
      { window: { start: WINDOW.end, end: WINDOW.start } },
      { keyColumns: [] },
    ]) {
      await expect(source.countBuckets(bucketRequest(overrides)), JSON.stringify(overrides)).rejects.toMatchObject({
        name: 'Cutpoint.ValidationError',
        code: 'delivery.source_invalid',
      });
    }
    expect(sent.slice(before)).toEqual([]);
    const guarded = guardedSource(source, () => true);
    await expect(guarded.countBuckets(bucketRequest())).rejects.toMatchObject({ code: 'delivery.source_forbidden' });
    expect(guarded.attempts).toEqual([{ method: 'countBuckets', refused: true }]);
    expect(sent.slice(before)).toEqual([]);
  });
});

const streamRequest = (overrides: Partial<StreamWindowRequest> = {}): StreamWindowRequest => ({
  from: EV6,
  timeColumn: 'ts',
  keyColumns: ['id'],
  window: WINDOW,
  chunkRows: 4,
  ...overrides,
});

async function encoded(
  iterable: AsyncIterable<SourceChunk>,
): Promise<Array<{ seq: number; bytes: string; lastKey: SourceChunk['lastKey'] }>> {
  const out: Array<{ seq: number; bytes: string; lastKey: SourceChunk['lastKey'] }> = [];
  for await (const chunk of iterable)
    out.push({
      seq: chunk.seq,
      bytes: Buffer.from(encodeSourceChunk(chunk).bytes).toString('base64'),
      lastKey: chunk.lastKey,
    });
  return out;
}

/**
 * The property: resuming after any chunk k of the full stream (its lastKey, the rows tied
 * on that key in chunks 0..k, seq k + 1) yields exactly chunks k+1.. of the full stream,
 * bytes and seqs. Returns how many cuts fell inside a group of rows tied on the whole key.
 */
async function checkResumes(
  base: StreamWindowRequest,
  cut: (index: number, chunk: SourceChunk, count: number) => boolean,
): Promise<number> {
  const full: SourceChunk[] = [];
  for await (const chunk of source.streamWindow(base)) full.push(chunk);
  const fullEncoded = full.map((c) => ({
    seq: c.seq,
    bytes: Buffer.from(encodeSourceChunk(c).bytes).toString('base64'),
    lastKey: c.lastKey,
  }));
  expect(full.length).toBeGreaterThan(10);
  let inside = 0;
  for (const k of full.keys()) {
    if (!cut(k, full[k] as SourceChunk, full.length)) continue;
    const lastKey = full[k]?.lastKey as SourceChunk['lastKey'];
    const text = sourceKeyText(lastKey);
    const rowsAtLastKey = full
      .slice(0, k + 1)
      .flatMap((c) => c.rows)
      .filter((r) => sourceKeyText(sourceKeyOf(r, base.timeColumn, base.keyColumns)) === text).length;
    if (full[k + 1] && sourceKeyText(full[k + 1]?.firstKey as SourceChunk['firstKey']) === text) inside++;
    const { firstSeq: _unused, ...rest } = base;
    const resumed = await encoded(
      source.streamWindow({ ...rest, resumeAfter: { lastKey, rowsAtLastKey, nextSeq: (full[k]?.seq as number) + 1 } }),
    );
    expect(resumed, `resume after chunk ${k}`).toEqual(fullEncoded.slice(k + 1));
  }
  return inside;
}

/** Every step-th cut, the last two, and (when given) every cut whose last key matches. */
const every =
  (step: number, also: (chunk: SourceChunk) => boolean = () => false) =>
  (i: number, chunk: SourceChunk, count: number) =>
    i % step === 0 || i >= count - 2 || also(chunk);

describe('streamWindow: firstSeq and resumeAfter', () => {
  it('numbers chunks from firstSeq, and a resumed stream equals the tail of the full stream, chunk for chunk', async () => {
    const base = streamRequest({ firstSeq: 300_000 });
    const seqs = (await encoded(source.streamWindow(base))).map((c) => c.seq);
    expect(seqs).toEqual(seqs.map((_, i) => 300_000 + i));
    // DateTime64(6) in Tokyo, UInt64 key above 2^53, tie groups up to 6 rows, chunks of 4.
    const insideTies = await checkResumes(base, every(3));
    expect(insideTies).toBeGreaterThan(0);
    // chunkRows 1: every row of a tie group is a cut of its own.
    expect(await checkResumes(streamRequest({ chunkRows: 1, firstSeq: 7 }), every(5))).toBeGreaterThan(5);
  });

  it('resumes on a Nullable key column (NULL sorts last) and on a second-precision DateTime query column', async () => {
    const nullable = streamRequest({ keyColumns: ['nk', 'id'], chunkRows: 3 });
    const full = await encoded(source.streamWindow(nullable));
    expect(full.some((c) => c.lastKey[1] === null)).toBe(true);
    await checkResumes(
      nullable,
      every(4, (c) => c.lastKey[1] === null),
    );
    await checkResumes(streamRequest({ from: BERLIN, timeColumn: 't', keyColumns: ['id'], chunkRows: 5 }), every(4));
  });

  it('binds the resume key as parameters typed like the columns', async () => {
    const full = await encoded(source.streamWindow(streamRequest()));
    const cut = full[3] as (typeof full)[number];
    const before = sent.length;
    await encoded(
      source.streamWindow(streamRequest({ resumeAfter: { lastKey: cut.lastKey, rowsAtLastKey: 1, nextSeq: 4 } })),
    );
    const query = sent.slice(before).find((q) => q.startsWith('SELECT *')) as string;
    expect(query).toContain("(`ts`, `id`) >= ({cutpoint_key_0:DateTime64(6, 'UTC')}, {cutpoint_key_1:UInt64})");
    expect(query).not.toContain(String(cut.lastKey[1]));
    expect(query).not.toContain('2026');
  });

  it('refuses a malformed resume position before any query, a value that does not fit its column after DESCRIBE only', async () => {
    const key = ['2026-11-02T00:00:00.000000Z', '1'];
    const before = sent.length;
    const bad: Array<Partial<StreamWindowRequest>> = [
      { resumeAfter: { lastKey: ['2026-11-02T00:00:00.000000Z'], rowsAtLastKey: 1, nextSeq: 1 } },
      { resumeAfter: { lastKey: [...key, 'x'], rowsAtLastKey: 1, nextSeq: 1 } },
      { resumeAfter: { lastKey: key, rowsAtLastKey: 0, nextSeq: 1 } },
      { resumeAfter: { lastKey: key, rowsAtLastKey: 1.5, nextSeq: 1 } },
      { resumeAfter: { lastKey: key, rowsAtLastKey: 1, nextSeq: -1 } },
      { resumeAfter: { lastKey: key, rowsAtLastKey: 1, nextSeq: 2 ** 53 } },
      { resumeAfter: null as unknown as StreamWindowRequest['resumeAfter'] },
      { firstSeq: -1 },
      { firstSeq: 0.5 },
    ];
    for (const overrides of bad) {
      expect(() => source.streamWindow(streamRequest(overrides)), JSON.stringify(overrides)).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.source_invalid' }),
      );
    }
    expect(sent.slice(before)).toEqual([]);
    for (const lastKey of [
      ['yesterday', '1'],
      ['2026-11-02T00:00:00.000000Z', null],
      [1, '1'],
      ['2026-11-02T00:00:00.000000Z', { id: 1 }],
    ]) {
      const at = sent.length;
      await expect(
        encoded(source.streamWindow(streamRequest({ resumeAfter: { lastKey, rowsAtLastKey: 1, nextSeq: 1 } }))),
      ).rejects.toMatchObject({
        code: 'delivery.source_invalid',
        message: expect.stringContaining('resumeAfter.lastKey'),
      });
      expect(sent.slice(at).map((q) => q.split(' ')[0])).toEqual(['DESCRIBE']);
    }
  });

  it('refuses to resume when the rows tied on the last key are fewer than already chunked: the sealed window changed', async () => {
    const full = await encoded(source.streamWindow(streamRequest()));
    const cut = full[2] as (typeof full)[number];
    await expect(
      encoded(
        source.streamWindow(streamRequest({ resumeAfter: { lastKey: cut.lastKey, rowsAtLastKey: 50, nextSeq: 3 } })),
      ),
    ).rejects.toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'delivery.source_resume_mismatch',
    });
    // A key no row has any more (here: one that never existed, inside the window).
    await expect(
      encoded(
        source.streamWindow(
          streamRequest({
            resumeAfter: { lastKey: ['2026-11-02T00:00:00.000001Z', '999'], rowsAtLastKey: 1, nextSeq: 3 },
          }),
        ),
      ),
    ).rejects.toMatchObject({ code: 'delivery.source_resume_mismatch' });
    // After the last chunk: the rows at its key are all skipped, nothing is left.
    const last = full.at(-1) as (typeof full)[number];
    const tail = await checkTailEmpty(last.lastKey, last.seq + 1);
    expect(tail).toEqual([]);
  });
});

async function checkTailEmpty(lastKey: SourceChunk['lastKey'], nextSeq: number): Promise<unknown[]> {
  const text = sourceKeyText(lastKey);
  let rowsAtLastKey = 0;
  for await (const chunk of source.streamWindow(streamRequest())) {
    rowsAtLastKey += chunk.rows.filter((r) => sourceKeyText(sourceKeyOf(r, 'ts', ['id'])) === text).length;
  }
  return encoded(source.streamWindow(streamRequest({ resumeAfter: { lastKey, rowsAtLastKey, nextSeq } })));
}
