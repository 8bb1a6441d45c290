import { holdsCustody, isTerminal, JournalUnavailableError } from '../domain/delivery/journal-states.js';

import { CutpointError, ValidationError } from '../domain/errors.js';

import type { TransactionLeg } from '../ports/authority.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import { DELIVERY_CUT_POINTS } from './cut-points.js';
import { CustodyFencedError, CustodyHeldError } from './journal/errors.js';

import { journaledWrite, requireFence, type JournaledResult } from './journal/journaled-write.js';
import {
  deliveryKeys,
  journalOf,
  validateCustodyFence,
  validateInvocationRef,
  validateSession,
  validateTargetId,
  type InvocationRef,
} from './journal/keys.js';
import { loadCustody, readInvocation, type CustodyRecord, type InvocationRecord } from './journal/records.js';
import { transition, type TransitionRequest } from './journal/transition.js';

export { CustodyFencedError, CustodyHeldError, loadCustody, type CustodyRecord };

/**
 * Target custody (docs/delivery.md, 'Delivery recovery: the five commands and the flows behind them'): one invocation at a time holds a target — its lock, its owned
 * stages and its work files — from before source row I/O until cleanup is proved. The
 * custody item carries a fence {owner = invocation id, session, epoch}; every journal
 * write of the holder names that fence in the same transaction, so a zombie step from an
 * old epoch can neither publish (the PUBLISHED transition), advance the checkpoint, nor
 * drop stages (the RETIRED transition) — its transaction fails the custody condition and
 * writes nothing. No correctness depends on a lease expiring: custody is only ever
 * released by the holder's own fenced terminal transition, and taken over only by a new
 * session of the same invocation (recovery), which raises the epoch.
 */

/** What begin (begin-custody.ts) and a recovery session's takeover grant. */
export interface CustodyGrant {
  fence: Fence;
  invocation: InvocationRecord;
  /** The custody record this grant wrote (absent when found already applied: read it). */
  custody?: CustodyRecord & { fence: Fence };
  /** True when this session already held custody (a retry): nothing was written now. */
  alreadyApplied: boolean;
}

export const BEGIN_ID = 'sys:begin';

async function findJournaledEntry(ports: Ports, invocationId: string, transitionId: string) {
  return journalOf(ports.authority, invocationId).find(transitionId);
}

/** Custody of a terminal invocation is released for good; it cannot be taken again. */
export class CustodyNotRetainedError extends CutpointError {
  constructor(invocationId: string) {
    super(
      'Delivery.CustodyNotRetained',
      'delivery.custody_not_retained',
      `invocation ${invocationId} is terminal and no longer retains custody`,
    );
  }
}

/**
 * A new session takes custody of an invocation that retains it (a recovery action: the
 * docs/rules.md#custody: a recovery "acquires the normal lease and target custody"): the epoch goes up by one in a
 * fenced CAS on the custody item, journaled once per session (`sys:custody:<session>`),
 * so every older session of this invocation — a zombie still running — is fenced from
 * then on. A session is granted custody at most once: asking again with the same session
 * returns that grant (alreadyApplied), fenced if a newer session took over since. Refused without a write when the invocation
 * is terminal (Delivery.CustodyNotRetained) or another invocation holds the target
 * (Delivery.CustodyHeld); a custody item that disagrees with a retaining journal is an
 * inconsistent journal. `condition`, planned each round, adds legs the caller's own state
 * must still satisfy in the same transaction, or throws its refusal (the operator's observe:
 * the capsule still without a reader guard — a takeover would fence out the guard's owner,
 * who then could never release it). `known`: the record and custody the caller just read
 * (a recovery action's checked load): the takeover is planned on them without reading
 * again, its transaction conditioned on both versions. The grant carries the custody it
 * wrote, so the session's next write reads nothing either.
 */
export async function acquireCustody(
  ports: Ports,
  ref: InvocationRef,
  session: string,
  condition?: () => Promise<TransactionLeg[]>,
  known?: { invocation: InvocationRecord; custody: CustodyRecord | undefined },
): Promise<CustodyGrant> {
  const target = validateInvocationRef(ref);
  const ourSession = validateSession(session);
  const current = known ? known.custody : await loadCustody(ports, target.targetId);
  if (
    current?.state === 'HELD' &&
    current.invocationId === target.invocationId &&
    current.fence?.session === ourSession
  ) {
    return { fence: current.fence, invocation: await readInvocation(ports, target), alreadyApplied: true };
  }
  // A session is granted custody at most once: the session that began the invocation gets
  // its begin grant back (fenced, if a takeover followed), never a fresh epoch.
  const begun = await findJournaledEntry(ports, target.invocationId, BEGIN_ID);
  const by = begun?.data.by as { session?: unknown; epoch?: unknown } | undefined;
  if (by?.session === ourSession && typeof by.epoch === 'number') {
    return {
      fence: { owner: target.invocationId, session: ourSession, epoch: by.epoch },
      invocation: await readInvocation(ports, target),
      alreadyApplied: true,
    };
  }
  let held: (CustodyRecord & { fence: Fence }) | undefined;
  const result = await journaledWrite(ports, {
    cutPoint: DELIVERY_CUT_POINTS.custodyAcquire,
    ref: target,
    transitionId: `sys:custody:${ourSession}`,
    type: 'custody',
    op: { session: ourSession },
    ...(known ? { known } : {}),
    plan: async ({ invocation, custody, at }) => {
      if (!holdsCustody(invocation.state)) throw new CustodyNotRetainedError(target.invocationId);
      if (custody?.state === 'HELD' && custody.invocationId !== target.invocationId)
        throw new CustodyHeldError(target.targetId, custody.invocationId);
      if (!custody || custody.state !== 'HELD' || !custody.fence) {
        throw new JournalUnavailableError(
          'delivery.recovery_journal_inconsistent',
          'the journal retains custody but the target custody record is not held by it',
        );
      }
      const epoch = custody.epoch + 1;
      const fence: Fence = { owner: target.invocationId, session: ourSession, epoch };
      // The custody item as this round's update leaves it, should it apply.
      held = { ...custody, fence, epoch, acquiredAt: at, version: custody.version + 1 };
      return {
        set: { custodyEpoch: epoch },
        custody: {
          kind: 'update',
          key: deliveryKeys.custody(target.targetId),
          expect: { version: custody.version, fence: custody.fence },
          set: { fence, epoch, acquiredAt: at },
        },
        journal: { by: { session: ourSession, epoch }, previousEpoch: custody.epoch },
        ...(condition ? { legs: await condition() } : {}),
      };
    },
  });
  const epoch = (result.entry.data.by as { epoch: number }).epoch;
  return {
    fence: { owner: target.invocationId, session: ourSession, epoch },
    invocation: result.invocation,
    ...(!result.alreadyApplied && held ? { custody: held } : {}),
    alreadyApplied: result.alreadyApplied,
  };
}

/**
 * For a step about to act outside the authority (a target write, an S3 PUT): throws
 * Delivery.Fenced unless `fence` holds custody of the target now. This is a check, not a
 * guard — a takeover can follow it — which is why every authority write also carries the
 * fence in its own transaction and the target adapters recheck exact object identity.
 */
export async function assertCustody(
  ports: Ports,
  targetId: string,
  fence: Fence,
): Promise<CustodyRecord & { fence: Fence }> {
  const id = validateTargetId(targetId);
  const f = validateCustodyFence(fence);
  const custody = await loadCustody(ports, id);
  const ref = { targetId: id, invocationId: f.owner };
  requireFence(ref, custody, f);
  return custody;
}

/**
 * Releases custody: the holder's transition to a terminal state (SUCCEEDED →
 * CUSTODY_RELEASED once cleanup is proved; PARTIAL_PROVED / EMPTY_STAGING /
 * REEXTRACT_REQUIRED → RETIRED once the owned stages are proved gone), journaled and
 * released in one fenced transaction at `delivery.custody.release`. The custody item
 * keeps its epoch as a RELEASED marker, so the next acquire takes epoch + 1. There is no
 * release without a terminal transition: custody released while the journal still
 * retains it would let a new invocation start over an unresolved one.
 */
export async function releaseCustody(
  ports: Ports,
  ref: InvocationRef,
  request: TransitionRequest,
): Promise<JournaledResult> {
  if (!isTerminal(request.to)) {
    throw new ValidationError(
      'delivery.release_not_terminal',
      `custody is released only by a transition to RETIRED or CUSTODY_RELEASED, not ${String(request.to)}`,
    );
  }
  return transition(ports, ref, request);
}
