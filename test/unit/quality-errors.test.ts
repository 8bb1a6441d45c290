import { describe, expect, it } from 'vitest';
import { CutpointError, diagnosticOf } from '../../src/domain/errors.js';
import {
  AuthorityReplacedError,
  AuthorityRollbackError,
  CapsuleVersionUnsupportedError,
  CommitUnprovenError,
  CompletionEvidencePendingError,
  CoreDigestMismatchError,
  EvidenceInvalidError,
  GenerationChangedError,
  IllegalCapsuleTransitionError,
  IncompleteError,
  TargetObservationFailedError,
  QualityActionNotPermittedError,
  QualityConfirmationRequiredError,
  QualityFailedError,
  QualityRefusalError,
  ReaderGuardHeldError,
  ReaderGuardNotHeldError,
  ReplayWindowClosedError,
  SuccessorBlockedError,
  TargetPendingError,
} from '../../src/domain/quality/errors.js';

/** Stable names (Step Functions ErrorEquals) and codes (docs/rules.md#diagnostic-codes). */
const CASES: Array<[CutpointError, string, string]> = [
  [
    new IllegalCapsuleTransitionError('COMPLETE', 'PREPARED'),
    'Quality.IllegalCapsuleTransition',
    'quality.illegal_capsule_transition',
  ],
  [new ReaderGuardHeldError(), 'Quality.ReaderGuardHeld', 'quality.reader_guard_held'],
  [new ReaderGuardNotHeldError(), 'Quality.ReaderGuardNotHeld', 'quality.reader_guard_not_held'],
  [new IncompleteError('x'), 'Quality.Incomplete', 'quality.incomplete'],
  [new TargetPendingError(), 'Quality.TargetPending', 'quality.target_pending'],
  [new QualityFailedError(), 'Quality.Failed', 'quality.failed'],
  [new EvidenceInvalidError('missing', 'x'), 'Quality.EvidenceInvalid', 'quality.evidence_missing'],
  [new EvidenceInvalidError('malformed', 'x'), 'Quality.EvidenceInvalid', 'quality.evidence_malformed'],
  [new EvidenceInvalidError('unreadable', 'x'), 'Quality.EvidenceInvalid', 'quality.evidence_unreadable'],
  [new AuthorityRollbackError(), 'Quality.AuthorityRollback', 'quality.authority_version_rollback'],
  [new AuthorityReplacedError(), 'Quality.AuthorityReplaced', 'quality.authority_replaced'],
  [new GenerationChangedError(), 'Quality.GenerationChanged', 'quality.generation_changed'],
  [new CommitUnprovenError(), 'Quality.CommitUnproven', 'quality.commit_unproven'],
  [new CoreDigestMismatchError(), 'Quality.CoreDigestMismatch', 'quality.core_digest_mismatch'],
  [new ReplayWindowClosedError('successor', 'x'), 'Quality.ReplayWindowClosed', 'quality.replay_window_closed'],
  [new ReplayWindowClosedError('expired', 'x'), 'Quality.ReplayWindowClosed', 'quality.replay_window_closed'],
  [
    new ReplayWindowClosedError('boundary_missing', 'x'),
    'Quality.ReplayWindowClosed',
    'quality.replay_window_boundary_missing',
  ],
  [
    new TargetObservationFailedError('keeper_no_node', 'x'),
    'Quality.ObservationFailed',
    'quality.target_observation_keeper_no_node',
  ],
  [
    new TargetObservationFailedError('keeper_other', 'x'),
    'Quality.ObservationFailed',
    'quality.target_observation_keeper_other',
  ],
  [new TargetObservationFailedError('timeout', 'x'), 'Quality.ObservationFailed', 'quality.target_observation_timeout'],
  [new TargetObservationFailedError('failed', 'x'), 'Quality.ObservationFailed', 'quality.target_observation_failed'],
  [new CompletionEvidencePendingError(), 'Quality.CompletionEvidencePending', 'quality.completion_evidence_pending'],
  [new SuccessorBlockedError('inv-x'), 'Quality.SuccessorBlocked', 'quality.successor_blocked'],
  [new QualityActionNotPermittedError('observe', []), 'Quality.ActionNotPermitted', 'quality.action_not_permitted'],
  [new QualityConfirmationRequiredError('observe'), 'Quality.ConfirmationRequired', 'quality.confirmation_required'],
  [new CapsuleVersionUnsupportedError('x'), 'Quality.CapsuleVersionUnsupported', 'quality.capsule_version_unsupported'],
  [
    new QualityRefusalError('quality.placeholder_invalid', 'x'),
    'Cutpoint.ValidationError',
    'quality.placeholder_invalid',
  ],
  [
    new QualityRefusalError('quality.required_cannot_degrade', 'x'),
    'Cutpoint.ValidationError',
    'quality.required_cannot_degrade',
  ],
  [
    new QualityRefusalError('quality.capsule_version_required', 'x'),
    'Cutpoint.ValidationError',
    'quality.capsule_version_required',
  ],
];

describe('Quality.* errors', () => {
  it.each(CASES)('%s has its stable name and code', (error, name, code) => {
    expect(error).toBeInstanceOf(CutpointError);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(diagnosticOf(error)).toMatchObject({ name, code });
    expect(error.code).toMatch(/^quality\.[a-z0-9_]+$/);
  });
});
