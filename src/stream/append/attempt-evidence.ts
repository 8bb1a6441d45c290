import {
  laneKeys,
  walBindingOf,
  walPrefixOf,
  type CollectedAttempt,
  type CommitRecord,
  type LaneRef,
  type SpentMarker,
} from '../../domain/stream.js';
import { ValidationError } from '../../domain/errors.js';
import type { Ports } from '../../ports/index.js';
import type { WalRef } from '../append-input.js';

/**
 * The exact evidence of one append attempt, read only off the acknowledged path (a retry,
 * a conflict, an unknown outcome, a resolve). There is no intent item before the head CAS:
 * - the attempt's WAL objects (`wal/<stream>/<partition>/<attempt>/<sha256>.wal`), each
 *   naming in its metadata the attempt, SHA-256, record count, fence epoch and the start
 *   offset it is bound to;
 * - the commit record at the end offset a WAL object's binding names (`commit#<end>`),
 *   written in the same transaction as the head CAS: it names the attempt and SHA-256 or
 *   it does not (committedEnd is monotonic, so a record naming another attempt proves
 *   this one can never commit there);
 * - a spent marker (`spent#<attempt>`): written only when an attempt is proven not
 *   committed while its binding could still apply (see src/stream/spend-attempt.ts);
 * - a collected record (`collected#<attempt>`): written by GC before it deletes the WAL
 *   object of a committed attempt, naming the same WAL identity, binding and range.
 */
export async function walsOf(ports: Ports, lane: LaneRef, attemptId: string): Promise<WalRef[]> {
  const keys = await ports.objects.list(walPrefixOf(lane, attemptId));
  const wals: WalRef[] = [];
  for (const key of keys) {
    const head = await ports.objects.head(key);
    const binding = head ? walBindingOf(head.metadata) : undefined;
    if (!head || !binding || binding.attemptId !== attemptId) continue;
    const { walSha256, recordCount, start, fenceEpoch } = binding;
    wals.push({ walKey: key, walSha256, walSize: head.size, recordCount, start, fenceEpoch });
  }
  return wals;
}

/** The commit record at a WAL object's bound end offset, if any. */
export async function commitAtEnd(
  ports: Ports,
  lane: LaneRef,
  wal: Pick<WalRef, 'start' | 'recordCount'>,
): Promise<CommitRecord | undefined> {
  const item = await ports.authority.get(laneKeys.commit(lane, wal.start + wal.recordCount));
  return item as unknown as CommitRecord | undefined;
}

/** Exactly this attempt's batch: the attempt id, the SHA-256 and the bound start. */
export function namesAttempt(
  commit: CommitRecord | undefined,
  attemptId: string,
  wal: Pick<WalRef, 'walSha256' | 'start'>,
): boolean {
  return !!commit && commit.attemptId === attemptId && commit.walSha256 === wal.walSha256 && commit.start === wal.start;
}

/**
 * The attempt's commit record, if one of its WAL objects committed — or, once GC collected
 * that object, if the collected record GC left names it (and the commit record at its end
 * still names the attempt, its SHA-256 and start).
 */
export async function committedWal(
  ports: Ports,
  lane: LaneRef,
  attemptId: string,
  wals: WalRef[],
): Promise<CommitRecord | undefined> {
  for (const wal of wals) {
    const commit = await commitAtEnd(ports, lane, wal);
    if (namesAttempt(commit, attemptId, wal)) return commit;
  }
  const collected = collectedWalOf(await collectedAttempt(ports, lane, attemptId));
  if (!collected) return undefined;
  const commit = await commitAtEnd(ports, lane, collected);
  return namesAttempt(commit, attemptId, collected) ? commit : undefined;
}

/** The record GC left when it collected a committed attempt's WAL object, if any. */
export async function collectedAttempt(
  ports: Ports,
  lane: LaneRef,
  attemptId: string,
): Promise<CollectedAttempt | undefined> {
  return (await ports.authority.get(laneKeys.collected(lane, attemptId))) as unknown as CollectedAttempt | undefined;
}

/** The WAL identity and binding a collected record keeps. */
export function collectedWalOf(record: CollectedAttempt | undefined): WalRef | undefined {
  if (!record) return undefined;
  const { walKey, walSha256, walSize, start, end, fenceEpoch } = record;
  return { walKey, walSha256, walSize, recordCount: end - start, start, fenceEpoch };
}

/** The spent marker, if the attempt was proven not committed for good. */
export async function spentMarker(ports: Ports, lane: LaneRef, attemptId: string): Promise<SpentMarker | undefined> {
  return (await ports.authority.get(laneKeys.spent(lane, attemptId))) as unknown as SpentMarker | undefined;
}

/** The commit record of a committed attempt (found from its WAL objects), or stream.not_committed. */
export async function commitOfAttempt(ports: Ports, lane: LaneRef, attemptId: string): Promise<CommitRecord> {
  const commit = await committedWal(ports, lane, attemptId, await walsOf(ports, lane, attemptId));
  if (!commit) throw new ValidationError('stream.not_committed', `attempt ${attemptId} is not committed`);
  return commit;
}
