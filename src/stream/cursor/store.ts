import { laneKeys, type LaneRef } from '../../domain/stream.js';
import type { ItemKey } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { assertCursorSession, type Cursor, type IssuedCursorFence, type RetentionPolicy } from './rules.js';

/** Typed reads of the cursor items; the policy lives in the stream's own partition. */
export const policyKey = (stream: string): ItemKey => ({ pk: `stream#${stream}`, sk: 'retention-policy' });

export async function loadCursor(ports: Ports, lane: LaneRef, group: string): Promise<Cursor | undefined> {
  return (await ports.authority.get(laneKeys.cursor(lane, group))) as unknown as Cursor | undefined;
}

export async function loadPolicy(ports: Ports, stream: string): Promise<RetentionPolicy | undefined> {
  return (await ports.authority.get(policyKey(stream))) as unknown as RetentionPolicy | undefined;
}

/** Every cursor of the lane, in group order (one query page per 1 MB: few groups per lane). */
export async function listCursors(ports: Ports, lane: LaneRef): Promise<Cursor[]> {
  const all: Cursor[] = [];
  for (let after: string | undefined; ;) {
    const page = (await ports.authority.query(
      laneKeys.pk(lane),
      'cursor#',
      after === undefined ? { limit: 100 } : { limit: 100, startAfterSk: after },
    )) as unknown as Cursor[];
    all.push(...page);
    if (page.length < 100) return all;
    after = `cursor#${page[page.length - 1]!.group}`;
  }
}

/** `assertCursorSession` with the takeover's record of the session's epoch, when it is below the cursor's. */
export async function assertCursorSessionIssued(
  ports: Ports,
  lane: LaneRef,
  group: string,
  cursor: Cursor | undefined,
  fence: Fence,
): Promise<void> {
  const below = cursor !== undefined && fence.epoch < cursor.fence.epoch;
  const issued = below
    ? ((await ports.authority.get(laneKeys.cursorFence(lane, group, fence.epoch))) as unknown as
        IssuedCursorFence | undefined)
    : undefined;
  assertCursorSession(lane, group, cursor, fence, issued);
}
