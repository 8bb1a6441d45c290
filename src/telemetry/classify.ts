import { CutpointError } from '../domain/errors.js';
import type { CutPointOutcome } from './metric-names.js';

/**
 * How the telemetry layer reads what a handler crossed: pure rules over the values the
 * fault-injector port and the handler saw (no I/O, no Powertools). The Lambda layer
 * (functions/lib/telemetry*.ts) turns them into log keys and EMF metrics.
 */

/** Error names that say nothing: a defect or a driver fault, never a designed outcome. */
const GENERIC_NAMES: ReadonlySet<string> = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
  'EvalError',
  'URIError',
  'AggregateError',
]);

/** A designed error name: `Namespace.Reason` (`Cutpoint.OutcomeUnknown`, `Delivery.NeedsRecovery`), as the registry lists them. */
export const STABLE_ERROR_NAME = /^[A-Z][A-Za-z0-9]*\.[A-Z][A-Za-z0-9]*$/;

/** Error codes of a network failure whose request may have been applied. */
const UNKNOWN_NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED']);

function nameOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * How a cut point's effect ended, as `FaultInjector.at` saw it: no error → applied;
 * Cutpoint.OutcomeUnknown → unknown; Cutpoint.WorkerCrashed → crashed; Cutpoint.EffectFailed
 * → failed. A raw driver error (the adapter classifies it after the port) is unknown when it
 * says the request may have landed (a timeout, a reset connection, a 5xx), failed otherwise.
 */
export function cutPointOutcomeOf(error?: unknown): CutPointOutcome {
  if (error === undefined) return 'applied';
  const name = nameOf(error);
  if (name === 'Cutpoint.OutcomeUnknown') return 'unknown';
  if (name === 'Cutpoint.WorkerCrashed') return 'crashed';
  if (name === 'Cutpoint.EffectFailed' || error instanceof CutpointError) return 'failed';
  const e = error as { code?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  if (name === 'TimeoutError' || name === 'RequestTimeout' || name === 'AbortError') return 'unknown';
  if (typeof e?.code === 'string' && UNKNOWN_NETWORK_CODES.has(e.code)) return 'unknown';
  const status = e?.$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return 'unknown';
  return 'failed';
}

/** What a handler's failure counts as: StepError with its stable name, or UnexpectedError. */
export type StepFailure = { metric: 'StepError'; errorName: string } | { metric: 'UnexpectedError' };

/**
 * A named (designed) error: a CutpointError, or any error whose `name` is a stable
 * `Namespace.Reason` (what Step Functions' Retry/Catch match on). Anything else — a bare
 * Error/TypeError, an SDK exception name, a thrown non-error — is unexpected: a defect or
 * a fault nobody named, which an operator must look at.
 */
export function stepFailureOf(error: unknown): StepFailure {
  const name = nameOf(error);
  if (
    name !== undefined &&
    !GENERIC_NAMES.has(name) &&
    (error instanceof CutpointError || STABLE_ERROR_NAME.test(name))
  ) {
    return { metric: 'StepError', errorName: name };
  }
  return { metric: 'UnexpectedError' };
}

/** The stable diagnostic code an error carries (`delivery.needs_recovery`), if any. */
export function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[a-z0-9_]+(\.[a-z0-9_]+)+$/.test(code) ? code : undefined;
}
