import { describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { encodedChunks } from '../../src/delivery/parts/encoded-chunks.js';
import { sha256Hex } from '../../src/domain/digest.js';
import type { SourceChunk } from '../../src/ports/source.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';

const columns = ['t', 'id'];

function chunk(seq: number, rows: TargetRow[] = [{ t: `2026-01-01T00:00:0${seq}Z`, id: String(seq) }]): SourceChunk {
  const key = [`2026-01-01T00:00:0${seq}Z`, String(seq)];
  return { seq, columns, rows, firstKey: key, lastKey: key };
}

/** A source of `n` chunks that logs every pull and whether it was closed. */
function source(n: number, log: string[], fail?: { at: number; rows: TargetRow[] }): AsyncIterable<SourceChunk> {
  // A row whose id is read by the encoder logs it: the log shows when a chunk is encoded.
  // (The encoder may read a value more than once; the log keeps the first read.)
  const logged = (seq: number): TargetRow[] => [
    Object.defineProperty({ t: `2026-01-01T00:00:0${seq}Z` }, 'id', {
      enumerable: true,
      get: () => {
        if (!log.includes(`encode ${seq}`)) log.push(`encode ${seq}`);
        return String(seq);
      },
    }) as TargetRow,
  ];
  return (async function* () {
    try {
      for (let seq = 0; seq < n; seq++) {
        log.push(`pull ${seq}`);
        await Promise.resolve();
        yield fail?.at === seq ? chunk(seq, fail.rows) : chunk(seq, logged(seq));
      }
      log.push('end');
    } finally {
      log.push('closed');
    }
  })();
}

describe('encodedChunks: the part loop reads and encodes one chunk ahead', () => {
  it('yields each chunk as its canonical bytes, SHA-256 and row count, in order', async () => {
    const out = [];
    for await (const c of encodedChunks(source(3, []))) out.push(c);
    expect(out.map((c) => c.seq)).toEqual([0, 1, 2]);
    for (const c of out) {
      const bytes = encodeChunk(chunk(c.seq).rows, columns);
      expect(Buffer.from(c.bytes).equals(Buffer.from(bytes))).toBe(true);
      expect(c.sha256).toBe(sha256Hex(bytes));
      expect(c.rows).toBe(1);
      expect(c.columns).toEqual(columns);
    }
  });

  it('has chunk n+1 read and encoded while chunk n is with the consumer, never n+2 (memory: two chunks)', async () => {
    const log: string[] = [];
    const seen: string[][] = [];
    for await (const c of encodedChunks(source(4, log))) {
      await new Promise((resolve) => setTimeout(resolve, 5)); // the consumer's write and load
      seen.push([`chunk ${c.seq}`, ...log.splice(0)]);
    }
    expect(seen).toEqual([
      ['chunk 0', 'pull 0', 'encode 0', 'pull 1', 'encode 1'],
      ['chunk 1', 'pull 2', 'encode 2'],
      ['chunk 2', 'pull 3', 'encode 3'],
      ['chunk 3', 'end', 'closed'],
    ]);
  });

  it('closes the source when the consumer leaves early', async () => {
    const log: string[] = [];
    for await (const c of encodedChunks(source(10, log))) if (c.seq === 1) break;
    expect(log.at(-1)).toBe('closed');
    expect(log.filter((l) => l.startsWith('pull'))).toEqual(['pull 0', 'pull 1', 'pull 2']);
  });

  it('a chunk that cannot be encoded fails when the consumer reaches it, not before, and closes the source', async () => {
    const log: string[] = [];
    const got: number[] = [];
    const bad = [{ t: '2026-01-01T00:00:01Z', id: Number.NaN }];
    await expect(
      (async () => {
        for await (const c of encodedChunks(source(5, log, { at: 1, rows: bad }))) got.push(c.seq);
      })(),
    ).rejects.toMatchObject({ name: 'Cutpoint.ValidationError', code: 'delivery.chunk_row_invalid' });
    expect(got).toEqual([0]);
    expect(log.at(-1)).toBe('closed');
  });
});
