import { isUtf8 } from 'node:buffer';
import { sha256Hex } from '../digest.js';
import { ValidationError } from '../errors.js';
import { LoadCountMismatchError } from './target-errors.js';

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;

export interface ChunkJsonRequest {
  seq: number;
  jsonl: Uint8Array;
  sha256: string;
  rows: number;
}

/**
 * A chunk's canonical JSONL bytes (src/delivery/chunk-codec.ts) as the UTF-8 bytes of one
 * JSON array, for a target's server-side bulk load (PostgreSQL `json_populate_recordset`
 * takes them as a binary `json` parameter, with no text decode and re-encode in JS),
 * checked before any I/O and without parsing a row in JS: the bytes' SHA-256 must be the
 * request's (`delivery.chunk_digest_mismatch`), they must be UTF-8 ending in a newline
 * (`delivery.chunk_malformed`), and their line count must be `rows`
 * (Cutpoint.LoadCountMismatch). A canonical line never holds a raw newline (JSON escapes
 * it), so the array is the lines joined by `,` inside `[…]`; zero bytes are `[]`. The
 * adapter then counts what the server inserted against `rows` again, in the transaction.
 */
export function chunkJsonArrayBytes(request: ChunkJsonRequest | VerifiedChunk): Buffer {
  const { jsonl } = VERIFIED in request ? request : verifyChunkBytes(request);
  const size = jsonl.byteLength;
  if (size === 0) return Buffer.from('[]');
  // `[` + the lines, each newline but the last a comma, + `]` (the last newline's place).
  const array = Buffer.allocUnsafe(size + 1);
  array[0] = OPEN;
  array.set(jsonl, 1);
  for (let at = array.indexOf(NEWLINE, 1); at !== -1; at = array.indexOf(NEWLINE, at + 1)) array[at] = COMMA;
  array[size] = CLOSE;
  return array;
}

/** `chunkJsonArrayBytes` as text (SQL Server `OPENJSON` takes an nvarchar). */
export function chunkJsonArray(request: ChunkJsonRequest): string {
  return chunkJsonArrayBytes(request).toString('utf8');
}

const VERIFIED: unique symbol = Symbol('verified chunk bytes');

/** A chunk whose bytes `verifyChunkBytes` checked: only it makes one. */
export interface VerifiedChunk extends ChunkJsonRequest {
  readonly [VERIFIED]: true;
}

/**
 * The checks every bulk load makes of a chunk's bytes before any I/O, without parsing a
 * row: SHA-256 (`delivery.chunk_digest_mismatch`), UTF-8 ending in a newline
 * (`delivery.chunk_malformed`), one line per declared row (Cutpoint.LoadCountMismatch).
 * Bytes `sealChunkBytes` made in this process are not hashed again: their digest and row
 * count were taken from them there, and must be the request's.
 */
export function verifyChunkBytes(request: ChunkJsonRequest): VerifiedChunk {
  const { jsonl, sha256, rows, seq } = request;
  if (!(jsonl instanceof Uint8Array))
    throw new ValidationError('delivery.invalid_request', 'jsonl must be a Uint8Array');
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
    throw new ValidationError('delivery.invalid_request', 'sha256 must be 64 lower-case hex characters');
  if (!Number.isSafeInteger(rows) || rows < 0)
    throw new ValidationError('delivery.invalid_request', 'rows must be a non-negative integer');
  const sealed = SEALED.get(jsonl);
  if (sealed?.sha256 === sha256 && sealed.rows === rows) return { seq, jsonl, sha256, rows, [VERIFIED]: true };
  const actual = sha256Hex(jsonl);
  if (actual !== sha256)
    throw new ValidationError(
      'delivery.chunk_digest_mismatch',
      `chunk ${seq}: the bytes hash to ${actual}, the request says ${sha256}`,
    );
  checkLines(jsonl, rows, seq);
  return { seq, jsonl, sha256, rows, [VERIFIED]: true };
}

/**
 * A chunk's bytes as they are made (the encoder's output): their SHA-256 taken once, the
 * line count and UTF-8 checked as `verifyChunkBytes` checks them. A later
 * `verifyChunkBytes` of the same bytes with this digest and row count takes them as
 * verified without hashing them again.
 */
export function sealChunkBytes(seq: number, jsonl: Uint8Array, rows: number): VerifiedChunk {
  checkLines(jsonl, rows, seq);
  const sha256 = sha256Hex(jsonl);
  SEALED.set(jsonl, { sha256, rows });
  return { seq, jsonl, sha256, rows, [VERIFIED]: true };
}

/** Bytes sealed in this process, by identity (a copy is verified in full). */
const SEALED = new WeakMap<Uint8Array, { sha256: string; rows: number }>();

function checkLines(jsonl: Uint8Array, rows: number, seq: number): void {
  const size = jsonl.byteLength;
  if (size > 0 && jsonl[size - 1] !== NEWLINE)
    throw new ValidationError('delivery.chunk_malformed', `chunk ${seq}: JSONL must end with a newline`);
  let lines = 0;
  for (let at = jsonl.indexOf(NEWLINE); at !== -1; at = jsonl.indexOf(NEWLINE, at + 1)) lines++;
  if (lines !== rows) throw new LoadCountMismatchError(seq, rows, lines);
  if (!isUtf8(jsonl)) throw new ValidationError('delivery.chunk_malformed', `chunk ${seq}: JSONL is not valid UTF-8`);
}
