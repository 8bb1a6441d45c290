import { writeExactlyOnce } from '../../authority/resolve.js';
import { laneKeys, WAL_ROOT, walBindingOf, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { commitAtEnd, namesAttempt } from '../append/attempt-evidence.js';
import { GC_CUT_POINTS } from './cut-points.js';

/**
 * An attempt's evidence must outlive its WAL object. A re-run of an attempt id, a resolve
 * or a retire finds what became of the attempt through its WAL objects (their bindings
 * name the commit record to read); once GC deletes the WAL object of a COMMITTED attempt
 * (trimmed, or superseded by a compaction), nothing would say the attempt committed, and
 * the same batch under the same attempt id could be appended again — a duplicate — or
 * spent and reported KNOWN_NOT_COMMITTED although it committed.
 *
 * So before that DELETE, GC writes the attempt's collected record (`collected#<attempt>`,
 * naming the exact WAL identity, fence epoch and committed range), put-if-absent, a lost
 * answer resolved by exact reload. The object may be deleted only once the record names
 * exactly its commit. A WAL object that never committed needs nothing: its evidence is
 * the spent marker, or a fence or committed end that rules it out for good.
 * Returns false (keep the object; the next run tries again) when another record stands.
 */
export async function keepCommittedEvidence(ports: Ports, lane: LaneRef, objectKey: string): Promise<boolean> {
  const attemptId = attemptOfWalKey(lane, objectKey);
  if (!attemptId) return true;
  const object = await ports.objects.head(objectKey);
  const binding = object ? walBindingOf(object.metadata) : undefined;
  if (!object || !binding || binding.attemptId !== attemptId) return true;
  const commit = await commitAtEnd(ports, lane, binding);
  if (!namesAttempt(commit, attemptId, binding)) return true;
  const record = {
    ...laneKeys.collected(lane, attemptId),
    stream: lane.stream,
    partition: lane.partition,
    attemptId,
    walKey: objectKey,
    walSha256: binding.walSha256,
    walSize: object.size,
    recordCount: binding.recordCount,
    fenceEpoch: binding.fenceEpoch,
    start: commit!.start,
    end: commit!.end,
    collectedAt: ports.clock.now().toISOString(),
  };
  const cut = GC_CUT_POINTS.evidence;
  const key = laneKeys.collected(lane, attemptId);
  const same = (item: Record<string, unknown>) =>
    item.walKey === objectKey &&
    item.walSha256 === binding.walSha256 &&
    item.start === commit!.start &&
    item.end === commit!.end;
  const put = await writeExactlyOnce(ports.authority, cut, key, () => ports.authority.put(cut, record, 'absent'), same);
  return put.status === 'APPLIED';
}

function attemptOfWalKey(lane: LaneRef, key: string): string | undefined {
  const prefix = `${WAL_ROOT}${lane.stream}/${lane.partition}/`;
  if (!key.startsWith(prefix)) return undefined;
  return /^([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/[0-9a-f]{64}\.wal$/.exec(key.slice(prefix.length))?.[1];
}
