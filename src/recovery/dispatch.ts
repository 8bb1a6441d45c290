import type { FlowExecutions, MetricCounter, StartOutcome } from '../ports/executions.js';
import type { FaultInjector } from '../ports/faults.js';
import type { Notifier } from '../ports/notifier.js';
import { DIMENSIONS, METRICS, type ExecutionOutcome } from '../telemetry/metric-names.js';
import { executionOutcome } from './designed-stops.js';
import { inputTruncated, parseDispatchRequest, type DispatchRequest } from './dispatch-request.js';
import { RECOVERY_CUT_POINTS } from './cut-points.js';
import { recoveryExecutionName } from './execution-name.js';
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
  recovery:
    | { action: 'none'; reason: 'not-declared' | 'status-not-recovered' | 'recovery-of-recovery' }
    | { action: StartOutcome; flow: string; name: string };
}

/**
 * The recovery dispatcher (EventBridge → Lambda, every terminal status of every STANDARD
 * flow). It counts how the execution ended (ExecutionOutcome {Flow, Outcome}) and, where
 * the registry declares a recovery for that status, starts the recovering flow under a
 * name derived from the failed execution, with input `{recoveryOf, originalInput}`
 * (recoveryOf first, as the recovering ASL expects). A second event for the same failure
 * starts nothing: the name exists (`already-started`), and only a start that created the
 * execution is counted (RecoveryStarted {Flow}, the recovered flow). A recovery's own
 * failure never starts a recovery of a recovery (the recovering ASL's IsNestedRecovery is
 * the second guard). An event whose input was cut short is completed with DescribeExecution.
 * A recovery execution (src/recovery/recovery-stops.ts) that ended in a designed stop that
 * pages is `recovery-stopped`, and its notice goes to the incident topic first: a publish
 * that fails fails the run, so Lambda retries it (a duplicate notice, never a lost one).
 * Metrics are counted only once the start is settled: an attempt that throws (and is
 * retried by Lambda, then dead-lettered) counts nothing — so a start whose answer was lost
 * is found by the retry as already-started and RecoveryStarted may undercount by one; the
 * execution count itself is exact (one per failure, by name).
 */
export async function dispatchRecovery(input: unknown, deps: DispatchDeps): Promise<DispatchResult> {
  const request = parseDispatchRequest(input);
  const { flow, detail } = request;
  let full: Promise<string> | undefined;
  const inputText = () => (full ??= inputTruncated(detail) ? deps.executions.inputOf(detail.executionArn) : Promise.resolve(detail.input!));
  const paging = (await isPagingStop(request, inputText)) ? request.recoveryStops!.pages : [];
  const outcome = executionOutcome(detail.status, detail.error ?? undefined, request.designedStops, paging);
  if (outcome === 'recovery-stopped') {
    const notice = recoveryStopNotice(flow, request.recoveryStops!.subject, detail, await inputText());
    await deps.notifier.publish(notice.subject, notice.message);
  }
  const recovery = await recover(request, deps, inputText);
  deps.metrics.count(METRICS.executionOutcome, { [DIMENSIONS.flow]: flow, [DIMENSIONS.outcome]: outcome });
  if (recovery.action === 'started') deps.metrics.count(METRICS.recoveryStarted, { [DIMENSIONS.flow]: flow });
  return { flow, executionArn: detail.executionArn, outcome, recovery };
}

/** A FAILED recovery execution whose error is one its flow's paging stops end with. */
async function isPagingStop({ recoveryStops, detail }: DispatchRequest, inputText: () => Promise<string>): Promise<boolean> {
  if (!recoveryStops || detail.status !== 'FAILED' || !detail.error || !recoveryStops.pages.includes(detail.error)) return false;
  return recoveryStops.runs === 'always' || isRecoveryInput(await inputText());
}

async function recover(request: DispatchRequest, { executions, faults }: DispatchDeps, inputText: () => Promise<string>): Promise<DispatchResult['recovery']> {
  const { recovery, detail, flow } = request;
  if (!recovery) return { action: 'none', reason: 'not-declared' };
  if (detail.status === 'SUCCEEDED' || !recovery.on.includes(detail.status)) return { action: 'none', reason: 'status-not-recovered' };
  const originalInput = await inputText();
  if (isRecoveryInput(originalInput)) return { action: 'none', reason: 'recovery-of-recovery' };
  const name = recoveryExecutionName(flow, detail.name);
  // Key order matters: recoveryOf first (the recovering ASL and isRecoveryInput read it so).
  const body = JSON.stringify({ recoveryOf: detail.executionArn, originalInput });
  // A lost answer is settled by the name: Lambda retries the event and the start finds it (already-started).
  const action = await faults.at(RECOVERY_CUT_POINTS.start, () => executions.start({ stateMachineArn: recovery.stateMachineArn, name, input: body }));
  return { action, flow: recovery.by, name };
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
