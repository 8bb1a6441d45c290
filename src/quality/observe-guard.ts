import { randomBytes } from 'node:crypto';
import { transitionIdOf } from '../delivery/steps/common.js';
import { TransitionPreconditionError } from '../delivery/journal/errors.js';
import type { Known } from '../delivery/journal/journaled-write.js';
import { recordFacts } from '../delivery/journal/transition.js';
import { EffectFailedError, OutcomeUnknownError } from '../domain/errors.js';
import {
  assertCapsuleStateChange,
  assertOwnerToken,
  assertReaderAcquirable,
  type CapsuleV2,
  type Completion,
  type Failure,
  type LastObservation,
  type ReaderFence,
  type ReaderGuard,
} from '../domain/quality/capsule.js';
import { IncompleteError, ReaderGuardHeldError } from '../domain/quality/errors.js';
import type { InvocationRecord } from '../delivery/journal/records.js';
import type { Ports } from '../ports/index.js';
import { capsuleUpdateLeg, readCapsule, type CapsuleRef } from './capsule-store.js';
import { QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';

/**
 * The non-expiring `quality_reader` guard (docs/rules.md#reader-guard;
 * docs/rules.md#bounded-reader steps 1, 6, 8): taken by one journaled write whose capsule leg
 * sets `reader` on the version read with no guard; every later capsule write of the observation
 * is conditioned on the version read after the acquire with OUR token on it (the exact owner
 * CAS), and removes `reader` in the same transaction. A write whose outcome stays unknown keeps
 * the guard: INCOMPLETE.
 */

/** The capsule changed between its read and the acquire (a concurrent observer came and went): decide again from a fresh read. */
export class CapsuleMovedError extends TransitionPreconditionError {
  constructor(invocationId: string) {
    super(`the capsule of ${invocationId} moved since it was read; observe again`);
  }
}

/** 128-bit random owner token (hex): never printed. */
export const newReaderToken = (): string => randomBytes(16).toString('hex');

export interface HeldGuard {
  ref: CapsuleRef;
  guard: ReaderGuard;
  /** The capsule exactly as it was right after the acquire (our token on it, its version). */
  capsule: CapsuleV2;
  fence: ReaderFence;
  known: Known;
}

/**
 * A write of ours that was not applied: reload. A guard that is not ours any more (a
 * zombie's late write) is Quality.ReaderGuardHeld / NotHeld, nothing written; still ours,
 * the guard stays and the outcome is INCOMPLETE.
 */
async function ownerRefusal(
  ports: Ports,
  ref: CapsuleRef,
  token: string,
  error: unknown,
  what: string,
): Promise<never> {
  if (!(error instanceof EffectFailedError)) throw error;
  const current = await readCapsule(ports, ref);
  if (current) assertOwnerToken(current, token);
  throw new IncompleteError(`${what} was not applied; the reader guard is kept`);
}

/**
 * docs/rules.md#bounded-reader step 1 at `quality.reader.acquire`: the guard must be absent on the version read
 * (assertReaderAcquirable: another token ⇒ Quality.ReaderGuardHeld, nothing written). A
 * lost answer resolves by the journal claim (journaledWrite); a conflict is decided by the
 * reload: another token ⇒ Quality.ReaderGuardHeld.
 */
export async function acquireGuard(
  ports: Ports,
  ref: CapsuleRef,
  capsule: CapsuleV2,
  request: { fence: ReaderFence; runId: string; deadlineAt: Date; known: Known },
): Promise<HeldGuard> {
  assertReaderAcquirable(capsule);
  const token = newReaderToken();
  const guard: ReaderGuard = {
    token,
    session: request.fence.session,
    runId: request.runId,
    fence: { owner: request.fence.owner, session: request.fence.session, epoch: request.fence.epoch },
    acquiredAt: ports.clock.now().toISOString(),
    deadlineAt: request.deadlineAt.toISOString(),
  };
  let invocation: InvocationRecord;
  try {
    const result = await recordFacts(ports, ref, {
      state: 'PUBLISHED',
      fence: request.fence,
      transitionId: transitionIdOf('quality-reader-acquire', ref.invocationId, token),
      patch: {},
      cutPoint: QUALITY_CUT_POINTS.readerAcquire,
      known: request.known,
      legs: [capsuleUpdateLeg(ref, capsule, { reader: guard })],
    });
    invocation = result.invocation;
  } catch (error) {
    if (!(error instanceof EffectFailedError)) throw error;
    // Not applied (its conditions kept failing): decided by the capsule as it is now.
    const current = await readCapsule(ports, ref);
    if (current && current.schema === 2 && current.reader && current.reader.token !== token)
      throw new ReaderGuardHeldError();
    throw new CapsuleMovedError(ref.invocationId);
  }
  const held = await readCapsule(ports, ref);
  if (!held) throw new IncompleteError('the capsule vanished after the reader guard was acquired');
  assertOwnerToken(held, token);
  return {
    ref,
    guard,
    capsule: held,
    fence: request.fence,
    known: { invocation, ...(request.known.custody ? { custody: request.known.custody } : {}) },
  };
}

/**
 * The guard is ours: our token AND the custody session and epoch that took it (G8). A
 * recovery takeover (epoch + 1) leaves the guard untouched, and its new session cannot
 * release it even holding the token: the guard names the session that took it, and that
 * session is fenced by the takeover. Quality.ReaderGuardHeld, nothing written.
 */
function assertGuardOurs(held: HeldGuard): void {
  assertOwnerToken(held.capsule, held.guard.token);
  const taken = held.capsule.reader!.fence;
  if (taken.owner !== held.fence.owner || taken.session !== held.fence.session || taken.epoch !== held.fence.epoch) {
    throw new ReaderGuardHeldError(
      'the quality reader guard was taken by another custody session; no later session releases it (quiescence procedure)',
    );
  }
}

/**
 * Release by our token with NO state change (a failed check, a generation that moved):
 * one journaled write whose capsule leg only removes `reader`, at the guard's cut point
 * `quality.reader.acquire` (the guard's own writes). Unknown ⇒ INCOMPLETE.
 */
export async function releaseGuard(ports: Ports, held: HeldGuard, why: string): Promise<void> {
  assertGuardOurs(held);
  try {
    await recordFacts(ports, held.ref, {
      state: 'PUBLISHED',
      fence: held.fence,
      transitionId: transitionIdOf('quality-reader-release', held.ref.invocationId, held.guard.token),
      patch: {},
      cutPoint: QUALITY_CUT_POINTS.readerAcquire,
      known: held.known,
      legs: [capsuleUpdateLeg(held.ref, held.capsule, { reader: undefined })],
    });
  } catch (error) {
    if (error instanceof OutcomeUnknownError)
      throw new IncompleteError(`the reader guard release after ${why} stayed unknown; the guard is kept`);
    await ownerRefusal(ports, held.ref, held.guard.token, error, `the reader guard release after ${why}`);
  }
}

export interface Persisted {
  lastObservation: LastObservation;
  completion?: Completion;
  failure?: Failure;
}

const COMMIT_CUT_POINT = {
  COMPLETE: QUALITY_CUT_POINTS.completeCommit,
  FAILED: QUALITY_CUT_POINTS.failedCommit,
  TARGET_PENDING: QUALITY_CUT_POINTS.pendingCommit,
} as const;

/**
 * docs/rules.md#bounded-reader step 6: the outcome and the release in ONE transaction,
 * conditioned on the version read after the acquire (our token on it). COMPLETE records
 * `completion.version = v + 1`, the version this very write produces. Unknown ⇒
 * Quality.Incomplete (guard kept); a conflict with another token on the capsule (a zombie) ⇒
 * refused, nothing written.
 */
export async function persistAndRelease(ports: Ports, held: HeldGuard, persisted: Persisted): Promise<void> {
  const to = persisted.lastObservation.outcome;
  assertCapsuleStateChange(held.capsule, to, held.guard.token);
  assertGuardOurs(held);
  try {
    await recordFacts(ports, held.ref, {
      state: 'PUBLISHED',
      fence: held.fence,
      transitionId: transitionIdOf('quality-observed', held.ref.invocationId, held.guard.token),
      patch: {},
      cutPoint: COMMIT_CUT_POINT[to],
      known: held.known,
      legs: [
        capsuleUpdateLeg(held.ref, held.capsule, {
          state: to,
          lastObservation: persisted.lastObservation,
          ...(persisted.completion ? { completion: persisted.completion } : {}),
          ...(persisted.failure ? { failure: persisted.failure } : {}),
          reader: undefined,
        }),
      ],
    });
  } catch (error) {
    if (error instanceof OutcomeUnknownError)
      throw new IncompleteError(`persisting ${to} stayed unknown; the reader guard is kept`);
    await ownerRefusal(ports, held.ref, held.guard.token, error, `persisting ${to}`);
  }
}

/**
 * docs/rules.md#bounded-reader step 8: an INCOMPLETE observation leaves a journal record of itself, best
 * effort and WITHOUT touching `reader` (the guard stays): the claim
 * `quality-observation-incomplete.<token>.<invocation>`. Its own failure changes nothing.
 */
export async function noteIncomplete(ports: Ports, held: HeldGuard): Promise<boolean> {
  try {
    await recordFacts(ports, held.ref, {
      state: 'PUBLISHED',
      fence: held.fence,
      transitionId: incompleteTransitionIdOf(held.ref.invocationId, held.guard.token),
      patch: {},
      known: held.known,
    });
    return true;
  } catch {
    return false;
  }
}

export const incompleteTransitionIdOf = (invocationId: string, token: string): string =>
  transitionIdOf('quality-observation-incomplete', invocationId, token);
