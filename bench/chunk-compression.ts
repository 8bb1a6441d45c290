import { decodeChunk, encodeChunk } from '../src/delivery/chunk-codec.js';
import { listReceipts } from '../src/delivery/parts/part-store.js';
import { readVerified } from '../src/objects/exact-object.js';
import { encodeObject, GZIP_LEVEL } from '../src/objects/object-encoding.js';
import type { Ports } from '../src/ports/index.js';
import { median, round3 } from './measure.js';

/**
 * What compressing chunk objects costs and saves (src/objects/object-encoding.ts), on the
 * chunks one delivery of the bench window stored: bytes as JSONL (what the receipts and the
 * target see) against bytes stored (gzip), and rows/s of the chunk encode alone against
 * encode + gzip over the same rows, side by side in the same rounds (medians).
 */
export interface ChunkCompressionResult {
  chunks: number;
  rows: number;
  gzipLevel: number;
  jsonlBytes: number;
  storedBytes: number;
  /** jsonlBytes / storedBytes. */
  ratio: number;
  encodeRowsPerSec: number;
  encodeGzipRowsPerSec: number;
  /** encodeGzipRowsPerSec / encodeRowsPerSec: what compressing leaves of the encode rate. */
  rateRatio: number;
}

export async function benchChunkCompression(
  ports: Ports,
  invocationId: string,
  rounds = 5,
): Promise<ChunkCompressionResult> {
  const receipts = await listReceipts(ports, invocationId);
  const chunks: Array<{ rows: ReturnType<typeof decodeChunk>; columns: string[] }> = [];
  let storedBytes = 0;
  let jsonlBytes = 0;
  for (const r of receipts) {
    const stored = await readVerified(ports.objects, r.key, r.sha256);
    storedBytes += stored.size;
    jsonlBytes += stored.bytes.byteLength;
    const rows = decodeChunk(stored.bytes);
    chunks.push({ rows, columns: Object.keys(rows[0] ?? {}) });
  }
  const rows = chunks.reduce((n, c) => n + c.rows.length, 0);
  const plain: number[] = [];
  const gzip: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    for (const c of chunks) encodeChunk(c.rows, c.columns);
    plain.push((rows * 1000) / (performance.now() - t));
    t = performance.now();
    for (const c of chunks) await encodeObject(encodeChunk(c.rows, c.columns), 'gzip');
    gzip.push((rows * 1000) / (performance.now() - t));
  }
  const encodeRowsPerSec = median(plain);
  const encodeGzipRowsPerSec = median(gzip);
  return {
    chunks: chunks.length,
    rows,
    gzipLevel: GZIP_LEVEL,
    jsonlBytes,
    storedBytes,
    ratio: round3(jsonlBytes / storedBytes),
    encodeRowsPerSec: round3(encodeRowsPerSec),
    encodeGzipRowsPerSec: round3(encodeGzipRowsPerSec),
    rateRatio: round3(encodeGzipRowsPerSec / encodeRowsPerSec),
  };
}
