import { transitionIdOf } from '../delivery/steps/common.js';
import type { Known } from '../delivery/journal/journaled-write.js';
import { recordFacts } from '../delivery/journal/transition.js';
import { qualityEvidenceKeyOf } from '../domain/delivery/identifiers.js';
import type { Fence } from '../domain/fence.js';
import type { Ports } from '../ports/index.js';
import type { CapsuleV2 } from '../domain/quality/capsule.js';
import { completionDocument, type PreparedDocument } from '../domain/quality/evidence.js';
import { IllegalCapsuleTransitionError } from '../domain/quality/errors.js';
import { capsuleUpdateLeg, readCapsule, type CapsuleRef } from './capsule-store.js';
import { QUALITY_CUT_POINTS } from '../domain/quality/cut-points.js';
import { putEvidence } from './evidence.js';

/**
 * docs/rules.md#governance-cut-points `quality.completion.put` and `quality.completion.record`:
 * once the capsule is COMPLETE, its independent witness `completion.json` is written
 * (deterministic bytes from the capsule's completion record and the original probes, every one
 * PASSED), then its evidence fact `{key, sha256}` is recorded on the capsule. A crash between
 * the two is repaired by running this again: the same bytes (`putEvidence` reuses an identical
 * object; another SHA under the key is an identity conflict, never success), then the record.
 * Once the fact is recorded nothing is written again.
 */
export async function recordCompletionEvidence(
  ports: Ports,
  ref: CapsuleRef & { route: string },
  prepared: PreparedDocument,
  write: { fence: Fence; known?: Known },
): Promise<{ written: boolean; capsule: CapsuleV2 }> {
  const capsule = await readCapsule(ports, ref);
  if (!capsule || capsule.schema !== 2 || capsule.state !== 'COMPLETE' || !capsule.completion) {
    throw new IllegalCapsuleTransitionError(capsule?.state ?? '(absent)', 'completion evidence');
  }
  if (capsule.completion.evidence) return { written: false, capsule };
  const { version, at, runId } = capsule.completion;
  const document = completionDocument({
    invocationId: ref.invocationId,
    coreDigest: capsule.coreDigest,
    candidateUuid: capsule.generation.candidateUuid,
    version,
    at,
    runId,
    results: prepared.plan.probes.map((p) => ({ name: p.name, result: 'PASSED' as const })),
  }).document;
  const key = qualityEvidenceKeyOf(ref.route, ref.invocationId, 'completion');
  const put = await putEvidence(ports.objects, QUALITY_CUT_POINTS.completionPut, key, document, ref.invocationId);
  await recordFacts(ports, ref, {
    state: 'PUBLISHED',
    fence: write.fence,
    transitionId: transitionIdOf('quality-completion-record', ref.invocationId),
    patch: {},
    cutPoint: QUALITY_CUT_POINTS.completionRecord,
    ...(write.known ? { known: write.known } : {}),
    legs: [
      capsuleUpdateLeg(ref, capsule, { completion: { version, at, runId, evidence: { key, sha256: put.sha256 } } }),
    ],
  });
  const recorded = await readCapsule(ports, ref);
  return { written: true, capsule: recorded as CapsuleV2 };
}
