import { describe, expect, it } from 'vitest';
import { decodeBatch, encodeBatch } from '../../src/domain/record-batch.js';
import { MAX_BATCH_BYTES, MAX_RECORD_BYTES } from '../../src/domain/stream.js';

const text = (s: string) => new TextEncoder().encode(s);
const MAGIC = text('CPWAL1\n');

/** Hand-built framing, independent of encodeBatch: magic, then u32 big-endian length + bytes. */
function frame(...records: Uint8Array[]): Uint8Array {
  const parts: number[] = [...MAGIC];
  for (const r of records) {
    parts.push(
      (r.byteLength >>> 24) & 0xff,
      (r.byteLength >>> 16) & 0xff,
      (r.byteLength >>> 8) & 0xff,
      r.byteLength & 0xff,
      ...r,
    );
  }
  return new Uint8Array(parts);
}

const malformed = (why: string) =>
  expect.objectContaining({
    name: 'Cutpoint.ValidationError',
    code: 'stream.malformed_batch',
    message: expect.stringContaining(why),
  });

describe('WAL framing: encode', () => {
  it('writes the magic line, then each record as a 4-byte big-endian length and its bytes', () => {
    const records = [text('a'), new Uint8Array(0), new Uint8Array([0, 255, 10, 13])];
    const bytes = encodeBatch(records);
    expect([...bytes]).toEqual([...frame(...records)]);
    expect(bytes.byteLength).toBe(MAGIC.byteLength + 3 * 4 + 1 + 0 + 4);
  });

  it('refuses an empty batch, a record over the record limit and a batch over the batch limit', () => {
    expect(() => encodeBatch([])).toThrow(expect.objectContaining({ code: 'stream.empty_batch' }));
    expect(() => encodeBatch([new Uint8Array(MAX_RECORD_BYTES + 1)])).toThrow(
      expect.objectContaining({ code: 'stream.record_too_large' }),
    );
    const many = Array.from(
      { length: Math.ceil(MAX_BATCH_BYTES / MAX_RECORD_BYTES) },
      () => new Uint8Array(MAX_RECORD_BYTES),
    );
    expect(() => encodeBatch(many)).toThrow(expect.objectContaining({ code: 'stream.batch_too_large' }));
  });

  it('accepts a record of exactly the record limit', () => {
    const big = new Uint8Array(MAX_RECORD_BYTES).fill(7);
    const [decoded] = decodeBatch(encodeBatch([big]));
    expect(decoded?.byteLength).toBe(MAX_RECORD_BYTES);
    expect(decoded?.every((b) => b === 7)).toBe(true);
  });
});

describe('WAL framing: decode', () => {
  it('round-trips records exactly, including empty and binary records, in order', () => {
    const records = [text('first'), new Uint8Array(0), new Uint8Array(256).map((_, i) => i), text('last\n')];
    const decoded = decodeBatch(encodeBatch(records));
    expect(decoded.map((r) => [...r])).toEqual(records.map((r) => [...r]));
  });

  it('decodes a batch that sits inside a larger buffer (a non-zero byteOffset view)', () => {
    const inner = encodeBatch([text('x'), text('yz')]);
    const outer = new Uint8Array(inner.byteLength + 10);
    outer.set(inner, 5);
    const decoded = decodeBatch(outer.subarray(5, 5 + inner.byteLength));
    expect(decoded.map((r) => new TextDecoder().decode(r))).toEqual(['x', 'yz']);
  });

  it('a magic line alone is malformed: a WAL batch always holds at least one record', () => {
    expect(() => decodeBatch(MAGIC)).toThrow(expect.objectContaining({ code: 'stream.malformed_batch' }));
  });

  it('refuses a wrong or short magic line', () => {
    expect(() => decodeBatch(new Uint8Array(0))).toThrow(malformed('bad magic'));
    expect(() => decodeBatch(MAGIC.subarray(0, 3))).toThrow(malformed('bad magic'));
    const wrong = frame(text('a'));
    wrong[0] = 'X'.charCodeAt(0);
    expect(() => decodeBatch(wrong)).toThrow(malformed('bad magic'));
  });

  it('refuses a truncated length prefix', () => {
    const bytes = frame(text('abc'));
    expect(() => decodeBatch(bytes.subarray(0, MAGIC.byteLength + 2))).toThrow(malformed('truncated length'));
    // A whole record followed by a partial length.
    const twice = frame(text('abc'), text('d'));
    expect(() => decodeBatch(twice.subarray(0, MAGIC.byteLength + 4 + 3 + 1))).toThrow(malformed('truncated length'));
  });

  it('refuses a record shorter than its length says, never returning a short read', () => {
    const bytes = frame(text('abcdef'));
    expect(() => decodeBatch(bytes.subarray(0, bytes.byteLength - 1))).toThrow(malformed('truncated record'));
    // A length far past the end (a corrupted prefix).
    const corrupt = frame(text('abc'));
    corrupt[MAGIC.byteLength] = 0x7f;
    expect(() => decodeBatch(corrupt)).toThrow(malformed('truncated record'));
  });
});
