import { qualityEvidenceKeyOf } from '../domain/delivery/identifiers.js';
import type { AuthorityBreak } from '../domain/quality/actions.js';
import type { CapsuleV2, StoredCapsule } from '../domain/quality/capsule.js';
import {
  checkContinuity,
  compareAuthorityBindingDigest,
  continuityError,
  type CompletionWitness,
  type Continuity,
} from '../domain/quality/continuity.js';
import type { AuthorityBinding } from '../domain/quality/core.js';
import { AuthorityReplacedError } from '../domain/quality/errors.js';
import { completionWitnessOf } from '../domain/quality/evidence.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { capsuleCheckLeg, readCapsule, type CapsuleRef } from './capsule-store.js';
import { fetchEvidence } from './evidence.js';

/**
 * The one continuity check of every path that reads a capsule to act on it (resume's
 * custody condition, evidence, checkpoint, cleanup, observe, replay, a successor's begin)
 * or to show it (inspect, diagnose). A restore of the authority table puts the capsule
 * item back at an older version — and, with it, an older state — while the evidence
 * objects in S3 stay where they were: what the store now says is checked against them
 * before anything acts on it (docs/rules.md#version-continuity).
 *
 * - the completion witness: `completion.json` under the operation's deterministic key (the
 *   recorded key and SHA-256 when the capsule records it; otherwise its shape and core);
 * - continuity (`checkContinuity`): a completion version above the item's version, or a
 *   completion document while the item is not COMPLETE, is an observed rollback;
 * - replacement: the authority table now is the one the core was sealed on (DescribeTable
 *   against the capsule's sealed binding digest).
 *
 * A rollback or a replaced table is refused (Quality.AuthorityRollback /
 * Quality.AuthorityReplaced) before the caller writes anything: a path that wrote the
 * capsule would lift its version back over the completion version and erase the only sign
 * of the rollback. What else the result means is the caller's to decide
 * (`requireCompleted`: only `ok` continues past COMPLETE).
 */

export interface ContinuityRef extends CapsuleRef {
  /** The route the operation sealed: names its evidence keys. */
  route: string;
}

export interface CheckedCapsule {
  capsule: CapsuleV2;
  continuity: Continuity;
}

/** completion.json as classified for the continuity rule; found but not recorded is checked for shape and core only. */
export async function completionWitnessFor(
  ports: Pick<Ports, 'objects'>,
  route: string,
  invocationId: string,
  capsule: CapsuleV2,
): Promise<CompletionWitness> {
  const recorded = capsule.completion?.evidence;
  const read = await fetchEvidence(
    ports.objects,
    recorded?.key ?? qualityEvidenceKeyOf(route, invocationId, 'completion'),
  );
  return completionWitnessOf(read, recorded?.sha256 ?? null, capsule.coreDigest);
}

/** The continuity rule on one capsule as read and its witness. */
export function continuityOf(capsule: CapsuleV2, witness: CompletionWitness): Continuity {
  return checkContinuity({
    completion: witness,
    observedVersion: capsule.version,
    capsuleState: capsule.state,
    ...(capsule.completion
      ? {
          itemCompletion: {
            version: capsule.completion.version,
            evidenceRecorded: capsule.completion.evidence !== undefined,
          },
        }
      : {}),
  });
}

/**
 * The check above as a finding, for the read-only views (quality inspect, and delivery
 * inspect through the CLI's composition): `rollback` when the capsule is not continuous
 * with its completion witness, `replaced` when the authority table is another one
 * (`binding`: DescribeTable, once per command); with the witness it read.
 */
export async function authorityBreakOf(
  ports: Pick<Ports, 'objects'>,
  ref: ContinuityRef,
  capsule: CapsuleV2,
  binding: () => Promise<AuthorityBinding>,
): Promise<{ witness: CompletionWitness; authority?: AuthorityBreak }> {
  const witness = await completionWitnessFor(ports, ref.route, ref.invocationId, capsule);
  if (continuityOf(capsule, witness).continuity === 'rollback') return { witness, authority: 'rollback' };
  if (compareAuthorityBindingDigest(capsule.digests.authorityBinding, await binding()) === 'replaced')
    return { witness, authority: 'replaced' };
  return { witness };
}

/** The check above on a capsule already read; refuses a rollback or a replaced authority table. */
export async function checkCapsule(
  ports: Pick<Ports, 'objects' | 'authority'>,
  ref: ContinuityRef,
  capsule: CapsuleV2,
): Promise<CheckedCapsule> {
  const continuity = continuityOf(capsule, await completionWitnessFor(ports, ref.route, ref.invocationId, capsule));
  if (continuity.continuity === 'rollback') throw continuityError(continuity);
  if (
    compareAuthorityBindingDigest(capsule.digests.authorityBinding, await ports.authority.describeBinding()) !== 'match'
  )
    throw new AuthorityReplacedError();
  return { capsule, continuity };
}

/** The capsule as read now, checked when it is v2 (an absent or v1 capsule is returned as read: the callers' rules for those apply). */
export async function readCheckedCapsule(
  ports: Pick<Ports, 'objects' | 'authority'>,
  ref: ContinuityRef,
): Promise<StoredCapsule | undefined> {
  const capsule = await readCapsule(ports, ref);
  if (capsule === undefined || capsule.schema !== 2) return capsule;
  return (await checkCapsule(ports, ref, capsule)).capsule;
}

/**
 * An operator's custody takeover condition (observe, resume): the capsule as read now and
 * checked, held at that version in the custody transaction, so a run that acquires the
 * reader guard in between makes the takeover fail instead of being fenced out (found by the
 * deterministic scheduler, publication schedule 47), and a rolled-back capsule is refused
 * before custody moves. The caller refuses a guard already held; no capsule, no leg.
 */
export async function capsuleAsRead(
  ports: Pick<Ports, 'objects' | 'authority'>,
  ref: ContinuityRef,
): Promise<{ capsule: StoredCapsule | undefined; legs: TransactionLeg[] }> {
  const capsule = await readCheckedCapsule(ports, ref);
  return { capsule, legs: capsule ? [capsuleCheckLeg(ref, capsule)] : [] };
}

/** Past COMPLETE only continuity `ok` continues: a pending, missing, malformed or unreadable witness is refused with its code. */
export function requireCompleted(checked: CheckedCapsule): CapsuleV2 {
  const error = continuityError(checked.continuity);
  if (error) throw error;
  return checked.capsule;
}
