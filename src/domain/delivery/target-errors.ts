import { CutpointError } from '../errors.js';

/** The delivery target's errors (src/ports/target.ts): each a stable `name` and diagnostic code. */

/** The named object does not exist (or is not visible). */
export class TargetObjectMissingError extends CutpointError {
  constructor(what: string) {
    super('Cutpoint.TargetObjectMissing', 'delivery.target_object_missing', `${what} does not exist or is not visible`);
  }
}

/** The stage's object id or owner marker no longer matches the journal: nothing was changed. */
export class StagingBindingChangedError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.StagingBindingChanged', 'delivery.staging_binding_changed', `staging binding changed: ${detail}`);
  }
}

/** The publication refused to apply (row count, window or key guard): nothing was changed. */
export class PublicationRefusedError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.PublicationRefused', 'delivery.publication_refused', `publication refused: ${detail}`);
  }
}

/** The principal cannot observe what it must observe (receipt table, schema metadata). */
export class TargetUnobservableError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.TargetUnobservable', 'delivery.target_unobservable', detail);
  }
}

/** The target could not be reached or answered with an error outside any cut point. */
export class TargetUnavailableError extends CutpointError {
  /** `cause`: the driver's codes only (never its message), e.g. for isAuthenticationFailure. */
  constructor(detail: string, options?: { cause?: unknown }) {
    super('Cutpoint.TargetUnavailable', 'delivery.target_unavailable', detail, options);
  }
}

/** A chunk holds or loads another number of rows than it declares: refused or rolled back, nothing loaded. */
export class LoadCountMismatchError extends CutpointError {
  constructor(seq: number, declared: number, counted: number) {
    super(
      'Cutpoint.LoadCountMismatch',
      'delivery.load_count_mismatch',
      `chunk ${seq} declares ${declared} rows, ${counted} were counted: nothing of it is loaded`,
    );
  }
}

/**
 * A quality probe the target cannot run on the stage: a column the stage lacks (the table
 * changed after Begin's check), an assertion that does not compile or fails on the stage's
 * data. Definite and repeatable — no retry makes it run — so the quality step judges the
 * stage failed (REEXTRACT_REQUIRED, retire permitted) instead of stopping with custody held.
 */
export class QualityCheckUnrunnableError extends CutpointError {
  constructor(detail: string) {
    super(
      'Delivery.QualityCheckUnrunnable',
      'delivery.quality_check_unrunnable',
      `a quality check cannot run on the stage: ${detail}`,
    );
  }
}
