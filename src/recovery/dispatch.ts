import type { ExecutionFailure, FlowExecutions, MetricCounter, StartOutcome } from '../ports/executions.js';
import type { FaultInjector } from '../ports/faults.js';
import type { Notifier } from '../ports/notifier.js';
import { DIMENSIONS, METRICS, type ExecutionOutcome } from '../telemetry/metric-names.js';
import { executionOutcome } from './designed-stops.js';
import { inputTruncated, parseDispatchRequest, type DispatchRequest } from './dispatch-request.js';
import { RECOVERY_CUT_POINTS } from './cut-points.js';
import { recoveryExecutionName } from './execution-name.js';
import { recoveryFailureNotice } from './failure-notice.js';
import { recoveryStopNotice } from './stop-notice.js';

export interface DispatchDeps {
  executions: FlowExecutions;
  metrics: MetricCounter;
  /** The incident topic: a recovery that stopped where someone must act is published here. */
  notifier: Notifier;
  /** The start runs at cut point recovery.dispatch.start (inert in production). */
  faults: FaultInjector;
}

/** What the dispatcher did with one status-change event (its Lambda result; logs, not a contract). */
export interface DispatchResult {
  flow: string;
  executionArn: string;
  outcome: ExecutionOutcome;
  recovery: NoRecovery | { action: StartOutcome; flow: string; name: string };
}

type NoRecovery = {
  action: 'none';
  reason: 'not-declared' | 'status-not-recovered' | 'recovery-of-recovery' | 'deterministic-stop';
};
/** The recovery the dispatcher will start, decided before the notice (which names it) goes out. */
type RecoveryStart = { action: 'start'; flow: string; name: string; stateMachineArn: string; input: string };

/**
 * The recovery dispatcher (EventBridge → Lambda, every terminal status of every STANDARD
 * flow). It counts how the execution ended (ExecutionOutcome {Flow, Outcome}) and, where
 * the registry declares a recovery for that status, starts the recovering flow under a
 * name derived from the failed execution, with input `{recoveryOf, originalInput}`
 * (recoveryOf first, as the recovering ASL expects). A second event for the same failure
 * starts nothing: the name exists (`already-started`), and only a start that created the
 * execution is counted (RecoveryStarted {Flow}, the recovered flow). A recovery's own
 * failure never starts a recovery of a recovery (the recovering ASL's IsNestedRecovery is
 * the second guard), and a recovery execution that ended in a deterministic stop is not
 * re-run (src/recovery/recovery-stops.ts): one stop, one notice. An event whose input was
 * cut short is completed with DescribeExecution.
 * Every end of a recovery execution (src/recovery/recovery-stops.ts) but success and a
 * benign stop is noticed on the incident topic, once per execution: a designed stop that
 * pages is `recovery-stopped` (stop-notice.ts), any other failure, a timeout or an abort
 * is unclassified (failure-notice.ts, with its error and redacted cause). The notice goes
 * out first: a publish that fails fails the run, so Lambda retries it (a duplicate notice,
 * never a lost one).
 * Metrics are counted only once the start is settled: an attempt that throws (and is
 * retried by Lambda, then dead-lettered) counts nothing — so a start whose answer was lost
 * is found by the retry as already-started and RecoveryStarted may undercount by one; the
 * execution count itself is exact (one per failure, by name).
 */
export async function dispatchRecovery(input: unknown, deps: DispatchDeps): Promise<DispatchResult> {
  const request = parseDispatchRequest(input);
  const { flow, detail } = request;
  let full: Promise<string> | undefined;
  const inputText = () =>
    (full ??= inputTruncated(detail) ? deps.executions.inputOf(detail.executionArn) : Promise.resolve(detail.input!));
  const recoveryRun = await isRecoveryRun(request, inputText);
  const outcome = executionOutcome(
    detail.status,
    detail.error ?? undefined,
    request.designedStops,
    recoveryRun ? request.recoveryStops!.pages : [],
  );
  const plan = await recoveryPlan(request, inputText, recoveryRun);
  const notice = recoveryRun ? await noticeOf(request, outcome, plan, inputText, deps.executions) : undefined;
  if (notice) await deps.notifier.publish(notice.subject, notice.message);
  const recovery = plan.action === 'start' ? await start(plan, deps) : plan;
  deps.metrics.count(METRICS.executionOutcome, { [DIMENSIONS.flow]: flow, [DIMENSIONS.outcome]: outcome });
  if (recovery.action === 'started') deps.metrics.count(METRICS.recoveryStarted, { [DIMENSIONS.flow]: flow });
  return { flow, executionArn: detail.executionArn, outcome, recovery };
}

/** An ended execution, not successful, of a flow that runs recoveries, that is a recovery: every execution of an `always` flow, a dispatched one of a `dispatched` flow. */
async function isRecoveryRun(
  { recoveryStops, detail }: DispatchRequest,
  inputText: () => Promise<string>,
): Promise<boolean> {
  if (!recoveryStops || detail.status === 'SUCCEEDED') return false;
  return recoveryStops.runs === 'always' || isRecoveryInput(await inputText());
}

async function recoveryPlan(
  request: DispatchRequest,
  inputText: () => Promise<string>,
  recoveryRun: boolean,
): Promise<NoRecovery | RecoveryStart> {
  const { recovery, detail, flow, recoveryStops } = request;
  if (!recovery) return { action: 'none', reason: 'not-declared' };
  if (detail.status === 'SUCCEEDED' || !recovery.on.includes(detail.status))
    return { action: 'none', reason: 'status-not-recovered' };
  const originalInput = await inputText();
  if (isRecoveryInput(originalInput)) return { action: 'none', reason: 'recovery-of-recovery' };
  // Its notice (if it pages) is out; a re-run of the same input would stop, and page, the same way.
  if (recoveryRun && detail.status === 'FAILED' && detail.error && recoveryStops!.deterministic.includes(detail.error))
    return { action: 'none', reason: 'deterministic-stop' };
  // Key order matters: recoveryOf first (the recovering ASL and isRecoveryInput read it so).
  const body = JSON.stringify({ recoveryOf: detail.executionArn, originalInput });
  return {
    action: 'start',
    flow: recovery.by,
    name: recoveryExecutionName(flow, detail.name),
    stateMachineArn: recovery.stateMachineArn,
    input: body,
  };
}

/** The notice of a recovery execution's end: a designed stop that pages, or an unclassified failure, timeout or abort; nothing for a benign stop. */
async function noticeOf(
  { flow, detail, recoveryStops }: DispatchRequest,
  outcome: ExecutionOutcome,
  plan: NoRecovery | RecoveryStart,
  inputText: () => Promise<string>,
  executions: FlowExecutions,
) {
  if (outcome === 'recovery-stopped')
    return recoveryStopNotice(flow, recoveryStops!.subject, detail, await inputText());
  if (detail.status === 'SUCCEEDED' || outcome === 'designed-stop') return undefined;
  // The cause is read for the notice only; one that cannot be read never holds the notice back.
  const failure = await executions.failureOf(detail.executionArn).catch((): ExecutionFailure => ({}));
  return recoveryFailureNotice(
    flow,
    recoveryStops!.subject,
    { ...detail, status: detail.status },
    await inputText(),
    failure,
    plan.action === 'start' ? plan.name : undefined,
  );
}

async function start(
  { flow, name, stateMachineArn, input }: RecoveryStart,
  { executions, faults }: DispatchDeps,
): Promise<DispatchResult['recovery']> {
  // A lost answer is settled by the name: Lambda retries the event and the start finds it (already-started).
  const action = await faults.at(RECOVERY_CUT_POINTS.start, () => executions.start({ stateMachineArn, name, input }));
  return { action, flow, name };
}

/** An input the dispatcher built: a JSON object with `recoveryOf` (text that is not JSON is an original input). */
export function isRecoveryInput(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, 'recoveryOf');
  } catch {
    return text.trimStart().startsWith('{"recoveryOf"');
  }
}
