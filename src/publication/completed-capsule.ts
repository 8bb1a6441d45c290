import type { DeliveryDeps } from '../delivery/deps.js';
import type { InvocationRef } from '../delivery/journal/keys.js';
import type { CapsuleV2, EvidenceRef } from '../domain/quality/capsule.js';
import { completionWitnessOf } from '../domain/quality/evidence.js';
import {
  CapsuleVersionUnsupportedError,
  CompletionEvidencePendingError,
  EvidenceInvalidError,
  QualityFailedError,
  ReaderGuardHeldError,
  TargetPendingError,
} from '../domain/quality/errors.js';
import { readCapsule } from '../quality/capsule-store.js';
import { fetchEvidence } from '../quality/evidence.js';

/** A v2 capsule that is COMPLETE with its completion evidence recorded and no reader guard. */
export type CompletedCapsule = CapsuleV2 & { state: 'COMPLETE'; completion: NonNullable<CapsuleV2['completion']> & { evidence: EvidenceRef } };

/** True on a ClickHouse exchange route: its publication is governed by the capsule (seed 000). */
export function isExchangeRoute(deps: Pick<DeliveryDeps, 'route'>): boolean {
  return deps.route.route.target.mode === 'exchange';
}

/**
 * The governance gate of everything after PUBLISHED on an exchange route (seed 000 N1: a
 * successful publication is not successful governance; spec §3.1 PUBLISHED → SUCCEEDED
 * requires COMPLETE, I10): the operation's capsule as read now, refused unless it is v2,
 * COMPLETE, its completion evidence recorded and no reader holding it. With
 * `verifyEvidence`, the completion document itself is read and must be valid under the
 * recorded SHA-256 (missing, malformed or unreadable evidence is never a pass, N2).
 * Every refusal is a Quality.* error and nothing is written; the caller conditions its
 * write on the returned capsule's version (capsule-store.ts `capsuleCheckLeg`).
 */
export async function completedCapsuleOf(deps: Pick<DeliveryDeps, 'ports'>, ref: InvocationRef, options: { verifyEvidence?: boolean } = {}): Promise<CompletedCapsule> {
  const capsule = await readCapsule(deps.ports, ref);
  if (capsule === undefined) throw new EvidenceInvalidError('missing', `operation ${ref.invocationId} has no quality capsule: governance never started`);
  if (capsule.schema !== 2) throw new CapsuleVersionUnsupportedError(`operation ${ref.invocationId} has a v${capsule.schema} capsule: it governs no target observation`);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (capsule.state === 'FAILED') throw new QualityFailedError();
  if (capsule.state !== 'COMPLETE') throw new TargetPendingError(`operation ${ref.invocationId}: target quality is ${capsule.state}, not COMPLETE`);
  const evidence = capsule.completion?.evidence;
  if (capsule.completion === undefined || evidence === undefined) throw new CompletionEvidencePendingError();
  if (options.verifyEvidence === true) {
    const witness = completionWitnessOf(await fetchEvidence(deps.ports.objects, evidence.key), evidence.sha256, capsule.coreDigest);
    if (witness.evidence !== 'valid') throw new EvidenceInvalidError(witness.evidence, `operation ${ref.invocationId}: completion evidence is ${witness.evidence}`);
  }
  return capsule as CompletedCapsule;
}
