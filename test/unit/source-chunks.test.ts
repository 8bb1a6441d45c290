import { describe, expect, it } from 'vitest';
import { chunksOf, type ChunkingPlan } from '../../src/adapters/clickhouse/source-chunks.js';
import type { SourceChunk } from '../../src/ports/source.js';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';

// chunksOf is pure over the engine's JSONEachRow lines: no ClickHouse needed here.
const columns = ['t', 'k', 'v'];
const plan = (over: Partial<ChunkingPlan> = {}): ChunkingPlan => ({
  columns,
  timeColumn: 't',
  keyColumns: ['k'],
  chunkRows: 2,
  firstSeq: 0,
  ...over,
});

async function chunks(lines: string[], p: ChunkingPlan): Promise<SourceChunk[]> {
  async function* batches(): AsyncGenerator<string[]> {
    yield lines.slice(0, 3);
    yield lines.slice(3);
  }
  const out: SourceChunk[] = [];
  for await (const c of chunksOf(batches(), p)) out.push(c);
  return out;
}

const line = (t: string, k: unknown, v: unknown): string => JSON.stringify({ t, k, v });

describe('chunksOf: cutting the ordered lines into chunks', () => {
  it('keeps the parsed rows as the engine wrote them and rebuilds another key order in column order', async () => {
    const out = await chunks([line('a', 1, 'x'), '{"v":"y","k":2,"t":"a"}', line('b', 3, null)], plan());
    expect(out.map((c) => c.rows)).toEqual([
      [
        { t: 'a', k: 1, v: 'x' },
        { t: 'a', k: 2, v: 'y' },
      ],
      [{ t: 'b', k: 3, v: null }],
    ]);
    expect(Object.keys(out[0]?.rows[1] ?? {})).toEqual(columns);
    expect(out.map((c) => [c.seq, c.firstKey, c.lastKey])).toEqual([
      [0, ['a', 1], ['a', 2]],
      [1, ['b', 3], ['b', 3]],
    ]);
  });

  it('orders a tie group by its canonical values, whatever the engine order; ties are whole-key equal as canonical JSON', async () => {
    // Same (t, k) — k an object, spelled with its keys in two orders — is one tie group,
    // emitted sorted by the values; k = 1 and k = "1" are different keys.
    const lines = [
      line('a', { y: 1, x: 2 }, 'b'),
      line('a', { x: 2, y: 1 }, 'a'),
      line('a', 1, 'z'),
      line('a', '1', 'y'),
      line('b', -0, 'q'),
      line('b', 0, 'p'),
    ];
    const rows = (await chunks(lines, plan({ chunkRows: 10 }))).flatMap((c) => c.rows.map((r) => r.v));
    expect(rows).toEqual(['a', 'b', 'z', 'y', 'p', 'q']);
  });

  it('refuses a tie group larger than the limit', async () => {
    const lines = Array.from({ length: 10_002 }, (_, i) => line('a', 1, i));
    await expect(chunks(lines, plan())).rejects.toMatchObject({ code: 'delivery.source_order_ambiguous' });
  });

  it('resumes by dropping the rows already chunked of the first tie group, and refuses another first key', async () => {
    const lines = [line('a', 1, 'p'), line('a', 1, 'q'), line('a', 1, 'r'), line('b', 2, 's')];
    const resumed = await chunks(
      lines,
      plan({ firstSeq: 7, resume: { lastKey: ['a', 1], rowsAtLastKey: 2, nextSeq: 7 } }),
    );
    expect(resumed.map((c) => [c.seq, c.rows.map((r) => r.v)])).toEqual([[7, ['r', 's']]]);
    await expect(
      chunks(lines, plan({ resume: { lastKey: ['a', 2], rowsAtLastKey: 1, nextSeq: 0 } })),
    ).rejects.toMatchObject({ code: 'delivery.source_resume_mismatch' });
    await expect(
      chunks(lines, plan({ resume: { lastKey: ['a', 1], rowsAtLastKey: 4, nextSeq: 0 } })),
    ).rejects.toMatchObject({ code: 'delivery.source_resume_mismatch' });
  });

  it('cuts a chunk at chunkText characters of canonical JSONL too, counted on the canonical lines whatever the engine spelled, the same on a resume', async () => {
    // Ten rows of wide values; one spelled by the engine with an escape and spaces, one holding a number.
    const wide = (i: number) => 'x'.repeat(40 + i);
    const lines = Array.from({ length: 10 }, (_, i) => line(`t${i}`, i, wide(i)));
    lines[3] = `{ "t": "t3", "k": 3, "v": "\\u0078${wide(3).slice(1)}" }`;
    const limit = 150;
    const whole = await chunks(lines, plan({ chunkRows: 100, chunkText: limit }));
    const bytes = whole.map((c) => Buffer.from(encodeChunk(c.rows, c.columns, c.lines)).toString('utf8'));
    // Each chunk but the last reaches the limit with its last row, and not before it.
    for (const [i, text] of bytes.entries()) {
      const withoutLast = text.slice(0, text.slice(0, -1).lastIndexOf('\n') + 1);
      if (i < bytes.length - 1) expect(text.length).toBeGreaterThanOrEqual(limit);
      expect(withoutLast.length).toBeLessThan(limit);
    }
    expect(bytes.join('')).toBe(
      Buffer.from(
        encodeChunk(
          whole.flatMap((c) => c.rows),
          columns,
        ),
      ).toString('utf8'),
    );
    // Resumed after the first chunk (the engine reads from its last key on), the rest is cut exactly as before.
    const first = whole[0]!;
    const resumed = await chunks(
      lines.slice(first.rows.length - 1),
      plan({
        chunkRows: 100,
        chunkText: limit,
        firstSeq: 1,
        resume: { lastKey: first.lastKey, rowsAtLastKey: 1, nextSeq: 1 },
      }),
    );
    expect(resumed.map((c) => [c.seq, c.rows])).toEqual(whole.slice(1).map((c) => [c.seq, c.rows]));
  });

  it('refuses a line that is not a row of the described columns', async () => {
    await expect(chunks([line('a', 1, 'x'), '{"t":"a","k":1}'], plan())).rejects.toMatchObject({
      code: 'delivery.source_unavailable',
    });
    await expect(chunks(['{"t":"a","k":1,"w":2}'], plan())).rejects.toMatchObject({
      code: 'delivery.source_unavailable',
    });
    await expect(chunks(['Code: 241. DB::Exception: Memory limit'], plan())).rejects.toThrow(/broke off: Code: 241/);
  });
});
