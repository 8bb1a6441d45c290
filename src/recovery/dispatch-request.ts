import { ValidationError } from '../domain/errors.js';
import { TERMINAL_STATUSES, type TerminalStatus } from './designed-stops.js';
import type { RecoveryStops } from './recovery-stops.js';

/** Statuses a registry flow's `recovery.on` may name. */
export type RecoveredStatus = Exclude<TerminalStatus, 'SUCCEEDED'>;

/** What the dispatcher knows of a flow, fixed at deploy time: the EventBridge target's constant part. */
export interface DispatchTarget {
  /** The registry flow whose executions the rule routes here. */
  flow: string;
  /** Its designed stops (designedStopErrors of its ASL). */
  designedStops: string[];
  /** The registry's `recovery`, with the recovering state machine's ARN; absent: the flow is only counted. */
  recovery?: { by: string; stateMachineArn: string; on: RecoveredStatus[] };
  /** A flow that runs recoveries (recoveryStopsOf): which executions are recoveries, what they work on, the designed stops that page. */
  recoveryStops?: RecoveryStops;
}

/** The "Step Functions Execution Status Change" event's detail, as far as the dispatcher reads it. */
export interface StatusChangeDetail {
  executionArn: string;
  name: string;
  status: TerminalStatus;
  /** The execution's input as JSON text; null or cut short when it was too large for the event. */
  input: string | null;
  inputDetails?: { included?: boolean; truncated?: boolean };
  error?: string | null;
}

/** The dispatcher's input: the target's constant part plus the event's detail (`$.detail`). */
export interface DispatchRequest extends DispatchTarget {
  detail: StatusChangeDetail;
}

const invalid = (message: string) => new ValidationError('recovery.event_invalid', message);
const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * A Step Functions execution name: 1-80 characters, no whitespace, none of < > { } [ ] ? *
 * " # % \ ^ | ~ ` $ & , ; : / and no control character. The recovery's name is derived
 * from it (recoveryExecutionName), so a name Step Functions would refuse is refused here.
 */
// eslint-disable-next-line no-control-regex
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;
/** The state machine segment of an execution ARN (a Distributed Map child's is `<parent>/<label>`). */
// eslint-disable-next-line no-control-regex
const MACHINE_NAME = /^[^\s\u0000-\u001f\u007f-\u009f]{1,160}$/;

/** `arn:<partition>:states:<region>:<account>:execution:<state machine>:<name>`, and its name is `name`. */
function isExecutionArnOf(arn: string, name: string): boolean {
  const parts = arn.split(':');
  if (parts.length !== 8) return false;
  const [prefix, partition, service, region, account, kind, machine, last] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  return (
    prefix === 'arn' &&
    /^aws(-[a-z]+)*$/.test(partition) &&
    service === 'states' &&
    /^[a-z0-9-]{1,32}$/.test(region) &&
    /^\d{12}$/.test(account) &&
    kind === 'execution' &&
    MACHINE_NAME.test(machine) &&
    last === name
  );
}

/** Validates the dispatcher's input before anything is read or started. */
export function parseDispatchRequest(input: unknown): DispatchRequest {
  const v = (input ?? {}) as Record<string, unknown>;
  if (!isString(v.flow)) throw invalid('the dispatcher needs the flow its rule routes');
  if (!Array.isArray(v.designedStops) || !v.designedStops.every(isString))
    throw invalid(`${v.flow}: designedStops must be a list of error names`);
  const d = (v.detail ?? {}) as Record<string, unknown>;
  if (!isString(d.executionArn) || !isString(d.name))
    throw invalid(`${v.flow}: the event names no execution (detail.executionArn, detail.name)`);
  // Values are not echoed: the event is untrusted input and the message goes to the logs.
  if (!EXECUTION_NAME.test(d.name))
    throw invalid(
      `${v.flow}: detail.name is not a Step Functions execution name (1-80 characters, no whitespace, control or reserved character)`,
    );
  if (!isExecutionArnOf(d.executionArn, d.name))
    throw invalid(`${v.flow}: detail.executionArn is not the ARN of the execution detail.name names`);
  if (!TERMINAL_STATUSES.includes(d.status as TerminalStatus)) {
    throw new ValidationError(
      'recovery.status_not_terminal',
      `${v.flow}: execution ${d.name} is ${String(d.status)}, not ended`,
    );
  }
  if (d.input !== null && d.input !== undefined && typeof d.input !== 'string')
    throw invalid(`${v.flow}: detail.input must be JSON text`);
  const request: DispatchRequest = {
    flow: v.flow,
    designedStops: v.designedStops,
    detail: {
      executionArn: d.executionArn,
      name: d.name,
      status: d.status as TerminalStatus,
      input: (d.input as string | null | undefined) ?? null,
      inputDetails: (d.inputDetails ?? undefined) as StatusChangeDetail['inputDetails'],
      error: isString(d.error) ? d.error : undefined,
    },
  };
  if (v.recovery !== undefined && v.recovery !== null) {
    const r = v.recovery as Record<string, unknown>;
    const on = r.on as unknown[];
    if (
      !isString(r.by) ||
      !isString(r.stateMachineArn) ||
      !Array.isArray(on) ||
      !on.every((s) => s === 'FAILED' || s === 'TIMED_OUT' || s === 'ABORTED')
    ) {
      throw invalid(`${v.flow}: recovery must name its flow (by), state machine (stateMachineArn) and statuses (on)`);
    }
    request.recovery = { by: r.by, stateMachineArn: r.stateMachineArn, on: on as RecoveredStatus[] };
  }
  if (v.recoveryStops !== undefined && v.recoveryStops !== null)
    request.recoveryStops = parseRecoveryStops(v.flow, v.recoveryStops);
  return request;
}

function parseRecoveryStops(flow: string, value: unknown): RecoveryStops {
  const r = value as Record<string, unknown>;
  const names = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
  if (
    (r.runs !== 'always' && r.runs !== 'dispatched') ||
    (r.subject !== 'lane' && r.subject !== 'task' && r.subject !== 'invocation') ||
    !names(r.pages) ||
    !names(r.deterministic)
  ) {
    throw invalid(
      `${flow}: recoveryStops must name its runs (always, dispatched), subject (lane, task, invocation), paging errors (pages) and the errors a re-run cannot get past (deterministic)`,
    );
  }
  return { runs: r.runs, subject: r.subject, pages: r.pages, deterministic: r.deterministic };
}

/** True when the event carried the input cut short (or not at all): DescribeExecution has the full text. */
export function inputTruncated(detail: StatusChangeDetail): boolean {
  return detail.input === null || detail.inputDetails?.truncated === true || detail.inputDetails?.included === false;
}
