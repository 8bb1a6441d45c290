import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { chunkCopyText as copyText } from '../../src/domain/delivery/chunk-copy-text.js';
import { verifyChunkBytes, type ChunkJsonRequest } from '../../src/domain/delivery/chunk-json.js';
import { sha256Hex } from '../../src/domain/digest.js';

/**
 * The COPY text of a chunk against a reference that parses every row with JSON.parse and
 * spells each value as PostgreSQL's COPY text reads it (what json_populate_recordset would
 * make of it; the integration test test/integration/postgres-copy-load.test.ts loads both
 * ways into a real server and compares the tables).
 */
const escapeText = (text: string): string =>
  text.replace(
    /[\\\n\r\t\b\f]/g,
    (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' })[c] as string,
  );

function reference(jsonl: Uint8Array, columns: string[], json: boolean[], seq: number): string | undefined {
  const text = Buffer.from(jsonl).toString('utf8');
  let out = '';
  for (const line of text.split('\n').slice(0, -1)) {
    const row = JSON.parse(line) as Record<string, unknown>;
    const cells: string[] = [];
    for (const [i, c] of columns.entries()) {
      const v = row[c];
      if (v === null) cells.push('\\N');
      else if (json[i]) cells.push(JSON.stringify(v).replaceAll('\\', '\\\\'));
      else if (typeof v === 'object') return undefined;
      else if (typeof v === 'string') {
        if (v.includes('\0') || /\p{Surrogate}/u.test(v.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '')))
          return undefined;
        cells.push(escapeText(v));
      } else cells.push(String(v));
    }
    out += `${cells.join('\t')}\t${seq}\n`;
  }
  return out;
}

/** What the adapter does: verify the bytes, then rewrite them. */
const chunkCopyText = (r: ChunkJsonRequest & { columns: readonly string[]; jsonColumns: readonly boolean[] }) =>
  copyText(verifyChunkBytes(r), r);

const request = (rows: Record<string, unknown>[], columns: string[], json: boolean[], seq = 7) => {
  const jsonl = encodeChunk(rows, columns);
  return { seq, jsonl, sha256: sha256Hex(jsonl), rows: rows.length, columns, jsonColumns: json };
};

describe('chunk JSONL → PostgreSQL COPY text (one pass over the bytes)', () => {
  const columns = ['id', 'ts', 'body', 'doc'];
  const json = [false, false, false, true];

  it('spells every value as COPY text reads it, with the seq as the last column', () => {
    const rows = [
      {
        id: '18446744073709551615',
        ts: '2026-11-01T10:00:00.123Z',
        body: 'tab\there\nnew "q" \\ / é 😀',
        doc: { a: [1, 'x\\y'] },
      },
      { id: 2, ts: null, body: '', doc: 'just a string' },
      { id: -1.5e-7, ts: true, body: '\u0001\u001f\b\f\r', doc: null },
    ];
    const r = request(rows, columns, json, 300_007);
    const text = chunkCopyText(r)?.toString('utf8');
    expect(text).toBe(reference(r.jsonl, columns, json, 300_007));
    expect(text?.split('\n')[1]).toBe('2\t\\N\t\t"just a string"\t300007');
  });

  it('answers undefined where COPY text cannot keep the meaning: nested values outside json columns, NUL, lone surrogates', () => {
    for (const body of [{ nested: 1 }, [1, 2], 'nul \u0000 byte', 'lone \ud800 half'])
      expect(chunkCopyText(request([{ id: 1, ts: 't', body, doc: null }], columns, json))).toBeUndefined();
  });

  it('gives zero bytes for an empty chunk', () => {
    expect(chunkCopyText(request([], columns, json))?.byteLength).toBe(0);
  });

  it('refuses a line whose keys are not exactly the columns in order, and non-canonical spelling', () => {
    const bad = (line: string) => {
      const jsonl = Buffer.from(`${line}\n`);
      return () =>
        chunkCopyText({
          seq: 1,
          jsonl,
          sha256: sha256Hex(jsonl),
          rows: 1,
          columns: ['a', 'b'],
          jsonColumns: [false, false],
        });
    };
    for (const line of [
      '{"b":1,"a":2}',
      '{"a":1}',
      '{"a":1,"b":2,"c":3}',
      '{"a": 1,"b":2}',
      '{"a":1,"b":tru e}',
      '{"a":"x\ty","b":1}',
      '{"a":1,"b":}',
    ])
      expect(bad(line), line).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.chunk_malformed' }),
      );
    expect(bad('{"a":1,"b":2}')()?.toString()).toBe('1\t2\t1\n');
  });

  it('checks the bytes as every load does first (digest, line count)', () => {
    const r = request([{ id: 1, ts: 't', body: 'b', doc: null }], columns, json);
    expect(() => chunkCopyText({ ...r, sha256: 'a'.repeat(64) })).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_digest_mismatch' }),
    );
    expect(() => chunkCopyText({ ...r, rows: 2 })).toThrow(
      expect.objectContaining({ code: 'delivery.load_count_mismatch' }),
    );
  });

  it('matches the reference on arbitrary rows (fast-check)', () => {
    const scalar = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const value = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue() });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value, value), { maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        (cells, flags) => {
          const cols = ['x', 'y "z"', 'é'];
          const rows = cells.map(([a, b, c]) => ({ x: a, 'y "z"': b, é: c }));
          let r;
          try {
            r = request(rows, cols, flags);
          } catch {
            return; // a value the codec refuses (e.g. -0 spelled differently) is not a chunk
          }
          const got = chunkCopyText(r);
          expect(got?.toString('utf8')).toBe(reference(r.jsonl, cols, flags, 7));
        },
      ),
      { numRuns: 500 },
    );
  });
});
