import type { DeliveryDeps } from '../delivery/deps.js';
import type { InvocationRef } from '../delivery/journal/keys.js';
import type { PublicationGovernance } from '../delivery/publication-mode.js';
import type { CapsuleV2, EvidenceRef } from '../domain/quality/capsule.js';
import {
  CapsuleVersionUnsupportedError,
  CompletionEvidencePendingError,
  EvidenceInvalidError,
  QualityFailedError,
  ReaderGuardHeldError,
  TargetPendingError,
} from '../domain/quality/errors.js';
import { capsuleCheckLeg, readCapsule } from '../quality/capsule-store.js';
import { checkCapsule, requireCompleted } from '../quality/capsule-continuity.js';

/** A v2 capsule that is COMPLETE with its completion evidence recorded and no reader guard. */
export type CompletedCapsule = CapsuleV2 & {
  state: 'COMPLETE';
  completion: NonNullable<CapsuleV2['completion']> & { evidence: EvidenceRef };
};

/**
 * The governance gate of everything after PUBLISHED on an exchange route
 * (docs/rules.md#governance-vs-publication, N1: a successful publication is not successful
 * governance; PUBLISHED → SUCCEEDED requires COMPLETE): the operation's capsule as read now,
 * refused unless it is v2, COMPLETE, its completion evidence recorded, no reader holding it,
 * and its continuity proved (src/quality/capsule-continuity.ts: the completion document read
 * and verified under the recorded SHA-256, its version not above the item's, the authority
 * table the sealed one). Missing, malformed or unreadable evidence is never a pass; a
 * rolled-back capsule is Quality.AuthorityRollback. Every refusal is a Quality.* error and
 * nothing is written; the caller conditions its write on the returned capsule's version
 * (capsule-store.ts `capsuleCheckLeg`), so a capsule restored after this read fails that write.
 */
export async function completedCapsuleOf(
  deps: Pick<DeliveryDeps, 'ports' | 'route'>,
  ref: InvocationRef,
): Promise<CompletedCapsule> {
  const capsule = await readCapsule(deps.ports, ref);
  if (capsule === undefined)
    throw new EvidenceInvalidError(
      'missing',
      `operation ${ref.invocationId} has no quality capsule: governance never started`,
    );
  if (capsule.schema !== 2)
    throw new CapsuleVersionUnsupportedError(
      `operation ${ref.invocationId} has a v${capsule.schema} capsule: it governs no target observation`,
    );
  // Continuity first: a restored item says nothing true about its guard or state.
  const checked = await checkCapsule(deps.ports, { ...ref, route: deps.route.name }, capsule);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (capsule.state === 'FAILED') throw new QualityFailedError();
  if (capsule.state !== 'COMPLETE')
    throw new TargetPendingError(`operation ${ref.invocationId}: target quality is ${capsule.state}, not COMPLETE`);
  if (capsule.completion?.evidence === undefined) throw new CompletionEvidencePendingError();
  return requireCompleted(checked) as CompletedCapsule;
}

/**
 * The exchange mode's governance gate of evidence and checkpoint (docs/publication.md 'ClickHouse publication and quality governance'): the
 * COMPLETE capsule above, held at the version read by the write's leg, and its core and
 * completion witness in the evidence document.
 */
export async function capsuleGovernance(
  deps: Pick<DeliveryDeps, 'ports' | 'route'>,
  ref: InvocationRef,
): Promise<PublicationGovernance> {
  const capsule = await completedCapsuleOf(deps, ref);
  return {
    legs: [capsuleCheckLeg(ref, capsule)],
    evidence: {
      quality: {
        capsule_version: 2,
        core_digest: capsule.coreDigest,
        completion: {
          version: capsule.completion.version,
          key: capsule.completion.evidence.key,
          sha256: capsule.completion.evidence.sha256,
        },
      },
    },
  };
}
