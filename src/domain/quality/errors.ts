import { CutpointError, ValidationError } from '../errors.js';

/**
 * Every error of quality governance, with its stable `name` (Step Functions matches
 * `ErrorEquals` on it) and stable diagnostic `code` (docs/rules.md#diagnostic-codes).
 * Messages never carry the reader token, a UUID or a row value.
 */

/** A capsule state change outside the table of docs/rules.md#quality-capsule (a bug: never applied). */
export class IllegalCapsuleTransitionError extends CutpointError {
  constructor(
    readonly from: string,
    readonly to: string,
  ) {
    super(
      'Quality.IllegalCapsuleTransition',
      'quality.illegal_capsule_transition',
      `capsule cannot move from ${from} to ${to}`,
    );
  }
}

/** Another process (or a dead one) holds the non-expiring `quality_reader` guard. Never retried. */
export class ReaderGuardHeldError extends CutpointError {
  constructor(
    message = 'the quality reader guard is held by another run; it has no expiry and no force-clear (quiescence procedure)',
  ) {
    super('Quality.ReaderGuardHeld', 'quality.reader_guard_held', message);
  }
}

/** A state change was attempted without holding the guard at all (absent reader). */
export class ReaderGuardNotHeldError extends CutpointError {
  constructor() {
    super(
      'Quality.ReaderGuardNotHeld',
      'quality.reader_guard_not_held',
      'the capsule has no reader guard: a state change needs the exact owner token',
    );
  }
}

/** Pending persistence, worker shutdown or guard release is uncertain (N12); the guard stays. */
export class IncompleteError extends CutpointError {
  constructor(message: string) {
    super('Quality.Incomplete', 'quality.incomplete', message);
  }
}

export class TargetPendingError extends CutpointError {
  constructor(message = 'target quality is pending: the publication may be proven while governance is unfinished') {
    super('Quality.TargetPending', 'quality.target_pending', message);
  }
}

/** A required probe failed on the target: terminal, no automatic repair (N7, N14). */
export class QualityFailedError extends CutpointError {
  constructor(message = 'a required quality probe failed: terminal, preserve the evidence and escalate') {
    super('Quality.Failed', 'quality.failed', message);
  }
}

export const EVIDENCE_CLASSES = ['valid', 'missing', 'malformed', 'unreadable'] as const;
export type EvidenceClass = (typeof EVIDENCE_CLASSES)[number];
export type InvalidEvidenceClass = Exclude<EvidenceClass, 'valid'>;

/** Evidence that is not `valid` (docs/rules.md#quality-evidence): never a pass (N2). */
export class EvidenceInvalidError extends CutpointError {
  constructor(
    readonly classification: InvalidEvidenceClass,
    message: string,
  ) {
    super('Quality.EvidenceInvalid', `quality.evidence_${classification}`, message);
  }
}

/** Completion version greater than the observed row version (N17). */
export class AuthorityRollbackError extends CutpointError {
  constructor(
    message = 'the completion version is greater than the observed authority row version: observed rollback',
  ) {
    super('Quality.AuthorityRollback', 'quality.authority_version_rollback', message);
  }
}

/** The authority table is not the one sealed at PREPARE (N18). */
export class AuthorityReplacedError extends CutpointError {
  constructor(
    message = 'the authority table differs from the binding sealed at prepare: no automatic replay guarantee',
  ) {
    super('Quality.AuthorityReplaced', 'quality.authority_replaced', message);
  }
}

export class GenerationChangedError extends CutpointError {
  constructor(message = 'the generation under the target name is not the published candidate') {
    super('Quality.GenerationChanged', 'quality.generation_changed', message);
  }
}

export class CommitUnprovenError extends CutpointError {
  constructor(message = 'the journal holds no proven publication for this operation') {
    super('Quality.CommitUnproven', 'quality.commit_unproven', message);
  }
}

export class CoreDigestMismatchError extends CutpointError {
  constructor(message = 'the recomputed immutable core digest differs from the sealed one') {
    super('Quality.CoreDigestMismatch', 'quality.core_digest_mismatch', message);
  }
}

export type WindowClosedCode = 'quality.replay_window_closed' | 'quality.replay_window_boundary_missing';

/** Replay after the boundary (successor), after expiry, or across a missing boundary (N19). */
export class ReplayWindowClosedError extends CutpointError {
  constructor(
    readonly reason: 'successor' | 'expired' | 'boundary_missing',
    message: string,
  ) {
    super(
      'Quality.ReplayWindowClosed',
      reason === 'boundary_missing' ? 'quality.replay_window_boundary_missing' : 'quality.replay_window_closed',
      message,
    );
  }
}

export const OBSERVATION_FAILURE_CODES = ['keeper_no_node', 'keeper_other', 'timeout', 'failed'] as const;
export type ObservationFailureCode = (typeof OBSERVATION_FAILURE_CODES)[number];

/** A read-only target observation failed; the operation is retained, never redispatched (N20). */
export class TargetObservationFailedError extends CutpointError {
  constructor(
    readonly failure: ObservationFailureCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('Quality.ObservationFailed', `quality.target_observation_${failure}`, message, options);
  }
}

/** COMPLETE without its completion evidence yet (cut point quality.completion.put); replay never writes it. */
export class CompletionEvidencePendingError extends CutpointError {
  constructor() {
    super(
      'Quality.CompletionEvidencePending',
      'quality.completion_evidence_pending',
      'the capsule is COMPLETE but its completion evidence is not recorded yet; run resume',
    );
  }
}

/** A successor would replace a generation whose governance is unfinished (N6). */
export class SuccessorBlockedError extends CutpointError {
  constructor(readonly blockingInvocationId: string) {
    super(
      'Quality.SuccessorBlocked',
      'quality.successor_blocked',
      `operation ${blockingInvocationId} holds the slot with unfinished governance`,
    );
  }
}

export class QualityActionNotPermittedError extends CutpointError {
  constructor(
    readonly action: string,
    readonly permitted: readonly string[],
  ) {
    super(
      'Quality.ActionNotPermitted',
      'quality.action_not_permitted',
      `${action} is not permitted; permitted_actions: [${permitted.join(', ')}]`,
    );
  }
}

export class QualityConfirmationRequiredError extends CutpointError {
  constructor(readonly action: string) {
    super(
      'Quality.ConfirmationRequired',
      'quality.confirmation_required',
      `${action} changes quality authority; repeat it with --yes to confirm`,
    );
  }
}

/**
 * The route's target is one the bounded reader (a separate process, docs/rules.md#bounded-reader) cannot
 * connect to — embedded ClickHouse (`chdb:`) can be opened by one process only. Names the
 * binding and its variable, never the value.
 */
export class ReaderUnreachableError extends CutpointError {
  constructor(route: string, binding: string, scheme: string) {
    super(
      'Quality.ReaderUnreachable',
      'quality.reader_unreachable',
      `route ${route} publishes by EXCHANGE and is observed by a reader in a separate process, which cannot open the ${scheme} URL binding ${binding} names (embedded ClickHouse is one process's): point it at a ClickHouse server's HTTP interface (http(s)://…); nothing was started or written`,
    );
  }
}

/** A capsule schema this writer cannot write (v1 is read-only) or cannot read at all. */
export class CapsuleVersionUnsupportedError extends CutpointError {
  constructor(message: string) {
    super('Quality.CapsuleVersionUnsupported', 'quality.capsule_version_unsupported', message);
  }
}

export type QualityRefusalCode =
  | 'quality.placeholder_invalid'
  | 'quality.probe_invalid'
  | 'quality.admission_invalid'
  | 'quality.required_cannot_degrade'
  | 'quality.capsule_version_required'
  | 'quality.capsule_version_unsupported';

/** Configuration refusals (manifest / probe building): a ValidationError, nothing read or mutated. */
export class QualityRefusalError extends ValidationError {
  constructor(code: QualityRefusalCode, message: string) {
    super(code, message);
  }
}
