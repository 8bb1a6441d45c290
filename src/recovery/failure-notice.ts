import { inspectCommand } from '../delivery/recovery/inspect-command.js';
import { escapeControlCharacters } from '../domain/errors.js';
import { redact } from '../domain/redact.js';
import { validateLane } from '../domain/stream.js';
import type { ExecutionFailure } from '../ports/executions.js';
import type { InvocationKeys } from '../telemetry/log-keys.js';
import { escalationPageOf, RUNBOOK_DIR } from '../docs/runbook/ref.js';
import { executionConsoleLink } from '../domain/execution-link.js';
import type { RunbookLink } from '../domain/runbook-link.js';
import type { StatusChangeDetail } from './dispatch-request.js';
import { stopStateOf } from './stop-state.js';
import type { RecoverySubject } from './recovery-stops.js';
import { concernsOf, tried, workedOn } from './stop-notice.js';

export const RECOVERY_FAILURE_NOTICE_KIND = 'cutpoint.recovery-failed.v1';

/** The runbook's escalation (under the runbook base): what to do about an end no runbook page covers. */
export const ESCALATION_RUNBOOK = escalationPageOf(RUNBOOK_DIR);

/** The longest cause a notice carries (after redaction): enough for an error message, never a dumped input. */
export const MAX_NOTICE_CAUSE = 500;

export interface RecoveryFailureNotice {
  /** One line for e-mail subscribers. */
  subject: string;
  message: {
    kind: typeof RECOVERY_FAILURE_NOTICE_KIND;
    /** The same for every publish for one execution: subscribers fold duplicates by it. */
    notice_id: string;
    flow: string;
    /** The execution that failed. */
    execution: string;
    /** Its Step Functions console page (region from the ARN), when it is an execution ARN. */
    execution_console?: string;
    /** The execution it recovers, when the dispatcher started it. */
    recovery_of?: string;
    /** None of the flow's designed stops (src/recovery/recovery-stops.ts) is this end. */
    classification: 'unclassified';
    /** How it ended: FAILED with an error no Fail state of the flow ends with, TIMED_OUT or ABORTED. */
    status: Exclude<StatusChangeDetail['status'], 'SUCCEEDED'>;
    /** The error Step Functions recorded (e.g. a step's Cutpoint.WorkerCrashed after its retries, States.Timeout), if any. */
    error: string | null;
    /** Its cause: a Lambda error's type and message only, redacted (src/domain/redact.ts) and cut to MAX_NOTICE_CAUSE; null when there is none or it could not be read. */
    cause: string | null;
    /** What it works on, as the logs key it (src/telemetry/log-keys.ts). */
    concerns: InvocationKeys;
    /** The automatic re-run the dispatcher starts for it, when it does: that execution's own end is noticed if it fails too. */
    rerun?: string;
    /** The read-only command that shows the durable state of what it works on. */
    command: string;
    /** What it may have left, when its subject alone says (stop-state.ts); null: `command` reads it. */
    state: string | null;
    /** Where an operator goes from there: the runbook's escalation and the same read-only command. */
    runbook: RunbookLink;
  };
}

/**
 * The notice of a recovery execution that ended in no designed stop (docs/operate.md "Recovery
 * stops"): a Task error the flow does not classify, a timeout, an abort. It says so, names
 * the error and the cause as Step Functions recorded them — redacted like every error that
 * leaves a handler, the stack trace dropped — what the execution works on (read from its
 * input by the logs' allowlist, as the stop notice does: never a manifest, session or
 * fence), the inspect command for it and the runbook's escalation.
 */
export function recoveryFailureNotice(
  flow: string,
  subject: RecoverySubject,
  detail: Pick<StatusChangeDetail, 'executionArn' | 'error'> & { status: RecoveryFailureNotice['message']['status'] },
  inputText: string,
  failure: ExecutionFailure,
  rerun?: string,
): RecoveryFailureNotice {
  const run = workedOn(inputText);
  const concerns = concernsOf(subject, run);
  const error = detail.error ?? failure.error ?? null;
  const about = concerns.lane ?? concerns.taskId ?? concerns.invocationId;
  const how =
    detail.status === 'FAILED'
      ? `failed with ${error ?? 'an unnamed error'}`
      : detail.status === 'TIMED_OUT'
        ? 'timed out'
        : 'was aborted';
  const console = executionConsoleLink(detail.executionArn);
  const command = inspectCommandOf(subject, run, concerns, detail.executionArn);
  return {
    subject: `cutpoint: ${flow} ${how}, unclassified${about ? ` (${about})` : ''}`,
    message: {
      kind: RECOVERY_FAILURE_NOTICE_KIND,
      notice_id: `recovery-failed.${detail.executionArn}`,
      flow,
      execution: detail.executionArn,
      ...(console ? { execution_console: console } : {}),
      ...(run.recoveryOf ? { recovery_of: run.recoveryOf } : {}),
      classification: 'unclassified',
      status: detail.status,
      error,
      cause: noticeCause(failure.cause),
      concerns,
      ...(rerun ? { rerun } : {}),
      command,
      state: stopStateOf(subject, detail.error).state,
      runbook: { command, page: escalationPageOf() },
    },
  };
}

/** A cause fit for the incident topic: a Lambda error's `errorType: errorMessage` (no trace), redacted, control characters escaped, bounded. */
export function noticeCause(cause: string | undefined): string | null {
  if (!cause) return null;
  let text = cause;
  try {
    const parsed = JSON.parse(cause) as { errorType?: unknown; errorMessage?: unknown };
    if (typeof parsed?.errorMessage === 'string')
      text = typeof parsed.errorType === 'string' ? `${parsed.errorType}: ${parsed.errorMessage}` : parsed.errorMessage;
  } catch {
    // a plain-text cause (a Fail state's own, a timeout's, an abort's)
  }
  const clean = escapeControlCharacters(redact(text));
  return clean.length > MAX_NOTICE_CAUSE ? `${clean.slice(0, MAX_NOTICE_CAUSE)}…` : clean;
}

/** The read-only look at what the execution works on: the lane's head, the task's execution, the invocation's journal. */
function inspectCommandOf(
  subject: RecoverySubject,
  run: ReturnType<typeof workedOn>,
  concerns: InvocationKeys,
  executionArn: string,
): string {
  switch (subject) {
    case 'lane':
      return `cutpoint stream describe ${tried(() => validateLane(run.input))?.stream ?? '<stream>'} --aws`;
    case 'task':
      return `aws stepfunctions describe-execution --execution-arn ${executionArn} --query "[status,output,error,cause]"`;
    case 'invocation':
      return inspectCommand(concerns.invocationId ?? '<invocation-id>', true);
  }
}
