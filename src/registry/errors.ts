/**
 * The error lists registry steps share, each declared once: a step's `errors` spreads the
 * lists it raises and names its own errors beside them, so adding an error to a step is one
 * line (the flow specs route every declared error: statemachines/spec/task.ts `otherwise`).
 */

/** Errors any effectful step can raise around a cut point. */
export const EFFECT_ERRORS = ['Cutpoint.OutcomeUnknown', 'Cutpoint.EffectFailed', 'Cutpoint.WorkerCrashed'];
/** Refusals of stream input before anything is touched. */
export const STREAM_REFUSALS = ['Cutpoint.ValidationError', 'Stream.LaneMissing'];
/** A time-marked attempt outside its lane's attempt window (src/domain/attempt-time.ts): refused before anything is written. */
export const ATTEMPT_WINDOW_REFUSALS = ['Stream.AttemptExpired', 'Stream.AttemptTimeFuture'];
/** A GC step's refusals: bad input or grace, a missing lane, a store that cannot list in pages. */
export const GC_REFUSALS = [...STREAM_REFUSALS, 'Cutpoint.ConfigError'];

/*
 * Every deliver-window step reloads the invocation record (GetItem), may read its journal
 * (Query), and moves it by a fenced conditional write or transaction (PutItem, UpdateItem,
 * ConditionCheckItem). Their refusals: a malformed input or route (ValidationError), a
 * binding whose connection cannot be resolved (ConfigError, `delivery.binding_*`: an
 * unset variable locally, a missing or unreadable secret on AWS), a journal that cannot be
 * read or is in another state, a fence or custody lost to another session, a missing
 * precondition; their effects can end unknown/failed/crashed at a cut point, and a target
 * or source can be unavailable.
 */
export const DELIVERY_ERRORS = [
  'Cutpoint.ValidationError',
  'Cutpoint.ConfigError',
  'Cutpoint.IdentityConflict',
  'Delivery.JournalUnavailable',
  'Delivery.JournalStateConflict',
  'Delivery.IllegalTransition',
  'Delivery.TransitionPrecondition',
  'Delivery.Fenced',
  'Delivery.CustodyHeld',
  'Delivery.CustodyNotRetained',
  'Delivery.AuthorityMismatch',
  ...EFFECT_ERRORS,
];
export const TARGET_ERRORS = [
  'Cutpoint.TargetUnavailable',
  'Cutpoint.TargetUnobservable',
  'Cutpoint.StagingBindingChanged',
  'Cutpoint.TargetObjectMissing',
];
export const OBJECT_ERRORS = ['Cutpoint.ChecksumMismatch', 'Cutpoint.ObjectMissing'];
/** What the COMPLETE-capsule gate of evidence, checkpoint and cleanup on an exchange route refuses with (src/publication/completed-capsule.ts). */
export const QUALITY_GATE = [
  'Quality.EvidenceInvalid',
  'Quality.CapsuleVersionUnsupported',
  'Quality.ReaderGuardHeld',
  'Quality.Failed',
  'Quality.TargetPending',
  'Quality.CompletionEvidencePending',
  'Quality.IllegalCapsuleTransition',
  // The capsule's continuity check (src/quality/capsule-continuity.ts): a restored capsule, another authority table.
  'Quality.AuthorityRollback',
  'Quality.AuthorityReplaced',
];

/*
 * The ClickHouse publication steps' failures leave as Publication.ObservationFailed or a
 * cut point error; no Task retries a ClickHouse class: a publication effect is resolved by
 * observation, never by a re-send.
 */
export const PUBLICATION_ERRORS = [
  'Publication.ObservationFailed',
  'Publication.CandidateMismatch',
  'Publication.ExchangeUnsupported',
];
/** The governed outcomes that end publish-clickhouse in a named Fail state (never retried). */
export const QUALITY_STOPS = [
  'Quality.TargetPending',
  'Quality.Failed',
  'Quality.Incomplete',
  'Quality.ReaderGuardHeld',
];
export const QUALITY_REFUSALS = [
  'Quality.EvidenceInvalid',
  'Quality.AuthorityRollback',
  'Quality.AuthorityReplaced',
  'Quality.GenerationChanged',
  'Quality.CommitUnproven',
  'Quality.CoreDigestMismatch',
  'Quality.ObservationFailed',
  'Quality.CapsuleVersionUnsupported',
];
/** The operator's observe refuses before anything is written: no --yes, not listed by the guide, not a governed route. */
export const OPERATOR_REFUSALS = ['Quality.ConfirmationRequired', 'Quality.ActionNotPermitted', 'Quality.NotGoverned'];
/**
 * The read-only replay's and diagnosis' own refusals (src/quality/replay.ts, diagnose.ts): not
 * a governed route or operation, not permitted (not COMPLETE, not dispatched once), completion
 * evidence pending, the replay window closed, a held guard, a write the read-only ports refuse.
 */
export const QUALITY_READ_REFUSALS = [
  'Quality.NotGoverned',
  'Quality.ActionNotPermitted',
  'Quality.CompletionEvidencePending',
  'Quality.ReplayWindowClosed',
  'Quality.ReaderGuardHeld',
  'Quality.ReadOnlyViolation',
];
/** A live recovery action's refusals before anything is written: confirmation, permitted action, the source. */
export const RECOVERY_REFUSALS = [
  'Delivery.ConfirmationRequired',
  'Delivery.ActionNotPermitted',
  'Delivery.SourceForbidden',
];
