import { isInvocationId, isManifestName } from '../domain/delivery/identifiers.js';
import { JournalUnavailableError } from '../domain/delivery/journal-states.js';
import { ValidationError } from '../domain/errors.js';
import type { AuthorityItem, TransactionLeg } from '../ports/authority.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import { DELIVERY_CUT_POINTS } from './cut-points.js';
import { JournalStateConflictError, TransitionPreconditionError } from './journal/errors.js';
import { assertTransitionTo } from './journal/transition.js';
import { custodyGuardLeg, journaledWrite, requireFence, type Known } from './journal/journaled-write.js';
import {
  deliveryKeys,
  validateCustodyFence,
  validateInvocationRef,
  validateTargetId,
  type InvocationRef,
} from './journal/keys.js';
import { type InvocationRecord } from './journal/records.js';

/**
 * The route checkpoint of a target: the end of the last window delivered through it.
 * `{pk: target#<targetId>, sk: checkpoint#<route>}`. It only ever moves forward, only in
 * the holder's fenced transaction, and only after the invocation is PUBLISHED with its
 * evidence persisted (docs/rules.md#evidence-before-checkpoint).
 */
export interface CheckpointRecord {
  targetId: string;
  route: string;
  windowStart: string;
  windowEnd: string;
  /** The invocation that moved it last. */
  invocationId: string;
  advancedAt: string;
  version: number;
}

const isInstant = (v: unknown): v is string => typeof v === 'string' && Number.isFinite(Date.parse(v));

function parseCheckpoint(item: AuthorityItem, targetId: string, route: string): CheckpointRecord {
  if (
    item.targetId !== targetId ||
    item.route !== route ||
    !isInstant(item.windowStart) ||
    !isInstant(item.windowEnd) ||
    !isInvocationId(item.invocationId) ||
    !isInstant(item.advancedAt)
  ) {
    throw new JournalUnavailableError('delivery.recovery_journal_inconsistent', 'route checkpoint record is malformed');
  }
  return {
    targetId,
    route,
    windowStart: item.windowStart,
    windowEnd: item.windowEnd,
    invocationId: item.invocationId,
    advancedAt: item.advancedAt,
    version: item.version,
  };
}

export async function loadCheckpoint(
  ports: Ports,
  targetId: string,
  route: string,
): Promise<CheckpointRecord | undefined> {
  const id = validateTargetId(targetId);
  if (!isManifestName(route))
    throw new ValidationError('delivery.route_invalid', 'route name must be [a-z][a-z0-9_-]{0,63}');
  let item: AuthorityItem | undefined;
  try {
    item = await ports.authority.get(deliveryKeys.checkpoint(id, route));
  } catch {
    throw new JournalUnavailableError(
      'delivery.recovery_journal_unavailable',
      'the route checkpoint could not be read from the authority store',
    );
  }
  return item ? parseCheckpoint(item, id, route) : undefined;
}

export interface CheckpointAdvance {
  /** True when this invocation moved the checkpoint to its window end. */
  moved: boolean;
  /** The sealed window end this invocation delivered. */
  windowEnd: string;
  invocation: InvocationRecord;
  /** True when the advance was already journaled (a retry): nothing was written now. */
  alreadyApplied: boolean;
}

export const CHECKPOINT_TRANSITION_ID = 'sys:checkpoint';

/**
 * `governance` (an exchange route, docs/rules.md#governance-vs-publication): called while each
 * round plans, it refuses (a Quality.* error, nothing written) unless the capsule is COMPLETE
 * with its completion evidence, and returns the legs that hold the capsule at the version it
 * read — so a capsule changed meanwhile refuses the whole write (I10: at most once, only after
 * COMPLETE).
 */
export type GovernanceLegs = () => Promise<TransactionLeg[]>;

/**
 * Advances the route checkpoint to the invocation's sealed window end and completes the
 * invocation (PUBLISHED → SUCCEEDED) — ONE transaction at `delivery.checkpoint.advance`:
 * the checkpoint CAS (expected version, or absent), the custody ConditionCheck with the
 * caller's fence (a zombie is refused: Delivery.Fenced), the invocation's state and
 * `facts.checkpoint`, and the journal record, claimed once per invocation
 * (`sys:checkpoint`) — so it happens at most once per invocation and window, and
 * repeating it (after a crash or a lost response) is success. (A journal written before
 * the two were one transaction holds PUBLISHED with the checkpoint recorded; the
 * checkpoint step then journals the transition by itself.)
 *
 * Monotonic: when the checkpoint already stands at or past this window's end (a re-run or
 * a backfill of an older window), it is not moved — the transaction still checks its
 * version, so the decision was taken against the current value — and the fact records
 * `moved: false`; the invocation can complete without the checkpoint ever going back.
 *
 * Requires state PUBLISHED (Delivery.JournalStateConflict otherwise) and the evidence
 * object recorded (Delivery.TransitionPrecondition). Nothing is written on any refusal.
 */
export async function advanceCheckpoint(
  ports: Ports,
  ref: InvocationRef,
  fence: Fence,
  known?: Known,
  governance?: GovernanceLegs,
): Promise<CheckpointAdvance> {
  const target = validateInvocationRef(ref);
  const ourFence = validateCustodyFence(fence);
  const result = await journaledWrite(ports, {
    cutPoint: DELIVERY_CUT_POINTS.checkpointAdvance,
    ref: target,
    transitionId: CHECKPOINT_TRANSITION_ID,
    type: 'checkpoint',
    op: {},
    ...(known ? { known } : {}),
    plan: async ({ invocation, custody, at }) => {
      requireFence(target, custody, ourFence);
      if (invocation.state !== 'PUBLISHED')
        throw new JournalStateConflictError(target.invocationId, invocation.state, 'PUBLISHED');
      if (!invocation.facts.evidence)
        throw new TransitionPreconditionError('evidence must be persisted before the checkpoint advances');
      const governed = governance ? await governance() : [];
      const { start, end } = invocation.sealed.window;
      const current = await loadCheckpoint(ports, target.targetId, invocation.route);
      const moved = !current || Date.parse(end) > Date.parse(current.windowEnd);
      const key = deliveryKeys.checkpoint(target.targetId, invocation.route);
      const next = {
        targetId: target.targetId,
        route: invocation.route,
        windowStart: start,
        windowEnd: end,
        invocationId: target.invocationId,
        advancedAt: at,
      };
      const leg: TransactionLeg = !current
        ? { kind: 'put', item: { ...key, ...next }, expect: 'absent' }
        : moved
          ? { kind: 'update', key, expect: { version: current.version }, set: next }
          : { kind: 'check', key, expect: { version: current.version } };
      // The same transaction moves PUBLISHED → SUCCEEDED: the checkpoint is that transition's
      // last proof (journal-proofs.ts), so there is no journaled state between the two.
      const facts = { ...invocation.facts, checkpoint: { windowEnd: end, moved, at } };
      assertTransitionTo('PUBLISHED', 'SUCCEEDED', facts);
      return {
        set: { state: 'SUCCEEDED', facts },
        custody: custodyGuardLeg(custody),
        legs: [leg, ...governed],
        journal: {
          from: 'PUBLISHED',
          to: 'SUCCEEDED',
          by: { session: ourFence.session, epoch: ourFence.epoch },
          windowEnd: end,
          moved,
          ...(current ? { previousWindowEnd: current.windowEnd } : {}),
        },
      };
    },
  });
  const checkpoint = result.invocation.facts.checkpoint;
  return {
    moved: checkpoint?.moved ?? (result.entry.data.moved as boolean),
    windowEnd: checkpoint?.windowEnd ?? (result.entry.data.windowEnd as string),
    invocation: result.invocation,
    alreadyApplied: result.alreadyApplied,
  };
}
