import { sha256Hex } from '../../domain/digest.js';
import { ValidationError } from '../../domain/errors.js';

/**
 * A chunk's canonical JSONL bytes (src/delivery/chunk-codec.ts) as the text of one JSON
 * array, for a server-side bulk load (`json_populate_recordset`), without parsing a row:
 * a canonical line never holds a raw newline (JSON escapes it), so the line breaks are
 * exactly the row separators. Verifies first, before anything touches the target:
 * - the SHA-256 of the bytes is the declared one (`delivery.chunk_digest_mismatch`);
 * - the bytes are UTF-8 and end with a newline (or are empty) (`delivery.chunk_invalid`).
 */
export function chunkJsonArray(jsonl: Uint8Array, sha256: string): string {
  if (!(jsonl instanceof Uint8Array)) throw new ValidationError('delivery.chunk_invalid', 'chunk bytes must be a Uint8Array');
  const actual = sha256Hex(jsonl);
  if (actual !== sha256) {
    throw new ValidationError('delivery.chunk_digest_mismatch', `chunk bytes have SHA-256 ${actual}, the request declares ${String(sha256)}`);
  }
  if (jsonl.byteLength === 0) return '[]';
  if (jsonl[jsonl.byteLength - 1] !== 0x0a) throw new ValidationError('delivery.chunk_invalid', 'chunk bytes must end with a newline');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(jsonl);
  } catch {
    throw new ValidationError('delivery.chunk_invalid', 'chunk bytes are not valid UTF-8');
  }
  return `[${text.slice(0, -1).replaceAll('\n', ',')}]`;
}
