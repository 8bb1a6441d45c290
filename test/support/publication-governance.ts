import { expect } from 'vitest';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import type { StepInput } from '../../src/delivery/steps/common.js';
import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { completionDocument } from '../../src/domain/quality/evidence.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { putEvidence } from '../../src/quality/evidence.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { stepsThrough } from './delivery-steps.js';
import { newInvocationId } from './delivery-world.js';
import { publicationManifest, type PublicationWorld } from './publication-world.js';

/**
 * Governance after the dispatch, for the publication-cleanup tests: an operation brought to
 * PUBLISHED on the publication world, and the TEST SEAMS that stand in for observe (another
 * slice): raw capsule writes through the authority store's update.
 */

export const DAY_MS = 86_400_000;
export const fresh = (begun: StepInput): StepInput => ({ ...begun, known: null });
export const stageName = (id: string): string => `cutpoint_stg_${id.slice(4, 24)}`;
export type Ref = { targetId: string; invocationId: string };

/** One operation on a new `pub.<table>` through PrepareCapsule (candidate filled, capsule PREPARED, nothing dispatched). */
export async function preparedOperation(world: PublicationWorld, table: string, create = true) {
  if (create) await world.createTarget(table);
  const manifestText = publicationManifest({ table });
  const deps = world.deps(manifestText);
  const begun = await begin(world.beginInput(newInvocationId(), manifestText), deps);
  await stepsThrough(begun, deps);
  await fillCandidate(begun, deps);
  const predecessor = await world.uuidOf(table);
  await prepareCapsule(fresh(begun), deps);
  const ref: Ref = { targetId: begun.targetId, invocationId: begun.invocationId };
  return { deps, begun, ref, table, predecessor: predecessor!, manifestText };
}

/** One operation on `pub.<table>` through the dispatch: PUBLISHED, capsule PREPARED. `create` makes the table first. */
export async function published(world: PublicationWorld, table: string, create = true) {
  const op = await preparedOperation(world, table, create);
  expect(await dispatch(fresh(op.begun), op.deps)).toMatchObject({ state: 'PUBLISHED', observed: 'COMMIT_PROVEN' });
  return { ...op, begun: fresh(op.begun) };
}

/** One operation through evidence and checkpoint (capsule COMPLETE by the observe seam): SUCCEEDED, custody held. */
export async function succeeded(world: PublicationWorld, table: string, create = true) {
  const op = await published(world, table, create);
  await completeByObserveSeam(op.deps, op.ref);
  await persistEvidence(op.begun, op.deps);
  expect(await checkpoint(fresh(op.begun), op.deps)).toMatchObject({ state: 'SUCCEEDED' });
  return op;
}

/**
 * TEST SEAM standing in for observe (written by another slice): the capsule is brought to
 * COMPLETE by a raw authority update of the version read — completion.json written first
 * with the domain's completionDocument, then {state COMPLETE, completion {version v+1, at,
 * runId, evidence}} — exactly what observe's COMPLETE + completion record leave.
 */
export async function completeByObserveSeam(
  deps: DeliveryDeps,
  ref: Ref,
  at = new Date().toISOString(),
): Promise<CapsuleV2> {
  const capsule = (await readCapsule(deps.ports, ref)) as CapsuleV2;
  const version = capsule.version + 1;
  const runId = capsule.runs.originalRunId;
  const { document, sha256 } = completionDocument({
    invocationId: ref.invocationId,
    coreDigest: capsule.coreDigest,
    candidateUuid: capsule.generation.candidateUuid,
    version,
    at,
    runId,
    results: [{ name: 'row_count', result: 'PASSED' }],
  });
  const key = qualityEvidenceKeyOf(deps.route.name, ref.invocationId, 'completion');
  await putEvidence(deps.ports.objects, QUALITY_CUT_POINTS.completionPut, key, document, ref.invocationId);
  await rawUpdate(deps, ref, capsule.version, {
    state: 'COMPLETE',
    lastObservation: { runId, outcome: 'COMPLETE', at, remoteTermination: 'not_applicable' },
    completion: { version, at, runId, evidence: { key, sha256 } },
  });
  return (await readCapsule(deps.ports, ref)) as CapsuleV2;
}

/** TEST SEAM: a raw capsule write (observe's other outcomes, or an older writer's state). */
export async function rawUpdate(
  deps: DeliveryDeps,
  ref: Ref,
  version: number,
  set: Record<string, unknown>,
): Promise<void> {
  const outcome = await deps.ports.authority.update(
    QUALITY_CUT_POINTS.completeCommit,
    qualityKeys.capsule(ref.targetId, ref.invocationId),
    { version },
    set,
  );
  expect(outcome.status).toBe('APPLIED');
}

export async function pendingBySeam(deps: DeliveryDeps, ref: Ref): Promise<void> {
  const capsule = (await readCapsule(deps.ports, ref)) as CapsuleV2;
  const at = new Date().toISOString();
  await rawUpdate(deps, ref, capsule.version, {
    state: 'TARGET_PENDING',
    lastObservation: {
      runId: capsule.runs.originalRunId,
      outcome: 'TARGET_PENDING',
      at,
      remoteTermination: 'UNVERIFIED',
      errorClass: 'timeout',
    },
  });
}

export async function failedBySeam(deps: DeliveryDeps, ref: Ref): Promise<void> {
  const capsule = (await readCapsule(deps.ports, ref)) as CapsuleV2;
  const at = new Date().toISOString();
  const runId = capsule.runs.originalRunId;
  await rawUpdate(deps, ref, capsule.version, {
    state: 'FAILED',
    lastObservation: { runId, outcome: 'FAILED', at, remoteTermination: 'not_applicable' },
    failure: { probes: ['row_count'], at, runId },
  });
}
