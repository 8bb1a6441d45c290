import { ValidationError } from '../domain/errors.js';
import { validateLane, validateOffset, type IndexEntry, type LaneRef } from '../domain/stream.js';
import { OffsetOutOfRangeError, OffsetTrimmedError, RangeUnreadableError } from '../domain/stream-errors.js';
import type { Ports } from '../ports/index.js';
import { CompactedCopies } from './compaction/read-hook.js';
import { assertLeaseHeld, pinForRead, releasePin } from './gc/leases.js';
import { indexFrom, loadHead } from './lane-store.js';
import { ProviderUnavailableError, RangeReader } from './read/candidates.js';
import { repairIndexEntry } from './read/evidence.js';

export { ChainBrokenError } from './read/evidence.js';

export interface ReadInput extends LaneRef {
  from: number;
  maxRecords?: number;
}

export interface ReadResult extends LaneRef {
  from: number;
  /** The offset to read from next: past the last returned record (`from` when none). */
  next: number;
  /** The head as loaded at the start of the read; `next < committedEnd` means more exists. */
  committedEnd: number;
  trimOffset: number;
  records: Array<{ offset: number; data: string }>;
  /** Index entries this read rebuilt from commit records. */
  repairs: Array<{ kind: 'index'; start: number; end: number }>;
  /** Copies not served because they are quarantined (by this read or an earlier one). */
  quarantined: Array<{ key: string; reason: string }>;
}

export const DEFAULT_MAX_RECORDS = 100;
export const MAX_READ_RECORDS = 10_000;
/** Index repairs per call (bounded); the next call continues from `next`. */
const MAX_REPAIRS = 64;
/** Index entries fetched per query. */
const INDEX_PAGE = 32;
/** No further range is read once this many record bytes are held (a range is up to 6 MiB). */
const READ_BYTE_BUDGET = 4 * 1024 * 1024;

/**
 * Reads committed records by offset from [trimOffset, committedEnd) of one lane
 * (docs/rules.md#reads-never-skip).
 * - The head is loaded first (consistent read): below the trim is Stream.OffsetTrimmed; at
 *   the committed end is the end (no records, `next = from`), not an error; past it is
 *   Stream.OffsetOutOfRange — a position past the committed end is never handed out (a
 *   consumer following it would skip every offset in between once they commit).
 * - Ranges are walked through the index. A missing entry (or a gap) below the committed
 *   end is rebuilt from the commit record — a bounded repair, never EOF; no commit record
 *   there is Stream.ChainBroken.
 * - Every returned byte is checksum-verified. A bad copy is quarantined by exact identity
 *   and the other same-view copy serves (see RangeReader). With no healthy copy the range
 *   is Stream.RangeUnreadable: records before it are returned with `next` at its start,
 *   nothing past it ever is (never a skip). A provider failure with no other copy serving
 *   (Stream.ProviderUnavailable, after its bounded retries) stops the page the same way,
 *   so a consumer makes progress and its next read retries exactly at the failed range.
 *   With nothing read yet, either error leaves as itself.
 * - Before returning, the head is reloaded: a trim that moved past `from` meanwhile makes
 *   the read Stream.OffsetTrimmed rather than return trimmed records.
 * There is no in-process index-hint cache: a cached entry would hide a deleted entry from
 * repair and save one index query per 32 ranges; every read walks the index consistently.
 */
export async function readStream(input: unknown, ports: Ports): Promise<ReadResult> {
  const lane = validateLane(input);
  const from = validateOffset((input as { from?: unknown }).from, 'from');
  const maxRecords = validateMaxRecords((input as { maxRecords?: unknown }).maxRecords);

  const head = await loadHead(ports, lane);
  if (from < head.trimOffset) throw new OffsetTrimmedError(from, head.trimOffset);
  if (from > head.committedEnd) throw new OffsetOutOfRangeError(lane, from, head.committedEnd);
  const result: ReadResult = {
    ...lane,
    from,
    next: from,
    committedEnd: head.committedEnd,
    trimOffset: head.trimOffset,
    records: [],
    repairs: [],
    quarantined: [],
  };
  if (from === head.committedEnd) return result;

  const stop = head.committedEnd;
  const reader = new RangeReader(ports, lane, from);
  const compacted = new CompactedCopies(ports, lane, from, reader.quarantined);
  let offset = from;
  let bytes = 0;
  let page: IndexEntry[] = [];
  let at = 0;
  while (
    offset < stop &&
    result.records.length < maxRecords &&
    !(result.records.length > 0 && bytes >= READ_BYTE_BUDGET)
  ) {
    if (at >= page.length) {
      page = await indexFrom(ports, lane, offset, INDEX_PAGE);
      at = 0;
    }
    while (page[at] && page[at]!.end <= offset) at++;
    let entry = page[at];
    if (entry && entry.start <= offset && offset < entry.end) {
      at++;
    } else {
      // Missing (past the last entry) or a gap (the next entry starts later): the entry
      // for the range containing `offset` is gone. The page stays: its entry follows.
      if (result.repairs.length >= MAX_REPAIRS) break;
      entry = await repairIndexEntry(ports, lane, offset, stop);
      result.repairs.push({ kind: 'index', start: entry.start, end: entry.end });
    }

    // A committed compaction covering the range serves first (src/stream/compaction/read-hook.ts).
    let records = await compacted.read(entry);
    // GC: lease the range's copies before reading them, release after (src/stream/gc/leases.ts).
    const pin = records ? undefined : await pinForRead(ports, lane, entry, from);
    try {
      // A bad verdict on a leased copy counts only while the lease holds (Stream.LeaseExpired).
      records ??= await reader.read(pin!.entry, (key) => assertLeaseHeld(ports, lane, pin!, key));
    } catch (error) {
      // Records already read stand; `next` stops at the failed range's start, so the
      // caller's next read retries exactly there (and, with nothing read, the error
      // leaves) instead of skipping past it.
      if (stopsPage(error) && result.records.length > 0) break;
      throw error;
    } finally {
      if (pin) await releasePin(ports, lane, pin);
    }
    const take = Math.min(Math.min(entry.end, stop) - offset, maxRecords - result.records.length);
    for (let k = 0; k < take; k++) {
      const record = records[offset - entry.start + k]!;
      bytes += record.byteLength;
      result.records.push({ offset: offset + k, data: Buffer.from(record).toString('base64') });
    }
    offset += take;
  }
  result.next = offset;
  result.quarantined = reader.quarantined;

  // A read racing trim: revalidate before returning anything.
  const now = await loadHead(ports, lane);
  if (now.trimOffset > from) throw new OffsetTrimmedError(from, now.trimOffset);
  return result;
}

/** A range failure that ends the page at the range's start when records were already read. */
function stopsPage(error: unknown): boolean {
  return error instanceof RangeUnreadableError || error instanceof ProviderUnavailableError;
}

function validateMaxRecords(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_RECORDS;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_READ_RECORDS) {
    throw new ValidationError(
      'stream.invalid_max_records',
      `maxRecords must be an integer in [1, ${MAX_READ_RECORDS}]`,
    );
  }
  return value as number;
}
