import { describe, expect, it } from 'vitest';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import {
  chunkJsonArray,
  chunkJsonArrayBytes,
  sealChunkBytes,
  verifyChunkBytes,
} from '../../src/domain/delivery/chunk-json.js';
import { sha256Hex } from '../../src/domain/digest.js';

describe('chunk bytes → one JSON array for a server-side bulk load (json_populate_recordset, OPENJSON)', () => {
  const columns = ['id', 'ts', 'body'];
  const rows = [
    { id: '18446744073709551615', ts: '2026-11-01T10:00:00.123456Z', body: 'line\nbreak, "quoted", \u00e9' },
    { id: '2', ts: '2026-11-01T10:00:01Z', body: { nested: [1, true, null] } },
  ];
  const jsonl = encodeChunk(rows, columns);
  const request = { seq: 300_007, columns, jsonl, sha256: sha256Hex(jsonl), rows: 2 };

  it('joins the lines into one JSON array without decoding rows, and the array holds exactly the rows', () => {
    const json = chunkJsonArray(request);
    expect(JSON.parse(json)).toEqual(rows);
    expect(json.startsWith('[{"id":"18446744073709551615"')).toBe(true);
    const empty = new Uint8Array();
    expect(chunkJsonArray({ ...request, jsonl: empty, sha256: sha256Hex(empty), rows: 0 })).toBe('[]');
  });

  it('gives the same array as UTF-8 bytes (no decode), leaving the chunk bytes untouched', () => {
    const before = Buffer.from(jsonl);
    const bytes = chunkJsonArrayBytes(request);
    expect(bytes.toString('utf8')).toBe(chunkJsonArray(request));
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(rows);
    expect(Buffer.from(jsonl).equals(before)).toBe(true);
    const one = encodeChunk([rows[0] as (typeof rows)[number]], columns);
    expect(chunkJsonArrayBytes({ ...request, jsonl: one, sha256: sha256Hex(one), rows: 1 }).toString('utf8')).toBe(
      `[${Buffer.from(one).toString('utf8').slice(0, -1)}]`,
    );
    const empty = new Uint8Array();
    expect(chunkJsonArrayBytes({ ...request, jsonl: empty, sha256: sha256Hex(empty), rows: 0 }).toString('utf8')).toBe(
      '[]',
    );
    // A lone surrogate's bytes (ED A0 80) are not UTF-8.
    const surrogate = Uint8Array.from([0x7b, 0xed, 0xa0, 0x80, 0x7d, 0x0a]);
    expect(() => chunkJsonArrayBytes({ ...request, jsonl: surrogate, sha256: sha256Hex(surrogate), rows: 1 })).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_malformed' }),
    );
  });

  it('refuses before any I/O: another sha256, another line count, no final newline, bad UTF-8, bad arguments', () => {
    expect(() => chunkJsonArray({ ...request, sha256: 'a'.repeat(64) })).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.chunk_digest_mismatch' }),
    );
    expect(() => chunkJsonArray({ ...request, rows: 3 })).toThrow(
      expect.objectContaining({ name: 'Cutpoint.LoadCountMismatch', code: 'delivery.load_count_mismatch' }),
    );
    expect(() => chunkJsonArray({ ...request, rows: 0 })).toThrow(
      expect.objectContaining({ name: 'Cutpoint.LoadCountMismatch', code: 'delivery.load_count_mismatch' }),
    );
    const unterminated = jsonl.subarray(0, jsonl.byteLength - 1);
    expect(() => chunkJsonArray({ ...request, jsonl: unterminated, sha256: sha256Hex(unterminated) })).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_malformed' }),
    );
    const latin1 = Uint8Array.from([0x7b, 0xe9, 0x7d, 0x0a]);
    expect(() => chunkJsonArray({ ...request, jsonl: latin1, sha256: sha256Hex(latin1), rows: 1 })).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_malformed' }),
    );
    expect(() => chunkJsonArray({ ...request, sha256: 'ABC' })).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_request' }),
    );
    expect(() => chunkJsonArray({ ...request, rows: -1 })).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_request' }),
    );
  });

  it('takes bytes sealed as they were made without hashing again, but only with their own digest and rows', () => {
    const fresh = encodeChunk(rows, columns);
    const sealed = sealChunkBytes(7, fresh, 2);
    expect(sealed.sha256).toBe(sha256Hex(fresh));
    expect(verifyChunkBytes({ seq: 7, jsonl: fresh, sha256: sealed.sha256, rows: 2 }).sha256).toBe(sealed.sha256);
    // Another digest or row count for the same bytes is checked in full, and refused.
    expect(() => verifyChunkBytes({ seq: 7, jsonl: fresh, sha256: 'f'.repeat(64), rows: 2 })).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_digest_mismatch' }),
    );
    expect(() => verifyChunkBytes({ seq: 7, jsonl: fresh, sha256: sealed.sha256, rows: 3 })).toThrow(
      expect.objectContaining({ code: 'delivery.load_count_mismatch' }),
    );
    // Sealing checks what a verification checks: the line count and UTF-8.
    expect(() => sealChunkBytes(7, fresh, 1)).toThrow(
      expect.objectContaining({ code: 'delivery.load_count_mismatch' }),
    );
    expect(() => sealChunkBytes(7, Uint8Array.from([0x7b, 0xe9, 0x7d, 0x0a]), 1)).toThrow(
      expect.objectContaining({ code: 'delivery.chunk_malformed' }),
    );
  });
});
