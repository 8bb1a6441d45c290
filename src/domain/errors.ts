/**
 * Every error that leaves a use case carries a stable `name` (Step Functions matches
 * `ErrorEquals` on it) and a stable diagnostic `code` (`subsystem.snake_case_reason`)
 * that operator commands print on stderr. Messages are for humans and may change;
 * names and codes may not.
 */
export class CutpointError extends Error {
  readonly code: string;
  constructor(name: string, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}

/** Input that cannot be accepted. Nothing was read or mutated. */
export class ValidationError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.ValidationError', code, message);
  }
}

/** Configuration is missing or invalid; raised once at cold start. */
export class ConfigError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.ConfigError', code, message);
  }
}

/**
 * The effect may or may not have been applied (timeout, network, 5xx, lost response).
 * Never retried blindly: the caller resolves it by reloading the exact identity.
 */
export class OutcomeUnknownError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, message: string, options?: { cause?: unknown }) {
    super('Cutpoint.OutcomeUnknown', 'cutpoint.outcome_unknown', message, options);
    this.cutPoint = cutPoint;
  }
}

/** The effect definitely did not happen (a 4xx that proves non-application, an injected fail). */
export class EffectFailedError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, message: string, options?: { cause?: unknown }) {
    super('Cutpoint.EffectFailed', 'cutpoint.effect_failed', message, options);
    this.cutPoint = cutPoint;
  }
}

/**
 * The worker died around the effect (Lambda crash or timeout). Raised by the fault
 * injector to rehearse a crash in-process; the flow treats it like `Lambda.Unknown`.
 */
export class WorkerCrashedError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, when: 'before' | 'after') {
    super(
      'Cutpoint.WorkerCrashed',
      'cutpoint.worker_crashed',
      `injected crash ${when} ${cutPoint}`,
    );
    this.cutPoint = cutPoint;
  }
}

/** Bytes read back do not match the checksum recorded for their identity. */
export class ChecksumMismatchError extends CutpointError {
  constructor(key: string, expected: string, actual: string) {
    super(
      'Cutpoint.ChecksumMismatch',
      'objects.checksum_mismatch',
      `object ${key}: expected sha256 ${expected}, read ${actual}`,
    );
  }
}

/** A required object is absent. */
export class ObjectMissingError extends CutpointError {
  constructor(key: string) {
    super('Cutpoint.ObjectMissing', 'objects.object_missing', `object ${key} is missing`);
  }
}

/**
 * Something occupies an exact identity but is not ours: a "similar" object or item.
 * This is never treated as success.
 */
export class IdentityConflictError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.IdentityConflict', code, message);
  }
}

/** Diagnostic projection of any thrown value: never includes stack, cause or secrets. */
export function diagnosticOf(error: unknown): { code: string; name: string; message: string } {
  if (error instanceof CutpointError) {
    return { code: error.code, name: error.name, message: error.message };
  }
  if (error instanceof Error) {
    return { code: 'cutpoint.internal_error', name: error.name, message: error.message };
  }
  return { code: 'cutpoint.internal_error', name: 'Error', message: String(error) };
}
