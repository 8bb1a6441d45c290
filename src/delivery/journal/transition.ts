import { missingProof, proofsOf } from '../../domain/delivery/journal-proofs.js';
import {
  assertTransition,
  isTerminal,
  parseJournalState,
  type JournalState,
} from '../../domain/delivery/journal-states.js';
import { ValidationError } from '../../domain/errors.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import { JournalStateConflictError, TransitionPreconditionError } from './errors.js';
import { mergeFacts, validatePatch, type DeliveryFacts, type FactsPatch } from './facts.js';
import {
  custodyGuardLeg,
  custodyReleaseLeg,
  journaledWrite,
  requireFence,
  type JournaledResult,
  type Known,
} from './journaled-write.js';
import {
  deliveryKeys,
  validateCustodyFence,
  validateInvocationRef,
  validateTransitionId,
  type InvocationRef,
} from './keys.js';
import type { InvocationRecord } from './records.js';

/** Transitions and facts: the two journaled writes every step makes. */

export interface TransitionRequest {
  from: JournalState;
  to: JournalState;
  fence: Fence;
  /** Chosen by the step, stable across its retries (e.g. derived from the execution). */
  transitionId: string;
  patch?: FactsPatch;
  /** What the caller already read (journaled-write.ts `Known`): no reads before the first submit. */
  known?: Known;
  /**
   * Items that must hold (or move) in the same transaction, e.g. the quality capsule of a
   * ClickHouse publication at the version the caller read. Conditions on them are exact;
   * a stale one refuses the whole write, and the caller reads again.
   */
  legs?: TransactionLeg[];
  /** The step's own cut point for a non-terminal move (e.g. `publication.dispatch.intent`); default `delivery.journal.transition`. */
  cutPoint?: string;
}

/** Proof a state needs in the journal before the journal may enter it (journal-proofs.ts `missingProof`). */
function assertPreconditions(to: JournalState, facts: DeliveryFacts): void {
  const missing = missingProof(to, proofsOf(facts));
  if (missing !== undefined) throw new TransitionPreconditionError(missing);
}

/** For a journaled write that moves the state itself (the checkpoint): the edge and the proofs `to` requires, as `transition` checks them. */
export function assertTransitionTo(from: JournalState, to: JournalState, facts: DeliveryFacts): void {
  assertTransition(from, to);
  assertPreconditions(to, facts);
}

/**
 * The facts a transition out of `from` starts from: the continuation proof is
 * PARTIAL_PROVED's alone (action-guide.ts RecoveryFacts.continuable), proved by the
 * observation that entered it, so every way out drops it and a later PARTIAL_PROVED
 * journals its own.
 */
function factsLeaving(from: JournalState, facts: DeliveryFacts): DeliveryFacts {
  if (from !== 'PARTIAL_PROVED' || facts.continuable === undefined) return facts;
  const { continuable: _dropped, ...rest } = facts;
  return rest;
}

/**
 * Moves an invocation `from` → `to` (a TRANSITIONS edge, asserted before any I/O), with
 * `patch` merged into its facts, guarded by the caller's custody fence, journaled once
 * under `transitionId`. A transition to a terminal state (RETIRED, CUSTODY_RELEASED)
 * releases custody in the same transaction, at `delivery.custody.release`; every other
 * runs at the request's `cutPoint`, by default `delivery.journal.transition`.
 *
 * Errors, all without a write: Delivery.IllegalTransition, Delivery.Fenced (a zombie
 * from an old epoch), Delivery.JournalStateConflict, Delivery.TransitionPrecondition,
 * Cutpoint.IdentityConflict (`delivery.fact_conflict`, `delivery.transition_id_reused`),
 * Delivery.JournalUnavailable. Cutpoint.OutcomeUnknown only if the outcome stays unknown
 * through every round; injected crashes and definite failures pass through (repeat the
 * call: the claim makes it exactly-once).
 */
export async function transition(
  ports: Ports,
  ref: InvocationRef,
  request: TransitionRequest,
): Promise<JournaledResult> {
  assertTransition(request.from, request.to);
  const target = validateInvocationRef(ref);
  const fence = validateCustodyFence(request.fence);
  const transitionId = validateTransitionId(request.transitionId);
  const patch = validatePatch(request.patch);
  const { from, to } = request;
  const terminal = isTerminal(to);
  return journaledWrite(ports, {
    cutPoint: terminal
      ? DELIVERY_CUT_POINTS.custodyRelease
      : (request.cutPoint ?? DELIVERY_CUT_POINTS.journalTransition),
    ref: target,
    transitionId,
    type: 'transition',
    op: { from, to, patch },
    ...(request.known ? { known: request.known } : {}),
    plan: ({ invocation, custody, at }) => {
      requireFence(target, custody, fence);
      if (invocation.state !== from) throw new JournalStateConflictError(target.invocationId, invocation.state, from);
      const facts = mergeFacts(factsLeaving(from, invocation.facts), patch);
      assertPreconditions(to, facts);
      const legs = [...(request.legs ?? []), ...(terminal ? releasedLegs(invocation, to, at) : [])];
      return {
        set: { state: to, facts },
        custody: terminal ? custodyReleaseLeg(custody, at) : custodyGuardLeg(custody),
        ...(legs.length ? { legs } : {}),
        journal: { from, to, by: { session: fence.session, epoch: fence.epoch } },
      };
    },
  });
}

/**
 * What a terminal transition moves besides the journal and custody (journal/keys.ts): the
 * invocation leaves the held index (whatever its version, and also when an invocation
 * begun before that index existed never wrote one) and enters the released index, which
 * delivery-expire walks to delete its work objects once they are past retention
 * (src/domain/delivery/work-objects.ts).
 */
function releasedLegs(invocation: InvocationRecord, state: JournalState, at: string): TransactionLeg[] {
  const { invocationId, targetId, route } = invocation;
  return [
    { kind: 'forget', key: deliveryKeys.held(invocationId) },
    {
      kind: 'put',
      item: { ...deliveryKeys.released(at, invocationId), invocationId, targetId, route, state, releasedAt: at },
      expect: 'absent',
    },
  ];
}

export interface FactsRequest {
  /** The state the invocation must be in; recording facts never changes it. */
  state: JournalState;
  fence: Fence;
  transitionId: string;
  patch: FactsPatch;
  /** The step's cut point, e.g. `delivery.staging.record`; default `delivery.journal.transition`. */
  cutPoint?: string;
  /** What the caller already read (journaled-write.ts `Known`). */
  known?: Known;
  /** Items that must hold (or move) in the same transaction (see TransitionRequest.legs). */
  legs?: TransactionLeg[];
}

/**
 * Records facts without a state change (staging identity, chunk and load receipts, the
 * publication receipt, the evidence object), journaled and fenced like a transition. A
 * step batches a whole set of receipts into one call: one transaction, one journal record.
 */
export async function recordFacts(ports: Ports, ref: InvocationRef, request: FactsRequest): Promise<JournaledResult> {
  const state = parseStateArgument(request.state);
  const target = validateInvocationRef(ref);
  const fence = validateCustodyFence(request.fence);
  const transitionId = validateTransitionId(request.transitionId);
  const patch = validatePatch(request.patch);
  if (isTerminal(state))
    throw new TransitionPreconditionError(`a ${state} journal is closed; no facts can be recorded`);
  return journaledWrite(ports, {
    cutPoint: request.cutPoint ?? DELIVERY_CUT_POINTS.journalTransition,
    ref: target,
    transitionId,
    type: 'facts',
    op: { state, patch },
    ...(request.known ? { known: request.known } : {}),
    plan: ({ invocation, custody }) => {
      requireFence(target, custody, fence);
      if (invocation.state !== state) throw new JournalStateConflictError(target.invocationId, invocation.state, state);
      return {
        set: { facts: mergeFacts(invocation.facts, patch) },
        custody: custodyGuardLeg(custody),
        ...(request.legs ? { legs: request.legs } : {}),
        journal: { state, by: { session: fence.session, epoch: fence.epoch } },
      };
    },
  });
}

function parseStateArgument(value: unknown): JournalState {
  try {
    return parseJournalState(value);
  } catch {
    throw new ValidationError('delivery.state_invalid', 'state must be one of the journal states');
  }
}
