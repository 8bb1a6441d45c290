import { OutcomeUnknownError } from '../../domain/errors.js';
import { laneKeys, validateLane, type LaneHead, type LaneRef } from '../../domain/stream.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { CURSOR_CUT_POINTS } from './cut-points.js';
import { assertTrimRespectsCursors, validatePolicyGroups } from './rules.js';
import { loadCursor, loadPolicy, policyKey } from './store.js';

export interface PolicyResult {
  stream: string;
  /** The groups every trim of the stream's lanes waits for, sorted. */
  groups: string[];
}

const ROUNDS = 8;

/**
 * Sets a stream's retention policy: the consumer groups whose cursors a trim of any of its
 * lanes may not pass. Replaces the whole list (an empty list removes the protection). The
 * put names the version it read; a lost response reloads and compares the exact list.
 * Validated before anything is read: a bad group name writes nothing.
 *
 * Input `{stream, groups: string[]}`.
 */
export async function setRetentionPolicy(input: unknown, ports: Ports): Promise<PolicyResult> {
  const { stream } = validateLane({ stream: (input as { stream?: unknown }).stream, partition: 0 });
  const groups = validatePolicyGroups((input as { groups?: unknown }).groups);
  await loadHead(ports, { stream, partition: 0 }); // a stream that does not exist: Stream.LaneMissing, nothing written
  const same = (current: string[] | undefined) => JSON.stringify(current ?? []) === JSON.stringify(groups);
  for (let round = 0; round < ROUNDS; round++) {
    const current = await loadPolicy(ports, stream);
    if (same(current?.groups) && (current || groups.length === 0)) return { stream, groups };
    const outcome = await ports.authority.put(
      CURSOR_CUT_POINTS.policy,
      { ...policyKey(stream), stream, groups },
      current ? { version: current.version } : 'absent',
    );
    if (outcome.status === 'APPLIED') return { stream, groups };
    // UNKNOWN or CONFLICT: the next round reloads; our exact list there is success.
  }
  throw new OutcomeUnknownError(
    CURSOR_CUT_POINTS.policy,
    `${CURSOR_CUT_POINTS.policy}: the retention policy of ${stream} did not settle`,
  );
}

/**
 * What a trim of `lane` to `to` must respect (called by trimLane before its CAS): refuses
 * (Stream.TrimPastCursor, naming the slowest group and its position) when a cursor the
 * policy names is below `to`; otherwise returns the transaction legs that pin what was
 * checked — the policy's version and each named cursor's version (or absence) — so a seek,
 * a new cursor or a policy change landing meanwhile makes the trim decide again. No policy
 * item: no legs (the trim stays a single-item CAS).
 */
export async function retentionGuard(
  ports: Ports,
  lane: LaneRef,
  head: LaneHead,
  to: number,
): Promise<TransactionLeg[]> {
  const policy = await loadPolicy(ports, lane.stream);
  if (!policy) return [];
  const legs: TransactionLeg[] = [{ kind: 'check', key: policyKey(lane.stream), expect: { version: policy.version } }];
  const positions = new Map<string, number>();
  for (const group of policy.groups) {
    const cursor = await loadCursor(ports, lane, group);
    if (cursor) positions.set(group, cursor.position);
    legs.push({
      kind: 'check',
      key: laneKeys.cursor(lane, group),
      expect: cursor ? { version: cursor.version } : 'absent',
    });
  }
  assertTrimRespectsCursors(lane, to, head.trimOffset, policy.groups, positions);
  return legs;
}
