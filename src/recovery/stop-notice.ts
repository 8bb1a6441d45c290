import { resolveCommand } from '../cli/commands/stream/outcomes.js';
import { inspectCommand } from '../delivery/recovery/inspect-command.js';
import { invocationIdOfRun } from '../domain/delivery/identifiers.js';
import { validateAttemptId, validateLane } from '../domain/stream.js';
import { invocationKeysOf, type InvocationKeys } from '../telemetry/log-keys.js';
import { executionConsoleLink } from '../domain/execution-link.js';
import type { RunbookLink } from '../domain/runbook-link.js';
import type { StatusChangeDetail } from './dispatch-request.js';
import type { RecoverySubject } from './recovery-stops.js';
import { stopStateOf } from './stop-state.js';

export const RECOVERY_STOP_NOTICE_KIND = 'cutpoint.recovery-stopped.v1';

export interface RecoveryStopNotice {
  /** One line for e-mail subscribers. */
  subject: string;
  message: {
    kind: typeof RECOVERY_STOP_NOTICE_KIND;
    /** The same for every publish of one stop: subscribers fold duplicates by it. */
    notice_id: string;
    flow: string;
    /** The execution that stopped. */
    execution: string;
    /** Its Step Functions console page (region from the ARN), when it is an execution ARN. */
    execution_console?: string;
    /** The execution it recovers, when the dispatcher started it. */
    recovery_of?: string;
    /** The error it ended with: the Fail state's error, or the step error a Refused state passed on. */
    stop: string;
    /** What it works on, as the logs key it (src/telemetry/log-keys.ts). */
    concerns: InvocationKeys;
    /** The one command that resolves it, filled in for what it works on (docs/operate.md "Recovery stops"). */
    command: string;
    /** The durable state the stop leaves, when the stop alone says (stop-state.ts); null: `command` reads it. */
    state: string | null;
    /** That state's runbook page and the command the page names (the same the inspect output and the alarm name). */
    runbook: RunbookLink;
  };
}

/**
 * The notice of a recovery execution that ended in a designed stop that pages (docs/operate.md
 * "Recovery stops"), built from the status-change event and the execution's input only.
 * What it works on is read by the logs' allowlist (invocationKeysOf: lane and attemptId,
 * taskId and generation, invocationId) from the input it ran — for a recovery the
 * dispatcher started, the original execution's input — so a manifest text, a session or a
 * fence id never reaches the topic.
 */
export function recoveryStopNotice(
  flow: string,
  subject: RecoverySubject,
  detail: Pick<StatusChangeDetail, 'executionArn' | 'error'>,
  inputText: string,
): RecoveryStopNotice {
  const run = workedOn(inputText);
  const concerns = concernsOf(subject, run);
  const stop = detail.error ?? 'unnamed';
  const about = concerns.lane ?? concerns.taskId ?? concerns.invocationId;
  const console = executionConsoleLink(detail.executionArn);
  const left = stopStateOf(subject, detail.error);
  return {
    subject: `cutpoint: ${flow} stopped with ${stop}${about ? ` (${about})` : ''}`,
    message: {
      kind: RECOVERY_STOP_NOTICE_KIND,
      notice_id: `recovery-stopped.${detail.executionArn}`,
      flow,
      execution: detail.executionArn,
      ...(console ? { execution_console: console } : {}),
      ...(run.recoveryOf ? { recovery_of: run.recoveryOf } : {}),
      stop,
      concerns,
      command: commandOf(subject, run, concerns),
      state: left.state,
      runbook: left.runbook,
    },
  };
}

/** The input a recovery works on and, when the dispatcher started it, the execution it recovers and the one whose input that is. */
export interface WorkedOn {
  input: Record<string, unknown>;
  recoveryOf?: string;
  /** The execution that ran `input` (the innermost recoveryOf): a deliver-window's invocation derives from it. */
  originalArn?: string;
}

/** A recovery's input may wrap a recovery's (then it stops with RecoveryExhausted): unwrap a few levels, never loop. */
const MAX_NESTING = 4;

export function workedOn(text: string): WorkedOn {
  const run: WorkedOn = { input: objectOf(text) };
  for (let depth = 0; depth < MAX_NESTING; depth++) {
    const { recoveryOf, originalInput } = run.input;
    if (typeof recoveryOf !== 'string' || typeof originalInput !== 'string') break;
    run.recoveryOf ??= recoveryOf;
    run.originalArn = recoveryOf;
    run.input = objectOf(originalInput);
  }
  return run;
}

function objectOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

export function concernsOf(subject: RecoverySubject, run: WorkedOn): InvocationKeys {
  const { lane, attemptId, taskId, generation } = invocationKeysOf(run.input);
  switch (subject) {
    case 'lane':
      return { ...(lane ? { lane } : {}), ...(attemptId ? { attemptId } : {}) };
    case 'task':
      return { ...(taskId ? { taskId } : {}), ...(generation !== undefined ? { generation } : {}) };
    case 'invocation': {
      const invocationId = tried(() => invocationIdOfRun(run.input.invocationId, run.originalArn));
      return invocationId ? { invocationId } : {};
    }
  }
}

function commandOf(subject: RecoverySubject, run: WorkedOn, concerns: InvocationKeys): string {
  switch (subject) {
    case 'lane':
      return resolveCommand(
        tried(() => validateLane(run.input)) ?? { stream: '<stream>', partition: '<partition>' },
        tried(() => validateAttemptId(run.input.attemptId)) ?? '<attempt>',
        true,
      );
    case 'task':
      // The original input, not this recovery's: run with {recoveryOf, …} it would stop as RecoveryExhausted.
      return `aws stepfunctions describe-execution --execution-arn ${run.originalArn ?? '<the failed execution ARN>'} --query input --output text > commit-generation.json && cutpoint flow run commit-generation --input @commit-generation.json --aws --name <a new execution name>`;
    case 'invocation':
      return inspectCommand(concerns.invocationId ?? '<invocation-id>', true);
  }
}

/** The value, or undefined where the input does not validate (the notice names what it can). */
export function tried<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
