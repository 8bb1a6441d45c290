import type { ContinuableFact } from '../delivery/action-guide.js';
import type { JournalState } from '../delivery/journal-states.js';
import { diagnosticCodeFor, permittedActions as journalActions } from '../delivery/action-guide.js';
import type { CapsuleState, CapsuleV1State } from './capsule.js';
import { QualityActionNotPermittedError } from './errors.js';

/**
 * The state-to-action guide of the ClickHouse route (docs/rules.md#quality-state-to-action) as one
 * pure function.
 * `inspect`, `inspect-all` and `diagnose` are always allowed and never listed; `replay`
 * is read-only and listed so operators see it. An empty list means: no permitted live
 * action — preserve, escalate (N7), or follow the quiescence procedure (N8).
 */

export const QUALITY_ACTIONS = ['observe', 'reconcile', 'replay', 'resume', 'retire'] as const;
export type QualityAction = (typeof QUALITY_ACTIONS)[number];

/** The capsule as the caller read it. `malformed`/`unreadable`: the item itself could not be used. */
export type CapsuleView =
  | { kind: 'absent' }
  | { kind: 'v1'; state: CapsuleV1State }
  | { kind: 'v2'; state: CapsuleState }
  | { kind: 'malformed' }
  | { kind: 'unreadable' };

/**
 * Classification of the capsule's evidence objects (docs/rules.md#quality-evidence). `pending`: COMPLETE whose
 * completion document is not yet recorded (cut point quality.completion.put, repaired by
 * resume). `unknown`: this caller did not read the evidence; every listed action verifies
 * it itself before acting, so listing is never a pass.
 */
export type EvidenceView = 'valid' | 'missing' | 'malformed' | 'unreadable' | 'pending' | 'unknown';

/**
 * The capsule item not continuous with its own evidence (a restore put it back below its
 * completion: `rollback`) or the authority table is not the one sealed (`replaced`). Both
 * end every live action: a write would hide the rollback (src/quality/capsule-continuity.ts).
 */
export type AuthorityBreak = 'rollback' | 'replaced';

/** The diagnostic of a break: every surface that shows one (quality inspect, delivery inspect) shows this code and no action. */
export function authorityBreakCode(
  authority: AuthorityBreak,
): 'quality.authority_version_rollback' | 'quality.authority_replaced' {
  return authority === 'rollback' ? 'quality.authority_version_rollback' : 'quality.authority_replaced';
}

export interface ActionInput {
  journalState: JournalState;
  dispatchCount: number;
  capsule: CapsuleView;
  guardHeld: boolean;
  evidence: EvidenceView;
  /** `none` until retirement sets windowEndsAt. */
  replayWindow: 'open' | 'closed' | 'none';
  retired: boolean;
  /**
   * The journal's record of owned stages (retire is offered only when they are recorded:
   * docs/rules.md#state-to-action).
   */
  ownedStagesRecorded: boolean;
  /** A PARTIAL_PROVED's continuation proof (journal-states.ts RecoveryFacts.continuable): resume is offered on it. */
  continuable?: ContinuableFact;
  /** Absent: continuity proved or nothing to compare (not_completed); present: nothing is permitted. */
  authority?: AuthorityBreak;
}

export interface ActionGuide {
  permittedActions: QualityAction[];
  diagnosticCode: string;
}

const none = (diagnosticCode: string): ActionGuide => ({ permittedActions: [], diagnosticCode });
const only = (diagnosticCode: string, ...actions: QualityAction[]): ActionGuide => ({
  permittedActions: [...actions].sort(),
  diagnosticCode,
});

/** A combination no writer produces (e.g. PUBLISHED without a capsule): nothing is offered. */
export const INCONSISTENT = 'quality.state_inconsistent';

export function actionGuide(input: ActionInput): ActionGuide {
  const { journalState: state, capsule, dispatchCount } = input;
  // What the item says (its guard, its state) is not what happened: no live action at all.
  if (input.authority !== undefined) return none(authorityBreakCode(input.authority));
  // A held guard has no expiry and no force-clear: nothing, ever (N8, N13).
  if (input.guardHeld) return none('quality.reader_guard_held');
  if (state === 'INCIDENT_RETAINED') return none(diagnosticCodeFor(state));
  if (capsule.kind === 'malformed') return none('quality.evidence_malformed');
  if (capsule.kind === 'unreadable') return none('quality.evidence_unreadable');
  if (dispatchCount !== 0 && dispatchCount !== 1) return none(INCONSISTENT);
  if (
    capsule.kind === 'v2' &&
    (input.evidence === 'missing' || input.evidence === 'malformed' || input.evidence === 'unreadable')
  ) {
    return none(`quality.evidence_${input.evidence}`); // N2, N7: no pass, no repair
  }
  if (capsule.kind === 'v1') return v1Guide(input, capsule.state);
  const v2 = capsule.kind === 'v2' ? capsule.state : undefined;
  const facts = {
    ownedStagesRecorded: input.ownedStagesRecorded,
    ...(input.continuable ? { continuable: input.continuable } : {}),
  };
  switch (state) {
    case 'EMPTY_STAGING':
    case 'PARTIAL_PROVED':
    case 'WRITING_UNKNOWN':
      if (v2 !== undefined || dispatchCount !== 0) return none(INCONSISTENT);
      return only(diagnosticCodeFor(state, facts), ...journalActions(state, facts));
    case 'VERIFIED_EOF':
      if (dispatchCount !== 0 || (v2 !== undefined && v2 !== 'PREPARED')) return none(INCONSISTENT);
      return only(v2 === 'PREPARED' ? 'quality.prepared' : diagnosticCodeFor(state), 'resume');
    case 'REEXTRACT_REQUIRED': {
      if (v2 !== undefined && v2 !== 'PREPARED') return none(INCONSISTENT);
      if (dispatchCount === 1 && v2 !== 'PREPARED') return none(INCONSISTENT);
      const code =
        dispatchCount === 1
          ? 'publication.not_published_fenced'
          : v2 === undefined
            ? 'quality.staged_failed'
            : diagnosticCodeFor(state);
      return input.ownedStagesRecorded ? only(code, 'retire') : none(diagnosticCodeFor(state, facts));
    }
    case 'PUBLICATION_UNKNOWN':
      if (dispatchCount !== 1 || v2 !== 'PREPARED') return none(INCONSISTENT);
      return only('publication.dispatch_unknown', 'reconcile');
    case 'PUBLISHED':
      if (v2 === 'PREPARED') return only('quality.prepared_published', 'observe');
      if (v2 === 'TARGET_PENDING') return only('quality.target_pending', 'observe');
      if (v2 === 'FAILED') return none('quality.failed');
      return completeGuide(input, v2);
    case 'SUCCEEDED':
      return completeGuide(input, v2);
    case 'CUSTODY_RELEASED':
      if (v2 !== 'COMPLETE' || !input.retired || input.replayWindow === 'none' || dispatchCount !== 1)
        return none(INCONSISTENT);
      if (input.replayWindow === 'closed') return none('quality.replay_window_closed');
      return input.evidence === 'pending' ? none(INCONSISTENT) : only('quality.complete_retired', 'replay');
    case 'RETIRED':
      return none(diagnosticCodeFor(state));
  }
}

/** PUBLISHED or SUCCEEDED with a COMPLETE capsule: resume (evidence, checkpoint, cleanup, release) and replay. */
function completeGuide(input: ActionInput, v2: CapsuleState | undefined): ActionGuide {
  if (v2 !== 'COMPLETE' || input.retired || input.dispatchCount !== 1) return none(INCONSISTENT);
  if (input.evidence === 'pending') return only('quality.completion_evidence_pending', 'resume');
  return only('quality.complete', 'replay', 'resume');
}

/**
 * A v1 capsule is read-only (N16, docs/rules.md#capsule-versions): its operation keeps the delivery
 * guide (docs/rules.md#state-to-action) for its journal state, and nothing that writes quality
 * (observe) or relies on a v2 completion (replay) is ever offered.
 */
function v1Guide(input: ActionInput, state: CapsuleV1State): ActionGuide {
  const facts = { ownedStagesRecorded: input.ownedStagesRecorded };
  if (state === 'REJECTED' && input.journalState !== 'REEXTRACT_REQUIRED' && input.journalState !== 'RETIRED')
    return none(INCONSISTENT);
  const code =
    state === 'REJECTED' && input.journalState === 'REEXTRACT_REQUIRED'
      ? 'quality.staged_failed'
      : diagnosticCodeFor(input.journalState, facts);
  const actions: QualityAction[] = journalActions(input.journalState, facts);
  return only(code, ...actions);
}

/** Refuses a live action the guide does not list (`quality.action_not_permitted`), before anything is written. */
export function assertQualityAction(input: ActionInput, action: QualityAction): void {
  const guide = actionGuide(input);
  if (!guide.permittedActions.includes(action))
    throw new QualityActionNotPermittedError(action, guide.permittedActions);
}
