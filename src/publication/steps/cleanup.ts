import { releaseCustody } from '../../delivery/custody.js';
import type { DeliveryDeps } from '../../delivery/deps.js';
import { TransitionPreconditionError } from '../../delivery/journal/errors.js';
import { readInvocation } from '../../delivery/journal/records.js';
import { transition } from '../../delivery/journal/transition.js';
import { rereadOnStale } from '../../delivery/steps/carried.js';
import {
  forRerun,
  loadForStep,
  output,
  parseStepInput,
  stagingRefOf,
  transitionIdOf,
  type StepOutput,
} from '../../delivery/steps/common.js';
import { EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import { assertRetirable } from '../../domain/quality/capsule.js';
import { windowEndOf } from '../../domain/quality/replay-window.js';
import type { DropStatus } from '../../domain/delivery/target-types.js';
import { routeGovernanceOf } from '../../quality/admission.js';
import { capsuleUpdateLeg } from '../../quality/capsule-store.js';
import { completedCapsuleOf, type CompletedCapsule } from '../completed-capsule.js';
import { exchangeOf, namesOf } from '../exchange-deps.js';

export interface PublicationCleanupOutput extends StepOutput {
  /** What the cleanup proved (the predecessor's and the stage's absence together); absent when the step did not act. */
  drop?: DropStatus;
}

type PredecessorProof = 'ABSENT_PROVED' | 'NOT_OURS' | 'ABSENCE_UNPROVABLE';

/**
 * ClickHouse publication, the last step (SUCCEEDED → CUSTODY_RELEASED:
 * docs/rules.md#evidence-before-checkpoint, docs/rules.md#successors-and-replay-window): only
 * after governance is COMPLETE (the checkpoint's gate got the journal to SUCCEEDED), drop what
 * the operation no longer needs and release the slot with the capsule retired:
 *
 * 1. the predecessor P (the dispatch fact's UUID), after the EXCHANGE under the candidate's
 *    name — or under the tombstone name, when reconcile's fence RENAME landed after a late
 *    EXCHANGE (docs/rules.md#exchange-observation: the predecessor is then wherever UUID P is; found by the
 *    scheduler: publication seed 2087) — dropped by exact UUID at
 *    `publication.predecessor.drop` (rechecked under each name; never anything else), then
 *    its absence proved by UUID (`uuidAbsence`: no table of P anywhere, and the database's
 *    metadata visible). An unknown DROP outcome is decided by that observation, never by a
 *    second DROP in the same call;
 * 2. the stage (load table), by `target.dropStaging` (exact object id + owner marker, drop,
 *    absence proof);
 * 3. ONE transaction at `delivery.custody.release`: SUCCEEDED → CUSTODY_RELEASED with the
 *    stage's absence fact, custody released, and the capsule leg — `retiredAt` and
 *    `replay.windowEndsAt = completion.at + replay_window_days` — conditioned on the
 *    capsule version read (COMPLETE, evidence recorded, no reader, not yet retired:
 *    `assertRetirable`).
 *
 * The published generation C under the target name is never touched. A name holding
 * another object (P's name or the stage's) is contradicting evidence: SUCCEEDED →
 * INCIDENT_RETAINED, custody kept. Absence not provable (metadata not visible, or P still
 * exists under another name): state SUCCEEDED, custody kept, the output's `drop` says so
 * (the flow stops with Delivery.CleanupUnproved). Repeat-safe: a re-run after a crash finds
 * P and the stage gone, proves it, and releases.
 */
async function cleanupPublicationOnce(input: unknown, deps: DeliveryDeps): Promise<PublicationCleanupOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state !== 'SUCCEEDED') return output(step, record, false);
  const dispatch = record.facts.dispatch;
  if (!dispatch)
    throw new TransitionPreconditionError(
      `invocation ${record.invocationId} has no dispatch recorded: not an exchange publication`,
    );
  exchangeOf(deps); // a route that is not an exchange publication is refused before anything
  let capsule: CompletedCapsule;
  try {
    capsule = await completedCapsuleOf(deps, ref);
    assertRetirable(capsule);
  } catch (error) {
    // A duplicate of this step (its Task retried while the first invocation still ran) may
    // have released custody and retired the capsule between the record's read and this one:
    // the journal decides.
    const current = await readInvocation(deps.ports, ref);
    if (current.state !== 'SUCCEEDED') return output(step, current, false);
    throw error;
  }
  const custody = await heldCustody();
  const names = namesOf(record.invocationId, deps);
  const incident = async (why: string): Promise<PublicationCleanupOutput> => {
    const result = await transition(deps.ports, ref, {
      from: 'SUCCEEDED',
      to: 'INCIDENT_RETAINED',
      fence: step.fence,
      transitionId: transitionIdOf(why, record.invocationId),
      known: { invocation: record, custody },
    });
    return { ...output(step, result.invocation, !result.alreadyApplied, custody), drop: 'NOT_OURS' };
  };

  const predecessor = await dropPredecessor(
    deps,
    names.database,
    [names.candidate, names.tombstone],
    dispatch.predecessorUuid,
  );
  if (predecessor === 'NOT_OURS') return incident('cleanup-predecessor-not-ours');
  if (predecessor === 'ABSENCE_UNPROVABLE') return { ...output(step, record, true, custody), drop: predecessor };

  const staging = stagingRefOf(record);
  const stage = await deps.target.dropStaging(staging);
  if (stage.status === 'NOT_OURS') return incident('cleanup-not-ours');
  if (stage.status !== 'ABSENT_PROVED') return { ...output(step, record, true, custody), drop: stage.status };

  const at = deps.ports.clock.now().toISOString();
  const windowEndsAt = windowEndOf(capsule.completion.at, routeGovernanceOf(deps.route).replayWindowDays);
  const result = await releaseCustody(deps.ports, ref, {
    from: 'SUCCEEDED',
    to: 'CUSTODY_RELEASED',
    fence: step.fence,
    transitionId: transitionIdOf('release', record.invocationId),
    // The journal's rule for CUSTODY_RELEASED: the stage gone, P proved gone, the capsule retired (by the leg below, at `at`).
    patch: {
      absence: { table: staging.table, objectId: staging.objectId },
      publicationCleanup: { predecessorUuid: dispatch.predecessorUuid, capsuleRetiredAt: at },
    },
    known: { invocation: record, custody },
    legs: [capsuleUpdateLeg(ref, capsule, { retiredAt: at, replay: { ...capsule.replay, windowEndsAt } })],
  });
  // Custody is released: the output carries no journal state.
  return { ...output(forRerun(step), result.invocation, !result.alreadyApplied), drop: 'ABSENT_PROVED' };
}

/**
 * P under one of our names (the candidate's, or the tombstone's after a fence RENAME that
 * followed a late EXCHANGE): dropped by exact UUID under whichever holds it, then proved
 * absent by UUID. A name of ours holding another UUID is NOT_OURS (left untouched). A DROP
 * whose outcome is unknown (or refused) is not repeated here: the observation decides, and
 * what it cannot prove is left for a re-run of the step.
 */
async function dropPredecessor(
  deps: DeliveryDeps,
  database: string,
  names: readonly string[],
  uuid: string,
): Promise<PredecessorProof> {
  const exchange = exchangeOf(deps);
  for (const name of names) {
    try {
      if ((await exchange.dropByUuid({ database, name, uuid })) === 'NOT_OURS') return 'NOT_OURS';
    } catch (error) {
      if (!(error instanceof OutcomeUnknownError) && !(error instanceof EffectFailedError)) throw error;
    }
  }
  const absence = await exchange.uuidAbsence(database, uuid);
  return absence.absent && absence.metadataVisible ? 'ABSENT_PROVED' : 'ABSENCE_UNPROVABLE';
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const cleanupPublication = rereadOnStale(cleanupPublicationOnce);
