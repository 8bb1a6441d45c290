import { ChecksumMismatchError, CutpointError, ObjectMissingError } from '../../domain/errors.js';
import { decodeBatch } from '../../domain/record-batch.js';
import type { IndexEntry, LaneRef } from '../../domain/stream.js';
import { RangeUnreadableError } from '../../domain/stream-errors.js';
import { rerunTransient } from '../../engine/rerun.js';
import { readVerified } from '../../objects/exact-object.js';
import type { Ports } from '../../ports/index.js';
import { STREAM_CUT_POINTS } from '../cut-points.js';
import { commitOfEntry, committedGen0 } from './evidence.js';
import {
  quarantineItems,
  recordQuarantine,
  type Candidate,
  type QuarantineReason,
  type QuarantineRecord,
} from './quarantine.js';

export type { Candidate, QuarantineReason, QuarantineRecord } from './quarantine.js';

/** Attempts per candidate on a provider failure (not a verified-bad copy) before falling back. */
export const PROVIDER_ATTEMPTS = 2;

/**
 * A copy's provider (the object store) failed to answer — an injected or real GET failure,
 * a lost response, a timeout — after PROVIDER_ATTEMPTS. Not a verdict on the bytes: never
 * quarantines; with no other copy serving, the read leaves with this (transient) error.
 */
export class ProviderUnavailableError extends CutpointError {
  constructor(key: string, options?: { cause?: unknown }) {
    const cause =
      options?.cause instanceof Error ? `${options.cause.name}: ${options.cause.message}` : String(options?.cause);
    super(
      'Stream.ProviderUnavailable',
      'stream.read_provider_unavailable',
      `object store did not answer the read of ${key} (${cause}); retry the read`,
      options,
    );
  }
}

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
   * `held` revalidates the read's lease on a copy before a bad verdict on it is trusted
   * (src/stream/gc/leases.ts assertLeaseHeld): it throws when the lease has expired.
   */
  async read(entry: IndexEntry, held?: (key: string) => Promise<void>): Promise<Uint8Array[]> {
    const candidates: Candidate[] = [];
    if (entry.gen0Key && entry.gen0Sha256)
      candidates.push({ copy: 'gen0', key: entry.gen0Key, sha256: entry.gen0Sha256 });
    candidates.push({ copy: 'wal', key: entry.walKey, sha256: entry.walSha256 });

    const verdicts: string[] = [];
    let transient: unknown;
    let discovered = false;
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]!;
      const outcome = await this.tryCandidate(entry, candidate, held);
      if (outcome.records) return outcome.records;
      if (outcome.transient !== undefined) transient = outcome.transient;
      verdicts.push(`${candidate.copy} ${candidate.key}: ${outcome.verdict ?? 'provider failure'}`);
      if (i === candidates.length - 1 && !discovered && !entry.gen0Key) {
        // The entry names no generation (its link step failed, or it was repaired before
        // the generation committed): look for one in the commit evidence before giving up.
        discovered = true;
        const commit = await commitOfEntry(this.ports, this.lane, entry);
        const gen0 = commit ? await committedGen0(this.ports, this.lane, commit) : undefined;
        if (gen0 && !candidates.some((c) => c.key === gen0.key)) candidates.push({ copy: 'gen0', ...gen0 });
      }
    }
    if (transient !== undefined) throw transient;
    throw new RangeUnreadableError(entry.start, entry.end, verdicts.join('; '));
  }

  private async tryCandidate(
    entry: IndexEntry,
    candidate: Candidate,
    held?: (key: string) => Promise<void>,
  ): Promise<{ records?: Uint8Array[]; verdict?: string; transient?: unknown }> {
    const earlier = await this.quarantineOf(candidate);
    if (earlier) {
      this.note(candidate.key, earlier.reason);
      return { verdict: `quarantined (${earlier.reason})` };
    }
    let verdict: { records: Uint8Array[] } | { reason: QuarantineReason };
    try {
      verdict = await readCopy(this.ports, entry, candidate);
    } catch (error) {
      if (error instanceof ProviderUnavailableError) return { transient: error };
      throw error;
    }
    if ('records' in verdict) return verdict;
    await held?.(candidate.key);
    await this.quarantine(entry, candidate, verdict.reason);
    return { verdict: verdict.reason };
  }

  private async quarantine(entry: IndexEntry, candidate: Candidate, reason: QuarantineReason): Promise<void> {
    const item = await recordQuarantine(this.ports, this.lane, this.from, entry, candidate, reason);
    if (item) this.known?.set(candidate.key, item);
    this.note(candidate.key, reason);
  }

  private async quarantineOf(candidate: Candidate): Promise<QuarantineRecord | undefined> {
    if (!this.known) {
      const items = await quarantineItems(this.ports, this.lane);
      this.known = new Map(items.map((i) => [i.objectKey, i]));
    }
    const record = this.known.get(candidate.key);
    // Exact identity: the same key and the same expected checksum.
    return record?.expectedSha256 === candidate.sha256 ? record : undefined;
  }

  private note(key: string, reason: string): void {
    if (!this.quarantined.some((q) => q.key === key)) this.quarantined.push({ key, reason });
  }
}

/**
 * One copy read through the provider cut point and verified: its records, or the verdict
 * that it is bad (missing, checksum, malformed, record count). Anything else is a provider
 * failure, retried up to PROVIDER_ATTEMPTS (the one retry helper) and then thrown as
 * ProviderUnavailableError.
 */
export async function readCopy(
  ports: Ports,
  range: { start: number; end: number },
  candidate: Candidate,
): Promise<{ records: Uint8Array[] } | { reason: QuarantineReason }> {
  const attempt = async (): Promise<{ records: Uint8Array[] } | { reason: QuarantineReason }> => {
    try {
      const stored = await readVerified(ports.objects, candidate.key, candidate.sha256, STREAM_CUT_POINTS.provider);
      if (candidate.size !== undefined && stored.bytes.byteLength !== candidate.size)
        return { reason: 'checksum_mismatch' };
      const records = decodeOrUndefined(stored.bytes);
      if (!records) return { reason: 'malformed' };
      if (records.length !== range.end - range.start) return { reason: 'record_count_mismatch' };
      return { records };
    } catch (error) {
      if (error instanceof ObjectMissingError) return { reason: 'missing' };
      if (error instanceof ChecksumMismatchError) return { reason: 'checksum_mismatch' };
      throw new ProviderUnavailableError(candidate.key, { cause: error });
    }
  };
  return rerunTransient(attempt, ['Stream.ProviderUnavailable'], PROVIDER_ATTEMPTS);
}

function decodeOrUndefined(bytes: Uint8Array): Uint8Array[] | undefined {
  try {
    return decodeBatch(bytes);
  } catch {
    return undefined;
  }
}
