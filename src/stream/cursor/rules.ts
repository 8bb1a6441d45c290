import { ValidationError } from '../../domain/errors.js';
import { assertIssuedFence, type IssuedFence, type LaneHead, type LaneRef } from '../../domain/stream.js';
import { sameFence } from '../../domain/fence.js';
import { UnknownSessionError } from '../../domain/stream-errors.js';
import type { Fence } from '../../domain/fence.js';
import {
  CursorBackwardsError,
  CursorBelowTrimError,
  CursorFencedError,
  CursorPastEndError,
  CursorUnknownSessionError,
  TrimPastCursorError,
} from './errors.js';

/**
 * Consumer cursors (docs/rules.md#consumer-cursors; docs/rules.md#writer-takeover: a takeover obtains a
 * new append session AND cursor owner session). Pure rules, no I/O.
 *
 * A consumer group's position on a lane is one authority item `cursor#<group>` in the
 * lane's partition: the next offset the group has not consumed. Its owner session is a
 * fence of its own (its own epoch, moved up by exactly one per takeover, each issued fence
 * recorded), so the lane's writer takeover and a cursor takeover never fence each other.
 */
export interface Cursor extends LaneRef {
  group: string;
  /** Every offset below it is consumed; [position, committedEnd) is not yet. */
  position: number;
  fence: Fence;
  version: number;
  committedAt?: string;
}

/** A cursor takeover's record of the fence it issued at `epoch`. */
export type IssuedCursorFence = IssuedFence & { group: string };

/** The groups a trim must wait for (per stream). */
export interface RetentionPolicy {
  stream: string;
  groups: string[];
  version: number;
}

const GROUP = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A trim checks every named cursor in one transaction (DynamoDB: at most 100 legs). */
export const MAX_POLICY_GROUPS = 32;

export function validateGroup(value: unknown): string {
  if (typeof value !== 'string' || !GROUP.test(value))
    throw new ValidationError(
      'stream.invalid_group',
      'group must be 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit',
    );
  return value;
}

export function validatePolicyGroups(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ValidationError('stream.invalid_policy', 'groups must be a list of group names');
  const groups = value.map(validateGroup);
  if (new Set(groups).size !== groups.length)
    throw new ValidationError('stream.invalid_policy', 'a group is named twice');
  if (groups.length > MAX_POLICY_GROUPS)
    throw new ValidationError('stream.invalid_policy', `a retention policy names at most ${MAX_POLICY_GROUPS} groups`);
  return [...groups].sort();
}

/**
 * Only the cursor's current session may commit. Anything else is refused before a write:
 * a fence the group issued once and has since superseded is stale (Stream.CursorFenced);
 * one it never issued is forged (Stream.CursorUnknownSession) — the lane's IssuedFence
 * rules (`assertIssuedFence`), applied to the cursor's own epochs.
 */
export function assertCursorSession(
  lane: LaneRef,
  group: string,
  cursor: Pick<Cursor, 'fence'> | undefined,
  fence: Fence,
  issued?: Pick<IssuedFence, 'owner' | 'sessionSha256'>,
): void {
  if (cursor && sameFence(cursor.fence, fence)) return;
  try {
    assertIssuedFence(lane, { fence: cursor?.fence }, fence, issued);
  } catch (error) {
    if (error instanceof UnknownSessionError) throw new CursorUnknownSessionError(lane, group);
    throw error;
  }
  throw new CursorFencedError(lane, group, fence.epoch, cursor?.fence.epoch ?? 0);
}

/**
 * A commit to `to` by the cursor's session: never past the committed end, never back (a
 * seek is the separate, explicit way), never below the trim. `to` equal to the position is
 * success with nothing to write (a re-commit, or a lost response that did land).
 */
export function commitDecision(
  lane: LaneRef,
  group: string,
  cursor: Pick<Cursor, 'position'>,
  head: Pick<LaneHead, 'committedEnd' | 'trimOffset'>,
  to: number,
): 'unchanged' | 'advance' {
  if (to > head.committedEnd) throw new CursorPastEndError(lane, group, to, head.committedEnd);
  if (to < cursor.position) throw new CursorBackwardsError(lane, group, to, cursor.position);
  if (to < head.trimOffset) throw new CursorBelowTrimError(lane, group, to, head.trimOffset);
  return to === cursor.position ? 'unchanged' : 'advance';
}

/** A seek may go anywhere readable: [trimOffset, committedEnd]. */
export function assertSeekTarget(
  lane: LaneRef,
  group: string,
  head: Pick<LaneHead, 'committedEnd' | 'trimOffset'>,
  to: number,
): void {
  if (to > head.committedEnd) throw new CursorPastEndError(lane, group, to, head.committedEnd);
  if (to < head.trimOffset) throw new CursorBelowTrimError(lane, group, to, head.trimOffset);
}

/**
 * A trim to `to` must not pass any cursor the retention policy names; a named group with
 * no cursor yet has consumed nothing past the current trim. Refuses with the slowest such
 * cursor (group and position).
 */
export function assertTrimRespectsCursors(
  lane: LaneRef,
  to: number,
  trimOffset: number,
  groups: readonly string[],
  positions: ReadonlyMap<string, number>,
): void {
  let slowest: { group: string; position: number } | undefined;
  for (const group of groups) {
    const position = positions.get(group) ?? trimOffset;
    if (position < to && (!slowest || position < slowest.position)) slowest = { group, position };
  }
  if (slowest) throw new TrimPastCursorError(lane, to, slowest.group, slowest.position);
}
