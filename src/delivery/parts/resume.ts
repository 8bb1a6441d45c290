import type { PartHead } from '../../domain/delivery/part-receipts.js';
import { EvidenceExpiredError, inconsistent } from '../journal/errors.js';
import { ObjectMissingError } from '../../domain/errors.js';
import { readVerified } from '../../objects/exact-object.js';
import type { ResumePosition } from '../../domain/delivery/source-types.js';
import { sourceKeyOf, sourceKeyText } from '../../domain/delivery/source-rules.js';
import type { Ports } from '../../ports/index.js';
import type { TargetRow } from '../../domain/delivery/target-types.js';
import { listBatches } from './part-store.js';

type Order = { timeColumn: string; keyColumns: readonly string[] };

/**
 * Where a part's retry resumes: after its last journaled chunk, never from the part's
 * first row. The position is read from the part's own chunk objects (verified against the
 * SHA-256 their receipts journaled), so no source key value is ever copied into the
 * authority table: the last row's order key, and how many rows tied on exactly that key
 * were already chunked (a tie group can straddle chunks; when a whole chunk is one tie
 * group, earlier chunks are read back until the group's start). Chunk objects are read
 * by their journaled keys, gzip (`.jsonl.gz`) or, written before compression, plain
 * (`.jsonl`); one that is gone is Delivery.EvidenceExpired (`delivery.chunk_expired`).
 */
export async function resumePositionOf(
  ports: Ports,
  head: PartHead & { last: NonNullable<PartHead['last']> },
  order: Order,
): Promise<ResumePosition> {
  const linesOf = async (key: string, sha256: string) => {
    const stored = await readVerified(ports.objects, key, sha256).catch((error: unknown) => {
      throw error instanceof ObjectMissingError ? new EvidenceExpiredError(head.invocationId, key) : error;
    });
    return chunkLines(stored.bytes);
  };
  async function* newestFirst(): AsyncGenerator<string[]> {
    yield await linesOf(head.last.key, head.last.sha256);
    if (head.chunks < 2) return;
    // Only when the whole last chunk is one tie group: walk back through the part's chunks.
    // A duplicate of this part's invocation (its Task retried while the first Lambda still
    // ran) may have journaled more batches since this head was read: its own chunks are the
    // first `head.chunks`, the last of them the head's.
    const receipts = (await listBatches(ports, head.invocationId, head.part))
      .flatMap((b) => b.receipts)
      .slice(0, head.chunks);
    const own = receipts.at(-1);
    if (
      receipts.length !== head.chunks ||
      own?.seq !== head.last.seq ||
      own.key !== head.last.key ||
      own.sha256 !== head.last.sha256
    ) {
      throw inconsistent(`part ${head.part}: its receipt batches do not match its head`);
    }
    for (let i = receipts.length - 2; i >= 0; i--) {
      const r = receipts[i] as (typeof receipts)[number];
      yield await linesOf(r.key, r.sha256);
    }
  }
  const position = await positionAfter(newestFirst(), order);
  if (!position) throw inconsistent(`the last chunk of part ${head.part} is empty`);
  return { ...position, nextSeq: head.last.seq + 1 };
}

/**
 * The position after the last row of chunks given newest first (each as its lines): the
 * last row's key and the rows tied on it, counted back from the end across as many chunks
 * as the tie group spans (an older chunk is pulled only while every row so far is tied).
 * Only the tied rows and the one before them are parsed: the bytes were verified against
 * their journaled SHA-256, which the chunk codec's canonical bytes produced, so no line is
 * re-encoded to check it. Undefined when the newest chunk has no line.
 */
export async function positionAfter(
  chunksNewestFirst: AsyncIterable<string[]>,
  order: Order,
): Promise<Omit<ResumePosition, 'nextSeq'> | undefined> {
  const keyOf = (line: string) => {
    const row = JSON.parse(line) as unknown;
    if (row === null || typeof row !== 'object' || Array.isArray(row))
      throw inconsistent('a journaled chunk holds a line that is not a row');
    return sourceKeyOf(row as TargetRow, order.timeColumn, order.keyColumns);
  };
  let lastKey: ResumePosition['lastKey'] | undefined;
  let text = '';
  let rowsAtLastKey = 0;
  for await (const lines of chunksNewestFirst) {
    if (lastKey === undefined) {
      const last = lines.at(-1);
      if (last === undefined) return undefined;
      lastKey = keyOf(last);
      text = sourceKeyText(lastKey);
    }
    let i = lines.length - 1;
    while (i >= 0 && sourceKeyText(keyOf(lines[i] as string)) === text) i--;
    rowsAtLastKey += lines.length - 1 - i;
    if (i >= 0) break;
  }
  return lastKey === undefined ? undefined : { lastKey, rowsAtLastKey };
}

/** A chunk object's lines (canonical JSONL: one row a line, each ending in a newline). */
function chunkLines(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.length === 0) return [];
  if (!text.endsWith('\n')) throw inconsistent('a journaled chunk does not end with a newline');
  return text.slice(0, -1).split('\n');
}
