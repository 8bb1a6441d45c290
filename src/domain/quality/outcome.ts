import type { JournalState } from '../delivery/journal-states.js';
import type { StoredCapsule } from './capsule.js';
import { IncompleteError } from './errors.js';

/**
 * The two outcome axes (docs/rules.md#governance-vs-publication, N1, N9) and the derived INCOMPLETE
 * outcome (docs/rules.md#bounded-reader step 8). The axes
 * are independent: `target_commit` comes only from the journal's publication fact (never
 * from target rows), `governance` only from the capsule. Both are always produced; when
 * the store cannot prove a value the answer is `unknown`, never an absent field.
 */

export const TARGET_COMMITS = ['proven', 'not_proven', 'unknown'] as const;
export type TargetCommit = (typeof TARGET_COMMITS)[number];

export const GOVERNANCE_STATES = ['complete', 'pending', 'failed', 'not_started', 'staged_only', 'unknown'] as const;
export type Governance = (typeof GOVERNANCE_STATES)[number];

/** What the journal says about publication, as read; `unreadable` when the journal could not be read or interpreted. */
export type JournalFacts = { state: JournalState; hasPublicationFact: boolean } | 'unreadable';

const AFTER_PUBLICATION: readonly JournalState[] = ['PUBLISHED', 'SUCCEEDED', 'CUSTODY_RELEASED'];
const BEFORE_DISPATCH: readonly JournalState[] = [
  'EMPTY_STAGING',
  'WRITING_UNKNOWN',
  'PARTIAL_PROVED',
  'VERIFIED_EOF',
  'REEXTRACT_REQUIRED',
  'RETIRED',
];

export function targetCommitOf(journal: JournalFacts): TargetCommit {
  if (journal === 'unreadable') return 'unknown';
  const { state, hasPublicationFact } = journal;
  if (AFTER_PUBLICATION.includes(state)) return hasPublicationFact ? 'proven' : 'unknown'; // a missing fact is not evidence
  if (state === 'INCIDENT_RETAINED') return hasPublicationFact ? 'proven' : 'unknown';
  if (state === 'PUBLICATION_UNKNOWN') return 'unknown';
  if (BEFORE_DISPATCH.includes(state)) return hasPublicationFact ? 'unknown' : 'not_proven'; // a fact here contradicts the state
  return 'unknown';
}

/** The capsule as read: parsed, absent (no capsule item), or unusable (read failed / malformed). */
export type CapsuleRead = StoredCapsule | 'absent' | 'unreadable' | 'malformed';

export function governanceOf(capsule: CapsuleRead): Governance {
  if (capsule === 'absent') return 'not_started';
  if (capsule === 'unreadable' || capsule === 'malformed') return 'unknown';
  if (capsule.schema === 1) return 'staged_only';
  switch (capsule.state) {
    case 'PREPARED':
    case 'TARGET_PENDING':
      return 'pending';
    case 'COMPLETE':
      return 'complete';
    case 'FAILED':
      return 'failed';
  }
}

/**
 * How the closing steps of one observation ended (docs/rules.md#bounded-reader steps 5–6):
 * - workerExit: the reader child's exit was observed within the reap bound (`not_started`: no child was spawned);
 * - persistence: the persist-and-release transaction (after at most one guarded re-attempt);
 * - guardRelease: the exact reload shows the reader absent (`released`), still ours (`retained`), or could not tell.
 */
export interface ObservationClosure {
  workerExit: 'observed' | 'not_observed' | 'not_started';
  persistence: 'applied' | 'not_applied' | 'unknown';
  guardRelease: 'released' | 'retained' | 'unknown';
}

export const INCOMPLETE_REASONS = [
  'worker_shutdown_unverified',
  'pending_persistence_uncertain',
  'guard_release_uncertain',
] as const;
export type IncompleteReason = (typeof INCOMPLETE_REASONS)[number];

/** Why the outcome is INCOMPLETE (N12); empty = every closing step is verified. */
export function incompleteReasons(closure: ObservationClosure): IncompleteReason[] {
  const reasons: IncompleteReason[] = [];
  if (closure.workerExit === 'not_observed') reasons.push('worker_shutdown_unverified');
  if (closure.persistence !== 'applied') reasons.push('pending_persistence_uncertain');
  if (closure.guardRelease !== 'released') reasons.push('guard_release_uncertain');
  return reasons;
}

/** INCOMPLETE is derived, never a stored capsule state: it is the processor's outcome when any reason holds. */
export function isIncomplete(closure: ObservationClosure): boolean {
  return incompleteReasons(closure).length > 0;
}

export function incompleteErrorOf(reasons: readonly IncompleteReason[]): IncompleteError {
  return new IncompleteError(
    `observation outcome is INCOMPLETE (${reasons.join(', ')}): the reader guard is retained; follow the quiescence procedure`,
  );
}

/** Throws `Quality.Incomplete` unless every closing step is verified. */
export function assertObservationClosed(closure: ObservationClosure): void {
  const reasons = incompleteReasons(closure);
  if (reasons.length > 0) throw incompleteErrorOf(reasons);
}

/** Remote termination of the reader's SELECT is never claimed (N10): no KILL is issued. */
export function remoteTerminationOf(queryOutstandingAtRevocation: boolean): 'UNVERIFIED' | 'not_applicable' {
  return queryOutstandingAtRevocation ? 'UNVERIFIED' : 'not_applicable';
}
