import { sha256Hex } from '../domain/digest.js';
import { ValidationError } from '../domain/errors.js';
import type { SourceChunk } from '../ports/source.js';
import type { SourceKey } from '../domain/delivery/source-types.js';
import type { TargetRow } from '../domain/delivery/target-types.js';
import { ChunkDigest } from '../domain/delivery/target-rules.js';
import { assertCodecColumns, LineSpeller, spellLine } from '../domain/delivery/canonical-line.js';

/**
 * Extracted chunks as object generations: rows ⇄ JSONL bytes, pure and deterministic.
 *
 * Canonical form (one encoding per list of rows, so equal rows give equal bytes and equal
 * SHA-256):
 * - one line per row, each ending in `\n` (an empty chunk is zero bytes), UTF-8;
 * - each line is a JSON object whose keys are exactly the chunk's columns, in column
 *   order; values are JSON values (string, finite number, boolean, null, arrays, plain
 *   objects), nested object keys sorted, no whitespace — `JSON.stringify` spelling;
 * - anything that would not survive the round trip unchanged is refused rather than
 *   coerced: `undefined`, a missing or extra column, NaN/±Infinity, Date, BigInt, bytes.
 *   (The ClickHouse source never produces those: see src/ports/source.ts for how it
 *   represents times, 64-bit integers and decimals as strings.)
 *
 * `decodeChunk` accepts only canonical bytes — it re-encodes every line and compares — so
 * `encodeChunk(decodeChunk(b), columns)` is `b` for every accepted `b`, and the rows'
 * `chunkDigest` is the same before the PUT and after a verified re-read.
 *
 * Why not ClickHouse's own JSONEachRow lines as the bytes (no encode in JS)? Their
 * spelling is the server's: float formatting, escapes (`\/`, `\u…`), Map key order and
 * named-tuple keys are not this form, and may change with a server upgrade. A chunk's
 * bytes must be the same on every re-extraction (a retry after an upgrade PUTs the same
 * object key and must find identical bytes, else `objects.identity_conflict`), so they
 * are defined here, by the values, not by the engine. The lines are parsed anyway (the
 * order key of every row decides tie groups and resume), so what this costs is the
 * encode alone (~0.5 µs a row, done while the previous chunk loads: encoded-chunks.ts) —
 * and not even that for a line the source proves to be already canonical, as the common
 * row of strings is (src/domain/delivery/line-proof.ts).
 */

/** What an extracted chunk's generation records (in the journal and in object metadata). */
export interface ExtractedChunkReceipt {
  seq: number;
  rows: number;
  /** Size of the JSONL (its object stores it gzipped: src/objects/object-encoding.ts). */
  bytes: number;
  /** Hex SHA-256 of the JSONL bytes: the object generation's checksum. */
  sha256: string;
  /** `chunkDigest(columns, rows)`: the digest the target's `loadChunk` receipt must match. */
  digest: string;
  firstKey: SourceKey;
  lastKey: SourceKey;
}

const NEWLINE = 0x0a;

/**
 * The canonical JSONL of `rows`. `lines[i]`, where given, is row i's canonical line without
 * its newline, already known (SourceChunk.lines): it is taken as is instead of spelling the
 * row again — the bytes are the same either way.
 */
export function encodeChunk(
  rows: Iterable<TargetRow>,
  columns: readonly string[],
  lines?: ReadonlyArray<string | undefined>,
): Uint8Array {
  const speller = new LineSpeller(columns);
  // Each line's text first, then one buffer of their exact UTF-8 size written in place
  // (no concatenated string to flatten and encode again).
  const texts: string[] = [];
  let size = 0;
  for (const row of rows) {
    const index = texts.length;
    const text = lines?.[index] ?? speller.line(row, index);
    texts.push(text);
    size += Buffer.byteLength(text, 'utf8') + 1;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const text of texts) {
    at += bytes.write(text, at, 'utf8');
    bytes[at++] = NEWLINE;
  }
  return bytes;
}

/**
 * Rows of a canonical JSONL chunk. With `columns`, every row must carry exactly those
 * columns in that order (the chunk's receipt or journal names them); without, the first
 * row's keys are taken and every other row must match them.
 */
export function decodeChunk(bytes: Uint8Array, columns?: readonly string[]): TargetRow[] {
  if (!(bytes instanceof Uint8Array)) throw malformed('chunk bytes must be a Uint8Array');
  if (bytes.byteLength === 0) return [];
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw malformed('chunk is not valid UTF-8');
  }
  if (!text.endsWith('\n')) throw malformed('chunk must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  let names = columns === undefined ? undefined : assertCodecColumns(columns);
  let expected = columns;
  const rows: TargetRow[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw malformed(`line ${i + 1} is not JSON`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw malformed(`line ${i + 1} is not a JSON object`);
    const row = value as TargetRow;
    if (expected === undefined || names === undefined) {
      expected = Object.keys(row);
      names = assertCodecColumns(expected);
    }
    let canonical: string;
    try {
      canonical = spellLine(row, expected, names, i);
    } catch (error) {
      throw malformed(`line ${i + 1}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (canonical !== line) throw malformed(`line ${i + 1} is not in canonical form`);
    rows.push(row);
  }
  return rows;
}

/**
 * The receipt of an encoded source chunk. `bytes` must be `encodeChunk(chunk.rows,
 * chunk.columns)`; the rows are digested with the target port's `ChunkDigest`, so the
 * receipt's `digest` is what the stage's load receipt for `seq` must show.
 */
export function chunkReceiptOf(chunk: SourceChunk, bytes: Uint8Array): ExtractedChunkReceipt {
  if (!Number.isInteger(chunk.seq) || chunk.seq < 0)
    throw new ValidationError('delivery.chunk_seq_invalid', 'chunk seq must be a non-negative integer');
  if (chunk.rows.length === 0)
    throw new ValidationError('delivery.chunk_invalid', 'a chunk receipt needs at least one row');
  const digest = new ChunkDigest(chunk.columns);
  for (const row of chunk.rows) digest.add(row);
  return {
    seq: chunk.seq,
    rows: digest.rows,
    bytes: bytes.byteLength,
    sha256: sha256Hex(bytes),
    digest: digest.digest(),
    firstKey: chunk.firstKey,
    lastKey: chunk.lastKey,
  };
}

/** Encodes a source chunk and returns its bytes with their receipt. */
export function encodeSourceChunk(chunk: SourceChunk): { bytes: Uint8Array; receipt: ExtractedChunkReceipt } {
  const bytes = encodeChunk(chunk.rows, chunk.columns, chunk.lines);
  return { bytes, receipt: chunkReceiptOf(chunk, bytes) };
}

/** One row's canonical line, including its `\n`. */
export function encodeRow(row: TargetRow, columns: readonly string[]): string {
  return `${new LineSpeller(columns).line(row, 0)}\n`;
}

function malformed(message: string): ValidationError {
  return new ValidationError('delivery.chunk_malformed', message);
}
