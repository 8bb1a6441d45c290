import { sealChunkBytes } from '../../domain/delivery/chunk-json.js';
import type { SourceChunk } from '../../ports/source.js';
import { encodeObject } from '../../objects/object-encoding.js';
import { encodeChunk } from '../chunk-codec.js';

/** A source chunk as the bytes its object holds and its stage loads. */
export interface EncodedChunk {
  seq: number;
  columns: string[];
  rows: number;
  /** Canonical JSONL (chunk-codec.ts): what the stage loads. */
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes` (the receipt's and the object's checksum), taken once (chunk-json.ts `sealChunkBytes`). */
  sha256: string;
  /**
   * `bytes` gzip-compressed: what the chunk object stores (object-encoding.ts), compressed
   * on the thread pool while the chunk is handed on (only the object's PUT waits for it).
   */
  stored: Promise<Uint8Array>;
}

/**
 * The source's chunks, encoded one ahead of the consumer: while the consumer writes and
 * loads chunk n, chunk n+1 is read from the source AND encoded (canonical JSONL and its
 * SHA-256; its gzip runs on the thread pool meanwhile, awaited only by the chunk's PUT),
 * so neither the read nor the encode of the next chunk waits for the current load — the
 * per-chunk critical path is max(load, read + encode), not their sum. Memory: the
 * consumer's chunk plus the one ahead (its rows are dropped once encoded).
 *
 * Leaving early (the consumer breaks or fails) closes the source's iteration, which
 * cancels its query; a failure of the chunk ahead surfaces when the consumer asks for it.
 */
export async function* encodedChunks(chunks: AsyncIterable<SourceChunk>): AsyncGenerator<EncodedChunk> {
  const iterator = chunks[Symbol.asyncIterator]();
  const ahead = (): Promise<EncodedChunk | undefined> => {
    const next = iterator.next().then((step) => (step.done ? undefined : encoded(step.value)));
    next.catch(() => undefined); // awaited below; a failure after the consumer already left is moot
    return next;
  };
  try {
    for (let next = ahead(); ;) {
      const chunk = await next;
      if (!chunk) return;
      next = ahead();
      yield chunk;
    }
  } finally {
    await iterator.return?.()?.catch(() => undefined);
  }
}

function encoded(chunk: SourceChunk): EncodedChunk {
  const bytes = encodeChunk(chunk.rows, chunk.columns, chunk.lines);
  const { seq, columns } = chunk;
  const stored = encodeObject(bytes, 'gzip');
  stored.catch(() => undefined); // awaited by the PUT; a consumer that left never asks
  // Sealed: the target's load takes these bytes as verified, without hashing them again.
  const { sha256 } = sealChunkBytes(seq, bytes, chunk.rows.length);
  return { seq, columns, rows: chunk.rows.length, bytes, sha256, stored };
}
