import { CutpointError } from '../../../domain/errors.js';
import type { AppendOutcome, LaneRef } from '../../../domain/stream.js';
import type { FlowRun } from './runtime.js';

/** Fail states that stand for the step error they caught; the step's own error says more. */
const WRAPPING_FAILS = new Set([
  'Stream.Rejected',
  'Stream.Unresolvable',
  'Stream.RecoveryExhausted',
  'Stream.TrimRefused',
]);

/** `Stream.LaneMissing` → `stream.lane_missing`: the same stable codes the use cases print. */
export function codeOfErrorName(name: string | undefined): string {
  if (!name) return 'flow.execution_failed';
  const [prefix = '', ...rest] = name.split('.');
  const tail = rest.join('_').replace(/([a-z0-9])([A-Z])/g, '$1_$2');
  const code = `${prefix}.${tail}`.toLowerCase().replace(/[^a-z0-9._]/g, '_');
  return /^[a-z0-9_]+\.[a-z0-9_]+$/.test(code) ? code : 'flow.execution_failed';
}

/** A Lambda error's cause is JSON with a stack trace: keep its message only. */
function messageOf(cause: string | undefined): string {
  if (!cause) return 'no cause given';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // a plain message
  }
  return cause;
}

/** The failure to report: a wrapping Fail state's own step error where the local history has it. */
function failureOf(run: FlowRun): { error: string | undefined; cause: string | undefined } {
  if (run.error && WRAPPING_FAILS.has(run.error) && run.events) {
    const step = run.events.filter((e) => e.type === 'StateFailed' && e.error && !WRAPPING_FAILS.has(e.error)).pop();
    if (step) return { error: step.error, cause: step.cause };
  }
  return { error: run.error, cause: run.cause };
}

/** A FAILED (or TIMED_OUT, ABORTED) execution as a stable diagnostic; `hint` says what to do next. */
export function failedFlowError(run: FlowRun, hint?: string): CutpointError {
  const { error, cause } = failureOf(run);
  const what = run.status === 'FAILED' ? `failed with ${error ?? 'an unnamed error'}` : `ended ${run.status}`;
  const name = run.executionName ? ` (execution ${run.executionName})` : '';
  const message = `${run.flow} ${what}${name}: ${messageOf(cause)}${hint ? `; ${hint}` : ''}`;
  return new CutpointError(
    error ?? 'Flow.ExecutionFailed',
    run.status === 'FAILED' ? codeOfErrorName(error) : 'flow.execution_failed',
    message,
  );
}

export function isRejection(run: FlowRun): boolean {
  return run.error === 'Stream.Rejected';
}

/** The command that resolves an attempt of a suspended lane (a placeholder may stand for a part the caller does not know). */
export function resolveCommand(
  lane: { stream: string; partition: number | string },
  attemptId: string,
  aws: boolean,
): string {
  return `cutpoint stream resolve ${lane.stream} --partition ${lane.partition} --attempt ${attemptId}${aws ? ' --aws' : ''}`;
}

/**
 * An append's one interpretation, as the operator sees it: KNOWN_COMMITTED is success;
 * KNOWN_NOT_COMMITTED is a failure that a new attempt may retry; MAY_HAVE_COMMITTED is a
 * failure that only a resolve of this same attempt settles — never a second append.
 */
/** What has to happen before a new attempt can succeed, where the reason says. */
function nextStep(reason: string | undefined, lane: LaneRef, aws: boolean): string {
  const flag = aws ? ' --aws' : '';
  if (reason === 'Stream.LaneSuspended')
    return ` once what holds the lane is resolved: the attempt (suspendedBy: stream resolve --attempt) or LaneWriter (writer: stream resolve --writer) that cutpoint stream describe ${lane.stream}${flag} names`;
  if (reason === 'Stream.Fenced')
    return ` after taking the lane over (cutpoint stream takeover ${lane.stream} --partition ${lane.partition}${flag})`;
  return '';
}

export function appendResult(outcome: AppendOutcome, lane: LaneRef, attemptId: string, aws: boolean): AppendOutcome {
  switch (outcome.status) {
    case 'KNOWN_COMMITTED':
      return outcome;
    case 'KNOWN_NOT_COMMITTED':
      throw new CutpointError(
        'Stream.NotCommitted',
        'stream.not_committed',
        `${outcome.reason ?? 'not committed'}; append again with a new --attempt${nextStep(outcome.reason, lane, aws)}`,
      );
    case 'MAY_HAVE_COMMITTED':
      throw new CutpointError(
        'Stream.MayHaveCommitted',
        'stream.may_have_committed',
        `lane suspended; run: ${resolveCommand(lane, attemptId, aws)}`,
      );
    default:
      throw new CutpointError(
        'Stream.UnexpectedOutcome',
        'stream.unexpected_outcome',
        `append ended with an unknown status ${JSON.stringify((outcome as { status?: unknown }).status)}`,
      );
  }
}
