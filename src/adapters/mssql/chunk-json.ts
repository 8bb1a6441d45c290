import { sha256Hex } from '../../domain/digest.js';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import type { LoadChunkRequest } from '../../ports/target.js';
import type { ChunkJson } from './load-statements.js';

const NEWLINE = 0x0a;

/**
 * The chunk's JSONL bytes as the JSON array the load batch hands to OPENJSON, checked
 * before any I/O and without parsing a row in JS: the bytes' SHA-256 must be the
 * request's (`delivery.chunk_digest_mismatch`), they must be UTF-8 ending in a newline
 * (`delivery.chunk_malformed`), and their line count must be `rows`
 * (`delivery.load_count_mismatch`). Canonical JSONL never holds a raw newline inside a
 * line (JSON escapes it), so the array is the lines joined by `,` inside `[…]`; zero bytes
 * are `[]`. The server then counts what it inserted against `rows` again.
 */
export function chunkJsonOf(request: Pick<LoadChunkRequest, 'seq' | 'columns' | 'jsonl' | 'sha256' | 'rows'>): ChunkJson {
  const { jsonl, sha256, rows } = request;
  if (!(jsonl instanceof Uint8Array)) throw new ValidationError('delivery.invalid_request', 'jsonl must be a Uint8Array');
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) {
    throw new ValidationError('delivery.invalid_request', 'sha256 must be 64 lower-case hex characters');
  }
  if (!Number.isSafeInteger(rows) || rows < 0) throw new ValidationError('delivery.invalid_request', 'rows must be a non-negative integer');
  const actual = sha256Hex(jsonl);
  if (actual !== sha256) {
    throw new ValidationError('delivery.chunk_digest_mismatch', `chunk ${request.seq}: the bytes hash to ${actual}, the request says ${sha256}`);
  }
  if (jsonl.byteLength > 0 && jsonl[jsonl.byteLength - 1] !== NEWLINE) {
    throw new ValidationError('delivery.chunk_malformed', `chunk ${request.seq}: JSONL must end with a newline`);
  }
  let lines = 0;
  for (let at = jsonl.indexOf(NEWLINE); at !== -1; at = jsonl.indexOf(NEWLINE, at + 1)) lines++;
  if (lines !== rows) {
    throw new ValidationError('delivery.load_count_mismatch', `chunk ${request.seq}: ${lines} lines, the request says ${rows} rows`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(jsonl);
  } catch {
    throw new ValidationError('delivery.chunk_malformed', `chunk ${request.seq}: JSONL is not valid UTF-8`);
  }
  const json = text.length === 0 ? '[]' : `[${text.slice(0, -1).replaceAll('\n', ',')}]`;
  return { seq: request.seq, columns: request.columns, json, rows };
}

/**
 * A chunk load inserted another number of rows than the chunk has lines: the transaction
 * was rolled back, nothing of the chunk is loaded. (Same name and code as the PostgreSQL
 * adapter's; one shared class belongs in src/domain/delivery/target-errors.ts.)
 */
export class LoadCountMismatchError extends CutpointError {
  constructor(seq: number, declared: number, inserted: number) {
    super('Cutpoint.LoadCountMismatch', 'delivery.load_count_mismatch', `chunk ${seq} declares ${declared} rows, the target inserted ${inserted}: rolled back`);
  }
}
