import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import {
  chunkReceiptOf,
  decodeChunk,
  encodeChunk,
  encodeRow,
  encodeSourceChunk,
} from '../../src/delivery/chunk-codec.js';
import type { SourceChunk } from '../../src/ports/source.js';
import { sourceKeyOf } from '../../src/domain/delivery/source-rules.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';
import { chunkDigest } from '../../src/domain/delivery/target-rules.js';

const columns = ['event_time', 'event_id', 'body', 'amount', 'tags', 'attrs'];

const rows: TargetRow[] = [
  {
    event_time: '2026-11-01T00:00:00.000Z',
    event_id: '18446744073709551615',
    body: 'plain',
    amount: '12.5',
    tags: ['a', 'b'],
    attrs: { z: '1', a: '2' },
  },
  {
    event_time: '2026-11-01T00:00:00.001Z',
    event_id: '2',
    body: `'); DROP TABLE events; -- "quoted" \\ back\nslash\u2028 {cutpoint_window_start:DateTime64(3)} ✓ 😀`,
    amount: null,
    tags: [],
    // As JSON.parse builds it: `__proto__` is an own key (a Map key in the data).
    attrs: JSON.parse('{"__proto__":"a map key","constructor":"x"}') as unknown,
  },
  { event_time: '2026-11-01T23:59:59.999Z', event_id: '3', body: '', amount: 0.1, tags: [1, -0, 1e21], attrs: {} },
];

const tricky = rows[1] as TargetRow;

function chunkOf(seq: number, chunkRows: TargetRow[]): SourceChunk {
  return {
    seq,
    columns,
    rows: chunkRows,
    firstKey: sourceKeyOf(chunkRows[0] as TargetRow, 'event_time', ['event_id']),
    lastKey: sourceKeyOf(chunkRows[chunkRows.length - 1] as TargetRow, 'event_time', ['event_id']),
  };
}

describe('chunk codec: canonical JSONL', () => {
  it('encodes one line per row, keys in column order, nested keys sorted, no whitespace', () => {
    const text = Buffer.from(encodeChunk(rows, columns)).toString('utf8');
    const lines = text.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe('');
    expect(lines[0]).toBe(
      '{"event_time":"2026-11-01T00:00:00.000Z","event_id":"18446744073709551615","body":"plain","amount":"12.5","tags":["a","b"],"attrs":{"a":"2","z":"1"}}',
    );
    expect(lines[2]).toBe(
      '{"event_time":"2026-11-01T23:59:59.999Z","event_id":"3","body":"","amount":0.1,"tags":[1,0,1e+21],"attrs":{}}',
    );
    // The newline inside a value is escaped: a row is always exactly one line.
    expect(lines[1]).toContain('\\n');
  });

  it('is independent of the key order of the input objects', () => {
    const shuffled = rows.map((r) => Object.fromEntries(Object.entries(r).reverse()));
    expect(Buffer.from(encodeChunk(shuffled, columns)).equals(Buffer.from(encodeChunk(rows, columns)))).toBe(true);
  });

  it('an empty chunk is zero bytes and decodes to no rows', () => {
    expect(encodeChunk([], columns).byteLength).toBe(0);
    expect(decodeChunk(new Uint8Array(0), columns)).toEqual([]);
  });

  it('round-trips rows exactly, including injection strings and a __proto__ map key', () => {
    const bytes = encodeChunk(rows, columns);
    const decoded = decodeChunk(bytes, columns);
    expect(decoded).toHaveLength(rows.length);
    expect(decoded[1]?.body).toBe(tricky.body);
    expect(Object.keys(decoded[1]?.attrs as object)).toEqual(['__proto__', 'constructor']);
    expect(Object.keys(decoded[0] as object)).toEqual(columns);
    // Same bytes again, and the same digest the target computes.
    expect(Buffer.from(encodeChunk(decoded, columns)).equals(Buffer.from(bytes))).toBe(true);
    expect(chunkDigest(columns, decoded)).toBe(chunkDigest(columns, rows));
    // Without columns, the first row's keys are the columns.
    expect(decodeChunk(bytes)).toEqual(decoded);
  });

  it('spells flat rows (scalar values only) exactly as the value-by-value encoder does', () => {
    const flat = ['a', 'b', 'c'];
    const values: unknown[] = [
      '',
      'é ✓ 😀',
      '\u2028\u2029',
      '\ud800 lone',
      'tab\tquote"back\\slash\u0001',
      true,
      false,
      null,
      0,
      -0,
      1e21,
      1e-7,
      0.1,
      -12.5,
      2 ** 53,
    ];
    const flatRows: TargetRow[] = values.map((v, i) => ({ a: v, b: String(i), c: i % 2 === 0 ? null : v }));
    // encodeRow always takes the checked path; encodeChunk takes the fast one for these rows.
    const expected = flatRows.map((r) => encodeRow(r, flat)).join('');
    expect(Buffer.from(encodeChunk(flatRows, flat)).toString('utf8')).toBe(expected);
    // Rows the fast path does not take (another key order, a null prototype, a nested
    // value) encode the same canonical line as their flat, ordered twin.
    const twin = { a: 'x', b: 'y', c: 1 };
    const others: TargetRow[] = [{ c: 1, b: 'y', a: 'x' }, Object.assign(Object.create(null) as TargetRow, twin)];
    expect(Buffer.from(encodeChunk(others, flat)).toString('utf8')).toBe(encodeRow(twin, flat).repeat(2));
    expect(Buffer.from(encodeChunk([{ a: { z: 1, y: [2] }, b: 'y', c: 1 }], flat)).toString('utf8')).toBe(
      '{"a":{"y":[2],"z":1},"b":"y","c":1}\n',
    );
  });

  it('refuses values that would not survive the round trip', () => {
    const base = rows[0] as TargetRow;
    for (const bad of [
      undefined,
      Number.NaN,
      Infinity,
      new Date(0),
      1n,
      new Uint8Array([1]),
      [Number.NaN],
      { x: new Map() },
      () => 1,
    ]) {
      expect(() => encodeChunk([{ ...base, body: bad }], columns)).toThrow(
        expect.objectContaining({ code: 'delivery.chunk_row_invalid' }),
      );
    }
  });

  it('refuses a row with a missing or an extra column', () => {
    const { body: _body, ...missing } = rows[0] as TargetRow;
    expect(() => encodeChunk([missing], columns)).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_row_invalid' }),
    );
    expect(() => encodeChunk([{ ...missing, other: 1 }], columns)).toThrow(/lacks column "body"/);
    expect(() => encodeChunk([{ ...(rows[0] as TargetRow), other: 1 }], columns)).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_row_invalid' }),
    );
  });

  it('refuses invalid column lists', () => {
    expect(() => encodeChunk(rows, [])).toThrow(expect.objectContaining({ code: 'delivery.chunk_invalid' }));
    expect(() => encodeChunk(rows, ['a', 'a'])).toThrow(expect.objectContaining({ code: 'delivery.chunk_invalid' }));
  });

  it('accepts only canonical bytes', () => {
    const good = Buffer.from(encodeChunk(rows, columns)).toString('utf8');
    const first = good.split('\n')[0] as string;
    const cases: Array<[string, string | Uint8Array]> = [
      ['no trailing newline', good.slice(0, -1)],
      ['blank line', `${good}\n`],
      ['whitespace', `${first.replace(':', ': ')}\n`],
      [
        'reordered keys',
        `${JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(first) as object).reverse()))}\n`,
      ],
      ['unsorted nested keys', `${first.replace('{"a":"2","z":"1"}', '{"z":"1","a":"2"}')}\n`],
      ['not JSON', 'nope\n'],
      ['not an object', '[1]\n'],
      ['escaped differently', `${first.replace('plain', '\\u0070lain')}\n`],
      ['CRLF', `${first}\r\n`],
      ['a missing column', '{"event_time":"x"}\n'],
      ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d, 0x0a])],
    ];
    for (const [what, input] of cases) {
      const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
      expect(() => decodeChunk(bytes, columns), what).toThrow(
        expect.objectContaining({ code: 'delivery.chunk_malformed' }),
      );
    }
    // A different column list than the one the bytes were written with.
    expect(() => decodeChunk(Buffer.from(good), [...columns].reverse())).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_malformed' }),
    );
  });

  it('encodeRow is one canonical line', () => {
    expect(encodeRow({ b: 2, a: 1 }, ['a', 'b'])).toBe('{"a":1,"b":2}\n');
  });
});

describe('chunk receipts', () => {
  it('records seq, rows, bytes, sha256, the target digest and the key range', () => {
    const chunk = chunkOf(7, rows);
    const { bytes, receipt } = encodeSourceChunk(chunk);
    expect(receipt).toEqual({
      seq: 7,
      rows: 3,
      bytes: bytes.byteLength,
      sha256: sha256Hex(bytes),
      digest: chunkDigest(columns, rows),
      firstKey: ['2026-11-01T00:00:00.000Z', '18446744073709551615'],
      lastKey: ['2026-11-01T23:59:59.999Z', '3'],
    });
    expect(chunkReceiptOf(chunk, bytes)).toEqual(receipt);
    // The digest a verified re-read computes is the receipt's.
    expect(chunkDigest(columns, decodeChunk(bytes, columns))).toBe(receipt.digest);
  });

  it('is deterministic and sensitive to every row', () => {
    const a = encodeSourceChunk(chunkOf(0, rows)).receipt;
    const b = encodeSourceChunk(
      chunkOf(
        0,
        rows.map((r) => ({ ...r })),
      ),
    ).receipt;
    expect(b).toEqual(a);
    const changed = rows.map((r, i) => (i === 2 ? { ...r, body: ' ' } : r));
    const c = encodeSourceChunk(chunkOf(0, changed)).receipt;
    expect(c.sha256).not.toBe(a.sha256);
    expect(c.digest).not.toBe(a.digest);
  });

  it('refuses an empty chunk or a bad seq', () => {
    expect(() => chunkReceiptOf({ ...chunkOf(0, rows), rows: [] }, new Uint8Array(0))).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_invalid' }),
    );
    expect(() => chunkReceiptOf({ ...chunkOf(0, rows), seq: -1 }, new Uint8Array(0))).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_seq_invalid' }),
    );
  });
});
