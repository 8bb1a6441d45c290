import { writeExactlyOnce } from '../../authority/resolve.js';
import { ChecksumMismatchError, ObjectMissingError } from '../../domain/errors.js';
import { decodeBatch } from '../../domain/record-batch.js';
import { laneKeys, type IndexEntry, type LaneRef } from '../../domain/stream.js';
import { OffsetTrimmedError, RangeUnreadableError } from '../../domain/stream-errors.js';
import { readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { loadHead } from '../lane-store.js';
import { commitOfEntry, committedGen0 } from './evidence.js';

/** One same-view copy of a committed range: an exact object identity (key and checksum). */
export interface Candidate {
  copy: 'gen0' | 'wal';
  key: string;
  sha256: string;
}

export type QuarantineReason = 'missing' | 'checksum_mismatch' | 'malformed' | 'record_count_mismatch';

/** A quarantine item: the exact identity that was found bad, and why. */
export interface QuarantineRecord {
  objectKey: string;
  expectedSha256: string;
  reason: string;
  at: string;
}

/** Attempts per candidate on a provider failure (not a verified-bad copy) before falling back. */
const PROVIDER_ATTEMPTS = 2;
/** Quarantine items loaded per read call; more are still found bad and re-recorded idempotently. */
const QUARANTINE_PAGE = 1000;

/**
 * State one read call shares across its ranges: the lane's quarantine items (loaded once,
 * on first use) and what the call quarantined or skipped.
 */
export class RangeReader {
  private known: Map<string, QuarantineRecord> | undefined;
  readonly quarantined: Array<{ key: string; reason: string }> = [];

  constructor(
    private readonly ports: Ports,
    private readonly lane: LaneRef,
    /** The read's first offset: a trim past it means the read must not return anything. */
    private readonly from: number,
  ) {}

  /**
   * The verified, decoded records of one committed range. Generation 0 is tried first: it
   * is the read-optimized copy the materializer produced for readers, while the WAL object
   * is the primary evidence of the commit, kept as the fallback (and never rewritten).
   * Both hold the same view, so either one verified is the range. A copy that is missing
   * or fails its checksum (or decodes to the wrong record count) is quarantined by exact
   * identity and the next copy is tried; with no healthy copy the range is unreadable —
   * an error, never a skip. A provider failure (not a verdict on the bytes) gets bounded
   * retries, then falls back; if nothing else serves, it leaves as itself (transient).
   */
  async read(entry: IndexEntry): Promise<Uint8Array[]> {
    const candidates: Candidate[] = [];
    if (entry.gen0Key && entry.gen0Sha256) candidates.push({ copy: 'gen0', key: entry.gen0Key, sha256: entry.gen0Sha256 });
    candidates.push({ copy: 'wal', key: entry.walKey, sha256: entry.walSha256 });

    const verdicts: string[] = [];
    let transient: unknown;
    let discovered = false;
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]!;
      const outcome = await this.tryCandidate(entry, candidate);
      if (outcome.records) return outcome.records;
      if (outcome.transient !== undefined) transient = outcome.transient;
      verdicts.push(`${candidate.copy} ${candidate.key}: ${outcome.verdict ?? 'provider failure'}`);
      if (i === candidates.length - 1 && !discovered && !entry.gen0Key) {
        // The entry names no generation (its link step failed, or it was repaired before
        // the generation committed): look for one in the commit evidence before giving up.
        discovered = true;
        const commit = await commitOfEntry(this.ports, this.lane, entry);
        const gen0 = commit ? await committedGen0(this.ports, this.lane, commit) : undefined;
        if (gen0 && !candidates.some((c) => c.key === gen0.key)) candidates.push({ copy: 'gen0', key: gen0.key, sha256: gen0.sha256 });
      }
    }
    if (transient !== undefined) throw transient;
    throw new RangeUnreadableError(entry.start, entry.end, verdicts.join('; '));
  }

  private async tryCandidate(
    entry: IndexEntry,
    candidate: Candidate,
  ): Promise<{ records?: Uint8Array[]; verdict?: string; transient?: unknown }> {
    const earlier = await this.quarantineOf(candidate);
    if (earlier) {
      this.note(candidate.key, earlier.reason);
      return { verdict: `quarantined (${earlier.reason})` };
    }
    let reason: QuarantineReason | undefined;
    let transient: unknown;
    for (let attempt = 0; attempt < PROVIDER_ATTEMPTS && !reason; attempt++) {
      try {
        const stored = await readVerified(this.ports.objects, candidate.key, candidate.sha256);
        const records = decodeOrUndefined(stored.bytes);
        if (!records) reason = 'malformed';
        else if (records.length !== entry.end - entry.start) reason = 'record_count_mismatch';
        else return { records };
      } catch (error) {
        if (error instanceof ObjectMissingError) reason = 'missing';
        else if (error instanceof ChecksumMismatchError) reason = 'checksum_mismatch';
        else transient = error;
      }
    }
    if (!reason) return { transient };
    await this.quarantine(entry, candidate, reason);
    return { verdict: reason };
  }

  /**
   * Records a verified-bad copy by exact identity (object key and the checksum the
   * authority expects of it), put-if-absent. Before that, the trim is revalidated: bytes
   * below a trim that moved during this read may be gone legitimately (GC), which makes
   * this read trimmed, not the copy bad.
   */
  private async quarantine(entry: IndexEntry, candidate: Candidate, reason: QuarantineReason): Promise<void> {
    const head = await loadHead(this.ports, this.lane);
    if (head.trimOffset > this.from) throw new OffsetTrimmedError(this.from, head.trimOffset);
    const cut = STREAM_CUT_POINTS.quarantine;
    const key = laneKeys.quarantine(this.lane, candidate.key);
    const record: QuarantineRecord = { objectKey: candidate.key, expectedSha256: candidate.sha256, reason, at: this.ports.clock.now().toISOString() };
    const item = { ...key, stream: this.lane.stream, partition: this.lane.partition, copy: candidate.copy, start: entry.start, end: entry.end, ...record };
    const outcome = await writeExactlyOnce(
      this.ports.authority,
      cut,
      key,
      () => this.ports.authority.put(cut, item, 'absent'),
      (current) => current.objectKey === candidate.key && current.expectedSha256 === candidate.sha256,
    );
    // CONFLICT: the key was quarantined under another expected checksum — a different
    // identity, left as it is. This copy is not served either way.
    if (outcome.status === 'APPLIED') this.known?.set(candidate.key, outcome.item as unknown as QuarantineRecord);
    this.note(candidate.key, reason);
  }

  private async quarantineOf(candidate: Candidate): Promise<QuarantineRecord | undefined> {
    if (!this.known) {
      const items = await this.ports.authority.query(laneKeys.pk(this.lane), 'quarantine#', { limit: QUARANTINE_PAGE });
      this.known = new Map(items.map((i) => [i.objectKey as string, i as unknown as QuarantineRecord]));
    }
    const record = this.known.get(candidate.key);
    // Exact identity: the same key and the same expected checksum.
    return record?.expectedSha256 === candidate.sha256 ? record : undefined;
  }

  private note(key: string, reason: string): void {
    if (!this.quarantined.some((q) => q.key === key)) this.quarantined.push({ key, reason });
  }
}

function decodeOrUndefined(bytes: Uint8Array): Uint8Array[] | undefined {
  try {
    return decodeBatch(bytes);
  } catch {
    return undefined;
  }
}
