import { ChecksumMismatchError, ObjectMissingError } from '../../domain/errors.js';
import { decodeBatch } from '../../domain/record-batch.js';
import { laneKeys, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import { readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { recordQuarantine, type QuarantineReason } from '../read/quarantine.js';
import { compactionKeys, type CompactionRecord } from './model.js';

type Verdict = QuarantineReason;

/**
 * The read path's compaction hook (issue #11): a committed compaction covering a range is
 * its first same-view candidate. The object is verified by SHA-256 and record count once
 * per read call and sliced to the range. A bad copy (missing, wrong checksum, malformed,
 * wrong count) is quarantined by exact identity (key + the checksum `compaction#` expects,
 * the same `quarantine#` item the range reader keeps) and `undefined` sends the read to
 * the per-range copies; so does a provider failure. Never a skip.
 */
export class CompactedCopies {
  private loaded: { record: CompactionRecord; records: Uint8Array[] } | undefined;
  private readonly refused = new Set<string>();
  private ahead: CompactionRecord | null | undefined;

  constructor(
    private readonly ports: Ports,
    private readonly lane: LaneRef,
    private readonly from: number,
    /** The read's list of copies not served (shared with the range reader). */
    private readonly noted: Array<{ key: string; reason: string }>,
  ) {}

  async read(entry: IndexEntry): Promise<Uint8Array[] | undefined> {
    const record = await this.covering(entry);
    if (!record || this.refused.has(record.objectKey)) return undefined;
    if (this.loaded?.record !== record) {
      const records = await this.load(record);
      if (!records) return undefined;
      this.loaded = { record, records };
    }
    return this.loaded.records.slice(entry.start - record.start, entry.end - record.start);
  }

  /**
   * The compaction holding the range: one query per compaction a read call walks into (a
   * read moves forward, so the first compaction ending past the range stays the answer
   * until the read passes its end; none at all means none for the rest of the call).
   */
  private async covering(entry: IndexEntry): Promise<CompactionRecord | undefined> {
    if (this.ahead === undefined || (this.ahead !== null && this.ahead.end <= entry.start)) {
      const [found] = await this.ports.authority.query(laneKeys.pk(this.lane), 'compaction#', { startAfterSk: compactionKeys.after(entry.start), limit: 1 });
      this.ahead = found ? (found as unknown as CompactionRecord) : null;
    }
    const a = this.ahead;
    return a && a.start <= entry.start && entry.end <= a.end ? a : undefined;
  }

  private async load(record: CompactionRecord): Promise<Uint8Array[] | undefined> {
    const key = laneKeys.quarantine(this.lane, record.objectKey);
    const earlier = await this.ports.authority.get(key);
    if (earlier?.expectedSha256 === record.sha256) return this.refuse(record, earlier.reason as string);
    let verdict: Verdict;
    try {
      const records = decodeBatch((await readVerified(this.ports.objects, record.objectKey, record.sha256)).bytes);
      if (records.length === record.recordCount && records.length === record.end - record.start) return records;
      verdict = 'record_count_mismatch';
    } catch (error) {
      if (error instanceof ObjectMissingError) verdict = 'missing';
      else if (error instanceof ChecksumMismatchError) verdict = 'checksum_mismatch';
      else if ((error as { code?: string }).code === 'stream.malformed_batch') verdict = 'malformed';
      else {
        this.refused.add(record.objectKey); // a provider failure: the per-range copies serve this call
        return undefined;
      }
    }
    // The range reader's quarantine (exact identity; a trim that moved meanwhile makes the read trimmed instead).
    await recordQuarantine(this.ports, this.lane, this.from, record, { copy: 'compacted', key: record.objectKey, sha256: record.sha256, size: record.size }, verdict);
    return this.refuse(record, verdict);
  }

  private refuse(record: CompactionRecord, reason: string): undefined {
    this.refused.add(record.objectKey);
    if (!this.noted.some((q) => q.key === record.objectKey)) this.noted.push({ key: record.objectKey, reason });
    return undefined;
  }
}
