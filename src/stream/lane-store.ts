import {
  assertIssuedFence,
  laneKeys,
  type CommitRecord,
  type IndexEntry,
  type IssuedFence,
  type LaneHead,
  type LaneRef,
} from '../domain/stream.js';
import { LaneMissingError } from '../domain/stream-errors.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';

/** Typed reads of the lane's authority items. */
export async function loadHead(ports: Ports, lane: LaneRef): Promise<LaneHead> {
  const item = await ports.authority.get(laneKeys.head(lane));
  if (!item) throw new LaneMissingError(lane);
  return item as unknown as LaneHead;
}

/**
 * Refuses a session the lane never issued (`assertIssuedFence`); below the head's epoch it
 * reads the takeover's record of that epoch to tell stale from forged.
 */
export async function assertSessionIssued(ports: Ports, lane: LaneRef, head: LaneHead, fence: Fence): Promise<void> {
  const below = head.fence !== undefined && fence.epoch < head.fence.epoch;
  const issued = below
    ? ((await ports.authority.get(laneKeys.fence(lane, fence.epoch))) as unknown as IssuedFence | undefined)
    : undefined;
  assertIssuedFence(lane, head, fence, issued);
}

/** The commit record containing `offset` (the first whose end is past it), if any. */
export async function commitContaining(ports: Ports, lane: LaneRef, offset: number): Promise<CommitRecord | undefined> {
  const [item] = await ports.authority.query(laneKeys.pk(lane), 'commit#', {
    startAfterSk: laneKeys.commitAfter(offset),
    limit: 1,
  });
  const commit = item as unknown as CommitRecord | undefined;
  return commit && commit.start <= offset ? commit : undefined;
}

/** Index entries from the one containing `offset` on, in offset order. */
export async function indexFrom(ports: Ports, lane: LaneRef, offset: number, limit: number): Promise<IndexEntry[]> {
  const items = await ports.authority.query(laneKeys.pk(lane), 'index#', {
    startAfterSk: laneKeys.indexAfter(offset),
    limit,
  });
  return items as unknown as IndexEntry[];
}

/** The index entry a commit record implies. */
export function indexEntryOf(commit: CommitRecord): IndexEntry {
  return {
    stream: commit.stream,
    partition: commit.partition,
    start: commit.start,
    end: commit.end,
    walKey: commit.walKey,
    walSha256: commit.walSha256,
  };
}
