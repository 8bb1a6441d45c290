import { OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, validateFence, validateLane, validateOffset, type LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { CURSOR_CUT_POINTS } from './cut-points.js';
import { commitDecision, validateGroup } from './rules.js';
import { assertCursorSessionIssued, loadCursor } from './store.js';

export interface CursorCommitResult extends LaneRef {
  group: string;
  /** The cursor's position after the call (the committed target). */
  position: number;
  /** Where it was before this call (equal to `position` when nothing moved). */
  previousPosition: number;
  epoch: number;
}

const ROUNDS = 8;

/**
 * Commits a consumer group's position on a lane by fenced CAS: the update names the
 * cursor's version and the caller's exact fence (owner, session, epoch), so a consumer a
 * takeover fenced can never move it (Stream.CursorFenced, nothing written; a fence never
 * issued is Stream.CursorUnknownSession). The rules (`commitDecision`): never past the
 * committed end, never backwards (that is `seekCursor`, explicit), never below the trim.
 *
 * A lost response (UNKNOWN) or a CONFLICT reloads the cursor: same group, same fence and
 * the same position is our commit, applied — success; a position below it with our fence
 * means it did not land and is safe to repeat; another fence is Stream.CursorFenced.
 *
 * Input `{stream, partition, group, session: Fence, position}`.
 */
export async function commitCursor(input: unknown, ports: Ports): Promise<CursorCommitResult> {
  const lane = validateLane(input);
  const v = input as { group?: unknown; session?: unknown; position?: unknown };
  const group = validateGroup(v.group);
  const fence = validateFence(v.session);
  const to = validateOffset(v.position, 'position');
  const key = laneKeys.cursor(lane, group);
  let previous: number | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const cursor = await loadCursor(ports, lane, group);
    await assertCursorSessionIssued(ports, lane, group, cursor, fence);
    const current = cursor!; // assertCursorSessionIssued refuses an absent cursor
    previous ??= current.position;
    const head = await loadHead(ports, lane);
    const result = { ...lane, group, position: to, previousPosition: previous, epoch: fence.epoch };
    if (commitDecision(lane, group, current, head, to) === 'unchanged') return result;
    const outcome = await ports.authority.update(
      CURSOR_CUT_POINTS.commit,
      key,
      { version: current.version, fence },
      {
        position: to,
        committedAt: ports.clock.now().toISOString(),
      },
    );
    if (outcome.status === 'APPLIED') return result;
    // UNKNOWN or CONFLICT: the next round reloads and compares exact identity.
  }
  throw new OutcomeUnknownError(
    CURSOR_CUT_POINTS.commit,
    `${CURSOR_CUT_POINTS.commit}: cursor ${group} of ${lane.stream}/${lane.partition} did not settle`,
  );
}
