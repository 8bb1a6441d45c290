import { randomUUID } from 'node:crypto';
import { rereadOnStale } from '../../delivery/steps/carried.js';
import {
  loadForStep,
  output,
  ownerBindingOf,
  parseStepInput,
  transitionIdOf,
  type StepOutput,
} from '../../delivery/steps/common.js';
import type { DeliveryDeps } from '../../delivery/deps.js';
import { TransitionPreconditionError } from '../../delivery/journal/errors.js';
import { transition } from '../../delivery/journal/transition.js';
import { structured } from '../../domain/clickhouse-errors.js';
import { candidateMarkerOf } from '../../domain/publication/candidate.js';
import { PUBLICATION_CUT_POINTS } from '../../domain/publication/cut-points.js';
import { CutpointError, EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import { runIdOf } from '../../quality/admission.js';
import { capsuleCheckLeg, readCapsule } from '../../quality/capsule-store.js';
import { exchangeOf, namesOf } from '../exchange-deps.js';
import { recordObservation, type PublicationObserved } from '../observe-publication.js';

export interface DispatchOutput extends StepOutput {
  /** What the observation after (or instead of) the EXCHANGE proved; absent when the step did nothing. */
  observed?: PublicationObserved;
}

/**
 * ClickHouse publication: the ONE EXCHANGE of the operation (docs/rules.md#exchange-publication, N3).
 *
 * VERIFIED_EOF with the capsule PREPARED and no reader guard: read P (the UUID under the
 * target name) and check the candidate is exactly ours and still holds exactly the journaled
 * fill (count and digest: rows a late fill or a foreign writer added would be published
 * unjudged by the staged probes → INCIDENT_RETAINED), then journal the DISPATCH INTENT —
 * VERIFIED_EOF → PUBLICATION_UNKNOWN with the fact `dispatch {count: 1, P, C, run}`, the
 * capsule held at the version read — BEFORE the EXCHANGE. Only the call that applied the
 * intent sends it: the intent's transition id carries a nonce of this call, so its claim is
 * found again only by this call's own lost-response resolution; a retried Lambda, a resume,
 * reconcile or replay never matches it and never sends an EXCHANGE (a crash after the intent
 * leaves an operation nobody may dispatch: reconcile fences it). Whatever the EXCHANGE
 * answers (done, refused, unknown), one observation by UUID decides: COMMIT_PROVEN →
 * PUBLISHED; CONTRADICTED → INCIDENT_RETAINED; anything else stays PUBLICATION_UNKNOWN for
 * reconcile (the flow stops with Delivery.NeedsRecovery).
 *
 * PUBLICATION_UNKNOWN (a re-run, or resume): observe only — never an EXCHANGE.
 */
async function dispatchOnce(input: unknown, deps: DeliveryDeps): Promise<DispatchOutput> {
  const step = parseStepInput(input);
  const { record, ref, custody: heldCustody } = await loadForStep(step, deps);
  if (record.state === 'PUBLICATION_UNKNOWN' && record.facts.dispatch) {
    const custody = await heldCustody();
    const { result, observed } = await recordObservation(deps, record, step.fence, custody);
    return {
      ...output(step, result?.invocation ?? record, result !== undefined && !result.alreadyApplied, custody),
      observed,
    };
  }
  if (record.state !== 'VERIFIED_EOF') return output(step, record, false);
  // I1: one dispatch per operation, ever. A journal that went back to VERIFIED_EOF after a
  // dispatch (no exchange path does; a foreign writer might) is never dispatched again.
  if (record.facts.dispatch)
    throw new TransitionPreconditionError(
      `invocation ${record.invocationId} was dispatched once already; it is never dispatched again`,
    );
  const candidate = record.facts.candidate;
  const capsule = await readCapsule(deps.ports, ref);
  if (!candidate || !capsule)
    throw new TransitionPreconditionError(`invocation ${record.invocationId} has no prepared capsule to dispatch`);
  if (
    capsule.schema !== 2 ||
    capsule.state !== 'PREPARED' ||
    capsule.reader !== undefined ||
    capsule.generation.candidateUuid !== candidate.uuid
  ) {
    throw new TransitionPreconditionError(
      `invocation ${record.invocationId}: the capsule is not PREPARED for this candidate with no reader`,
    );
  }
  const exchange = exchangeOf(deps);
  const custody = await heldCustody();
  const names = namesOf(record.invocationId, deps);
  const marker = candidateMarkerOf(record.invocationId, ownerBindingOf(record.sealed));
  const before = await exchange.observeTables(names);
  const onTarget = before.find((t) => t.name === names.target);
  const onCandidate = before.find((t) => t.name === names.candidate);
  if (!onTarget)
    throw new CutpointError(
      'Cutpoint.TargetObjectMissing',
      'delivery.target_object_missing',
      `target table ${names.database}.${names.target} does not exist`,
    );
  // The candidate must still hold exactly the fill the staged probes judged: a late fill
  // (zombie or duplicate execution) that got past the fill's own checks is a contradiction.
  const identical =
    onCandidate?.uuid === candidate.uuid && onCandidate.comment === marker && onTarget.uuid !== candidate.uuid;
  const contents = identical ? await exchange.candidateContents({ names, uuid: candidate.uuid, marker }) : undefined;
  if (!identical || contents?.rows !== candidate.rows || contents.digest !== candidate.digest) {
    const incident = await transition(deps.ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'INCIDENT_RETAINED',
      fence: step.fence,
      transitionId: transitionIdOf('dispatch-contradicted', record.invocationId),
      known: { invocation: record, custody },
    });
    return output(step, incident.invocation, !incident.alreadyApplied, custody);
  }
  const intent = await transition(deps.ports, ref, {
    from: 'VERIFIED_EOF',
    to: 'PUBLICATION_UNKNOWN',
    fence: step.fence,
    transitionId: `${transitionIdOf('dispatch', record.invocationId)}:${randomUUID()}`,
    patch: {
      dispatch: {
        count: 1,
        predecessorUuid: onTarget.uuid,
        candidateUuid: candidate.uuid,
        runId: runIdOf(step.fence.session),
      },
    },
    known: { invocation: record, custody },
    legs: [capsuleCheckLeg(ref, capsule)],
    cutPoint: PUBLICATION_CUT_POINTS.dispatchIntent,
  });
  try {
    await exchange.exchange(names);
  } catch (error) {
    // Refused, unknown or a Keeper error alike: never retried; the observation below decides.
    if (!(error instanceof OutcomeUnknownError) && !(error instanceof EffectFailedError) && !structured(error))
      throw error;
  }
  const { result, observed } = await recordObservation(deps, intent.invocation, step.fence, custody);
  return { ...output(step, result?.invocation ?? intent.invocation, true, custody), observed };
}

/** The step, deciding again from the journal when it refused or did nothing on a carried state (steps/carried.ts). */
export const dispatch = rereadOnStale(dispatchOnce);
