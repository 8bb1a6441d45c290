import type { CutpointError } from '../errors.js';
import type { CapsuleState } from './capsule.js';
import { authorityBindingDigest, type AuthorityBinding } from './core.js';
import {
  AuthorityReplacedError,
  AuthorityRollbackError,
  CompletionEvidencePendingError,
  EvidenceInvalidError,
  type InvalidEvidenceClass,
} from './errors.js';
import { malformed } from './shape.js';

/**
 * Version continuity (docs/rules.md#version-continuity, N17) and authority binding
 * (docs/rules.md#authority-binding, N18), as pure rules.
 *
 * The capsule item is the authority row; `observedVersion` (v_o) is its version read now.
 * The completion version (v_c) comes from the immutable completion.json witness: a store
 * restore rolls back the item (and its journal) but not the object. v_c > v_o, or a
 * completion document while the item is no longer COMPLETE, is an observed rollback.
 * Limits (N17): a restore with an equal or higher version is NOT detected, and deleting
 * the witness together with the item makes the evidence `missing` (a refusal, not a pass).
 */

/**
 * What the completion.json read gave, classified per docs/rules.md#quality-evidence; `version`
 * only from a valid document.
 */
export type CompletionWitness = { evidence: 'valid'; version: number } | { evidence: InvalidEvidenceClass };

export interface ContinuityInput {
  completion: CompletionWitness;
  /** v_o: the capsule item's version from a consistent read. */
  observedVersion: number;
  /** The capsule state from the same read. */
  capsuleState: CapsuleState;
  /** `capsule.completion` from the same read, when present. */
  itemCompletion?: { version: number; evidenceRecorded: boolean };
}

export type ContinuityCode =
  | 'quality.authority_version_rollback'
  | 'quality.evidence_missing'
  | 'quality.evidence_malformed'
  | 'quality.evidence_unreadable'
  | 'quality.completion_evidence_pending';

export type Continuity =
  /** A valid witness with v_c ≤ v_o on a COMPLETE item: replay/resume may continue. */
  | { continuity: 'ok'; completionVersion: number; observedVersion: number }
  /** No completion anywhere and the item not COMPLETE: nothing to compare (observe may proceed). */
  | { continuity: 'not_completed'; observedVersion: number }
  | {
      continuity: 'rollback';
      reason: 'version' | 'state';
      completionVersion: number;
      observedVersion: number;
      code: 'quality.authority_version_rollback';
    }
  /** Continuity cannot be proven: never ok (N2). */
  | { continuity: 'unknown'; code: Exclude<ContinuityCode, 'quality.authority_version_rollback'> };

export function checkContinuity(input: ContinuityInput): Continuity {
  const { completion, observedVersion, capsuleState, itemCompletion } = input;
  if (!Number.isSafeInteger(observedVersion) || observedVersion < 1)
    throw malformed('capsule.version', 'expected a positive integer');
  // The item's own completion record names a version the item has not reached: the row was
  // put back below its completion (whatever the witness says; a deleted witness included).
  if (itemCompletion !== undefined && itemCompletion.version > observedVersion) {
    return {
      continuity: 'rollback',
      reason: 'version',
      completionVersion: itemCompletion.version,
      observedVersion,
      code: 'quality.authority_version_rollback',
    };
  }
  if (completion.evidence === 'valid') {
    const v = completion.version;
    if (!Number.isSafeInteger(v) || v < 1) throw malformed('completion.version', 'expected a positive integer');
    const rollback = (reason: 'version' | 'state') =>
      ({
        continuity: 'rollback',
        reason,
        completionVersion: v,
        observedVersion,
        code: 'quality.authority_version_rollback',
      }) as const;
    if (v > observedVersion) return rollback('version');
    if (capsuleState !== 'COMPLETE') return rollback('state');
    // The witness and the item name different completions: contradicting evidence, never ok.
    if (itemCompletion === undefined || itemCompletion.version !== v)
      return { continuity: 'unknown', code: 'quality.evidence_malformed' };
    return { continuity: 'ok', completionVersion: v, observedVersion };
  }
  if (completion.evidence === 'missing') {
    if (capsuleState !== 'COMPLETE') return { continuity: 'not_completed', observedVersion };
    // Cut point quality.completion.put: COMPLETE, document not yet written, fact not recorded.
    if (itemCompletion !== undefined && !itemCompletion.evidenceRecorded)
      return { continuity: 'unknown', code: 'quality.completion_evidence_pending' };
    return { continuity: 'unknown', code: 'quality.evidence_missing' };
  }
  return { continuity: 'unknown', code: `quality.evidence_${completion.evidence}` };
}

/** The diagnose label: ok | rollback | unknown (not_completed has nothing to compare: unknown). */
export function continuityLabel(result: Continuity): 'ok' | 'rollback' | 'unknown' {
  return result.continuity === 'ok' || result.continuity === 'rollback' ? result.continuity : 'unknown';
}

/** The error to refuse with, for a use case that needs `ok` (replay, resume past COMPLETE). */
export function continuityError(result: Continuity): CutpointError | undefined {
  switch (result.continuity) {
    case 'ok':
      return undefined;
    case 'rollback':
      return new AuthorityRollbackError(
        result.reason === 'version'
          ? `completion version ${result.completionVersion} is greater than the observed row version ${result.observedVersion}: observed rollback`
          : 'a completion document exists while the capsule is no longer COMPLETE: observed rollback',
      );
    case 'not_completed':
      return new EvidenceInvalidError(
        'missing',
        'the capsule holds no completion: there is no completed governance to continue',
      );
    case 'unknown':
      if (result.code === 'quality.completion_evidence_pending') return new CompletionEvidencePendingError();
      return new EvidenceInvalidError(
        result.code.slice('quality.evidence_'.length) as InvalidEvidenceClass,
        'the completion evidence cannot prove version continuity',
      );
  }
}

/** Throws unless continuity is `ok`. */
export function assertContinuity(input: ContinuityInput): Extract<Continuity, { continuity: 'ok' }> {
  const result = checkContinuity(input);
  const error = continuityError(result);
  if (error) throw error;
  return result as Extract<Continuity, { continuity: 'ok' }>;
}

function instantOf(value: string, path: string): number {
  const t = Date.parse(value);
  if (typeof value !== 'string' || Number.isNaN(t)) throw malformed(path, 'expected an ISO-8601 instant');
  return t;
}

/**
 * The sealed binding against `DescribeTable` now (N18): TableId compared when either side
 * has one, CreationDateTime always (as instants), and the ARN. DynamoDB Local keeps the
 * ARN and has no TableId across delete/recreate, but changes CreationDateTime.
 */
export function compareAuthorityBinding(sealed: AuthorityBinding, current: AuthorityBinding): 'match' | 'replaced' {
  const sealedAt = instantOf(sealed.creationDateTime, 'authorityBinding.sealed.creationDateTime');
  const currentAt = instantOf(current.creationDateTime, 'authorityBinding.current.creationDateTime');
  if (sealedAt !== currentAt) return 'replaced';
  if ((sealed.tableId ?? null) !== (current.tableId ?? null)) return 'replaced';
  if (sealed.tableArn !== current.tableArn) return 'replaced';
  return 'match';
}

/** The same comparison when only the sealed digest is at hand (the capsule's digests.authorityBinding). */
export function compareAuthorityBindingDigest(sealedDigest: string, current: AuthorityBinding): 'match' | 'replaced' {
  instantOf(current.creationDateTime, 'authorityBinding.current.creationDateTime');
  return authorityBindingDigest(current) === sealedDigest ? 'match' : 'replaced';
}

export function assertAuthorityBinding(result: 'match' | 'replaced'): void {
  if (result !== 'match') throw new AuthorityReplacedError();
}
