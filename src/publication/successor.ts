import type { CustodyRecord } from '../delivery/journal/records.js';
import { readInvocation } from '../delivery/journal/records.js';
import type { DeliveryDeps } from '../delivery/deps.js';
import { assertWindowClosable } from '../domain/quality/capsule.js';
import { SuccessorBlockedError } from '../domain/quality/errors.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { checkCapsule } from '../quality/capsule-continuity.js';
import { capsuleUpdateLeg, qualityKeys, readCapsule } from '../quality/capsule-store.js';

/**
 * The operational record of a closed replay window (`target#<targetId>/boundary#<seq>`,
 * docs/rules.md#successors-and-replay-window).
 */
export interface BoundaryRecord {
  closedOperation: string;
  closedAt: string;
  reason: 'successor';
  successor: string;
}

/**
 * The legs a successor's Begin adds on a ClickHouse exchange slot
 * (docs/rules.md#successors-and-replay-window, N6, N19), decided on the custody item the begin
 * transaction conditions on:
 *
 * - custody absent, or still HELD (Delivery.CustodyHeld refuses that before us): nothing;
 * - RELEASED by an operation that never published (its journal RETIRED: staged failure,
 *   proved-and-fenced non-publication) or that has no v2 capsule: no replay window exists,
 *   nothing to close;
 * - RELEASED by a published operation: its capsule must be COMPLETE, retired, with no
 *   reader and its window not yet closed (`assertWindowClosable`), else
 *   Quality.SuccessorBlocked naming it and nothing is written. The legs then close its
 *   window — ONE update of the capsule conditioned on the version read (the version
 *   condition is the check: a transaction cannot name the same item twice), setting
 *   `replay {closedAt, closedBy: successor, reason: 'successor'}` — and put
 *   `boundary#<seq>` (seq = the epoch the successor's custody takes, unique per slot; must
 *   be absent), in the same transaction as the successor's custody.
 */
export async function successorBoundaryLegs(
  ports: Ports,
  successor: { targetId: string; invocationId: string },
  custody: CustodyRecord | undefined,
  context: { at: string; epoch: number },
): Promise<TransactionLeg[]> {
  if (!custody || custody.state !== 'RELEASED' || custody.invocationId === successor.invocationId) return [];
  const previous = { targetId: successor.targetId, invocationId: custody.invocationId };
  const capsule = await readCapsule(ports, previous);
  if (capsule === undefined || capsule.schema !== 2) return [];
  const journal = await readInvocation(ports, previous);
  if (journal.state === 'RETIRED') return [];
  // The previous operation's capsule, checked (capsule-continuity.ts): a rolled-back one is
  // refused as such, and its window is never closed by a write that would hide it.
  await checkCapsule(ports, { ...previous, route: journal.route }, capsule);
  try {
    assertWindowClosable(capsule);
  } catch {
    throw new SuccessorBlockedError(previous.invocationId);
  }
  const boundary: BoundaryRecord = {
    closedOperation: previous.invocationId,
    closedAt: context.at,
    reason: 'successor',
    successor: successor.invocationId,
  };
  return [
    capsuleUpdateLeg(previous, capsule, {
      replay: { ...capsule.replay, closedAt: context.at, closedBy: successor.invocationId, reason: 'successor' },
    }),
    {
      kind: 'put',
      item: { ...qualityKeys.boundary(successor.targetId, context.epoch), ...boundary },
      expect: 'absent',
    },
  ];
}

/** The exchange mode's begin legs (publication-mode.ts `beginLegs`): a successor's boundary. */
export function successorLegsOf(
  deps: Pick<DeliveryDeps, 'ports' | 'route'>,
  successor: { targetId: string; invocationId: string },
) {
  return (custody: CustodyRecord | undefined, context: { at: string; epoch: number }) =>
    successorBoundaryLegs(deps.ports, successor, custody, context);
}
