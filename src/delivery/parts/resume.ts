import type { PartHead } from '../../domain/delivery/part-receipts.js';
import { inconsistent } from '../journal/errors.js';
import { readVerified } from '../../objects/exact-object.js';
import type { ResumePosition } from '../../ports/source.js';
import { sourceKeyOf, sourceKeyText } from '../../domain/delivery/source-rules.js';
import type { Ports } from '../../ports/index.js';
import { decodeChunk } from '../chunk-codec.js';
import { listBatches } from './part-store.js';

/**
 * Where a part's retry resumes: after its last journaled chunk, never from the part's
 * first row. The position is read from the part's own chunk objects (verified against the
 * SHA-256 their receipts journaled), so no source key value is ever copied into the
 * authority table: the last row's order key, and how many rows tied on exactly that key
 * were already chunked (a tie group can straddle chunks; when a whole chunk is one tie
 * group, earlier chunks are read back until the group's start).
 */
export async function resumePositionOf(
  ports: Ports,
  head: PartHead & { last: NonNullable<PartHead['last']> },
  order: { timeColumn: string; keyColumns: readonly string[] },
): Promise<ResumePosition> {
  const keyOf = (row: Record<string, unknown>) => sourceKeyOf(row, order.timeColumn, order.keyColumns);
  const rowsOf = async (key: string, sha256: string) => decodeChunk((await readVerified(ports.objects, key, sha256)).bytes);
  const lastRows = await rowsOf(head.last.key, head.last.sha256);
  const lastRow = lastRows.at(-1);
  if (!lastRow) throw inconsistent(`the last chunk of part ${head.part} is empty`);
  const lastKey = keyOf(lastRow);
  const text = sourceKeyText(lastKey);
  const tied = (rows: Record<string, unknown>[]) => {
    let n = 0;
    for (let i = rows.length - 1; i >= 0 && sourceKeyText(keyOf(rows[i] as Record<string, unknown>)) === text; i--) n++;
    return n;
  };
  let rowsAtLastKey = tied(lastRows);
  if (rowsAtLastKey === lastRows.length && head.chunks > 1) {
    // The whole chunk is one tie group: walk back through earlier chunks of the part.
    const receipts = (await listBatches(ports, head.invocationId, head.part)).flatMap((b) => b.receipts);
    if (receipts.length !== head.chunks) {
      throw inconsistent(`part ${head.part}: its receipt batches do not match its head`);
    }
    for (let i = receipts.length - 2; i >= 0; i--) {
      const r = receipts[i] as (typeof receipts)[number];
      const rows = await rowsOf(r.key, r.sha256);
      const n = tied(rows);
      rowsAtLastKey += n;
      if (n < rows.length) break;
    }
  }
  return { lastKey, rowsAtLastKey, nextSeq: head.last.seq + 1 };
}
