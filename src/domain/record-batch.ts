import { ValidationError } from './errors.js';
import { MAX_BATCH_BYTES, MAX_RECORD_BYTES } from './stream.js';

/**
 * WAL framing of a record batch: a magic line, then each record as a 4-byte big-endian
 * length and its bytes. One batch is one WAL object: group commit means one PUT and one
 * head CAS per batch, whatever the record count.
 */
const MAGIC = new TextEncoder().encode('CPWAL1\n');

export function encodeBatch(records: readonly Uint8Array[]): Uint8Array {
  if (records.length === 0) throw new ValidationError('stream.empty_batch', 'a batch needs at least one record');
  let size = MAGIC.byteLength;
  for (const r of records) {
    if (r.byteLength > MAX_RECORD_BYTES)
      throw new ValidationError('stream.record_too_large', `a record may be at most ${MAX_RECORD_BYTES} bytes`);
    size += 4 + r.byteLength;
  }
  if (size > MAX_BATCH_BYTES)
    throw new ValidationError('stream.batch_too_large', `a batch may be at most ${MAX_BATCH_BYTES} bytes`);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  let at = MAGIC.byteLength;
  for (const r of records) {
    view.setUint32(at, r.byteLength);
    out.set(r, at + 4);
    at += 4 + r.byteLength;
  }
  return out;
}

/** Decodes verified WAL bytes; malformed framing is an error, never a short read. */
export function decodeBatch(bytes: Uint8Array): Uint8Array[] {
  const fail = (why: string) => new ValidationError('stream.malformed_batch', `WAL batch is malformed: ${why}`);
  if (bytes.byteLength < MAGIC.byteLength || !MAGIC.every((b, i) => bytes[i] === b)) throw fail('bad magic');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: Uint8Array[] = [];
  let at = MAGIC.byteLength;
  while (at < bytes.byteLength) {
    if (at + 4 > bytes.byteLength) throw fail('truncated length');
    const length = view.getUint32(at);
    if (at + 4 + length > bytes.byteLength) throw fail('truncated record');
    records.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  if (records.length === 0) throw fail('no records (encodeBatch never writes an empty batch)');
  return records;
}
