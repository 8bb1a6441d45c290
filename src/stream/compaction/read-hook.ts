import { laneKeys, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { ProviderUnavailableError, readCopy } from '../read/candidates.js';
import { recordQuarantine, type Candidate } from '../read/quarantine.js';
import { compactionKeys, type CompactionRecord } from './model.js';

/**
 * The read path's compaction hook (issue #11): a committed compaction covering a range is
 * its first same-view candidate. The object is read as every copy is (readCopy: the GET at
 * the provider cut point stream.read.provider, its bounded retries, the SHA-256, size and
 * record count verified) once per read call and sliced to the range. A bad copy (missing,
 * wrong checksum, malformed, wrong count) is quarantined by exact identity (key + the
 * checksum `compaction#` expects, the same `quarantine#` item the range reader keeps) and
 * `undefined` sends the read to the per-range copies; so does a provider failure that
 * outlasts its retries. Never a skip.
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
      const [found] = await this.ports.authority.query(laneKeys.pk(this.lane), 'compaction#', {
        startAfterSk: compactionKeys.after(entry.start),
        limit: 1,
      });
      this.ahead = found ? (found as unknown as CompactionRecord) : null;
    }
    const a = this.ahead;
    return a && a.start <= entry.start && entry.end <= a.end ? a : undefined;
  }

  private async load(record: CompactionRecord): Promise<Uint8Array[] | undefined> {
    const key = laneKeys.quarantine(this.lane, record.objectKey);
    const earlier = await this.ports.authority.get(key);
    if (earlier?.expectedSha256 === record.sha256) return this.refuse(record, earlier.reason as string);
    const copy: Candidate = { copy: 'compacted', key: record.objectKey, sha256: record.sha256, size: record.size };
    let verdict: Awaited<ReturnType<typeof readCopy>>;
    try {
      verdict = await readCopy(this.ports, record, copy);
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      this.refused.add(record.objectKey); // not a verdict on the bytes: the per-range copies serve this call
      return undefined;
    }
    // readCopy counts against [start, end); the record's own count must agree too.
    if ('records' in verdict && verdict.records.length === record.recordCount) return verdict.records;
    const reason = 'reason' in verdict ? verdict.reason : 'record_count_mismatch';
    // The range reader's quarantine (exact identity; a trim that moved meanwhile makes the read trimmed instead).
    await recordQuarantine(this.ports, this.lane, this.from, record, copy, reason);
    return this.refuse(record, reason);
  }

  private refuse(record: CompactionRecord, reason: string): undefined {
    this.refused.add(record.objectKey);
    if (!this.noted.some((q) => q.key === record.objectKey)) this.noted.push({ key: record.objectKey, reason });
    return undefined;
  }
}
