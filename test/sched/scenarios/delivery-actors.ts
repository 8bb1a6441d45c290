import { LIVE_ACTION_RUNNERS } from '../../../src/delivery/recovery/actions.js';
import { inspectInvocation } from '../../../src/delivery/journal/listing.js';
import type { RecoveryProjection } from '../../../src/domain/delivery/identifiers.js';
import { isTerminal, JournalUnavailableError } from '../../../src/domain/delivery/journal-states.js';
import { type LiveAction } from '../../../src/domain/delivery/action-guide.js';
import { loadAsl } from '../../../src/local/asl.js';
import type { FlowResult } from '../../../src/local/flow-runner.js';
import { designedStopErrors } from '../../../src/recovery/designed-stops.js';
import type { DispatchResult } from '../../../src/recovery/dispatch.js';
import { dispatchRecovery } from '../../../src/recovery/dispatch.js';
import type { DispatchTarget } from '../../../src/recovery/dispatch-request.js';
import { DELIVER } from '../../support/delivery-history/exactly-once.js';
import { LocalFlowExecutions, localStateMachineArn } from '../../support/local-executions.js';
import { OpHistory } from '../../support/sched/op-history.js';
import { recordingNotifier } from '../../support/recording-notifier.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import {
  flowOptions,
  operatorDeps,
  SELECTOR,
  type DeliveryWorld,
  type FlowRun,
  type ScheduleRoute,
} from './delivery-world.js';
import { actionAnswered, actionThrew, executionEnded } from './delivery-ops.js';

/**
 * The delivery scenario's actors, each a top-level actor of the scheduler:
 * - `cutpoint delivery run` starting deliver-window, and (some schedules) the same
 *   StartExecution again: same name and input, so Step Functions' name rule answers it;
 * - for every FAILED execution, the status-change event EventBridge delivers to the
 *   recovery dispatcher (twice in some schedules: at least once), each delivery retried
 *   by Lambda when its handler throws; a recovery flow it starts is an actor of its own;
 * - (some schedules) an operator running the permitted recovery command in process, as
 *   `cutpoint delivery reconcile|resume|retire` does: impatient (while the flow may still
 *   run) or after the failure (racing the automatic recovery).
 * `settle` is the operator finishing, faults off: the permitted actions in the runbook's
 * order until the journal is final or offers none.
 */

export const ACTION_ORDER: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];
/** The pseudo cut point an actor waits at (an operator, a retried command): no effect, never faulted. */
export const SCHED_WAIT = 'sched.wait';

export interface History {
  /** Every flow execution that ended: deliver-window and the recovery flows the dispatcher started. */
  runs: FlowRun[];
  dispatches: DispatchResult[];
  /** The operator's and settle's actions, as `action → state` or `action threw Name`. */
  actions: string[];
  /** deliver-window's executions (Step Functions' name rules). */
  deliveries: LocalFlowExecutions;
  /** The recovery executions the dispatcher started. */
  recoveries: LocalFlowExecutions;
  /** The clients' operations, as they were told their outcomes (delivery-ops.ts). */
  ops: OpHistory;
}

/** The recovery flow the dispatcher starts for a failed deliver-window. */
const RECOVERY_FLOW = 'delivery-reconcile';
const DISPATCH_TARGET: DispatchTarget = {
  flow: 'deliver-window',
  designedStops: designedStopErrors(loadAsl('deliver-window')),
  recovery: {
    by: RECOVERY_FLOW,
    stateMachineArn: localStateMachineArn(RECOVERY_FLOW),
    on: ['FAILED', 'TIMED_OUT', 'ABORTED'],
  },
};
/** Lambda runs an asynchronous event up to 3 times when its handler throws. */
const LAMBDA_ATTEMPTS = 3;

export function newHistory(world: DeliveryWorld, s: Scheduler, r: ScheduleRoute, duplicateEvents: boolean): History {
  const runs: FlowRun[] = [];
  const ops = new OpHistory();
  // An execution is invoked by the actor that started it (`start`, a dispatch), when it starts.
  const launch =
    (label: string, f: string, after?: (result: FlowResult) => void) =>
    (name: string, run: () => Promise<FlowResult>) => {
      const op = ops.invoke(s.current()?.name ?? label, f, { execution: name });
      return s.spawn(`${label}:${name}`, async () => {
        const result = await run();
        executionEnded(op, result);
        runs.push({ ...result, label: name });
        s.note(`${name} ended ${result.status}${result.error ? ` ${result.error}` : ''}`);
        after?.(result);
        return result;
      });
    };
  const h: History = {
    runs,
    dispatches: [],
    actions: [],
    deliveries: new LocalFlowExecutions(
      flowOptions(world, s, 'exec'),
      launch('flow', DELIVER, (result) => delivered(s, r, h, result, duplicateEvents)),
    ),
    recoveries: new LocalFlowExecutions(flowOptions(world, s, 'recovery'), launch('flow', RECOVERY_FLOW)),
    ops,
  };
  return h;
}

/**
 * `cutpoint delivery run`: StartExecution of deliver-window under the schedule's name — and,
 * for a duplicate, the same StartExecution again a few moves later (a retried command after
 * a lost answer). Step Functions' name rule decides: the same name and input while it runs
 * is the same execution (already-started), so exactly one execution delivers the window.
 */
export function startDelivery(s: Scheduler, r: ScheduleRoute, h: History, duplicate: boolean): void {
  void s.spawn('start', async () => {
    const request = {
      stateMachineArn: localStateMachineArn('deliver-window'),
      name: r.executionName,
      input: JSON.stringify(r.input),
    };
    s.note(`start: ${await h.deliveries.start(request)}`);
    if (!duplicate) return;
    const waits = s.rng.int(1, 20);
    for (let i = 0; i < waits; i++) await s.faults.at(SCHED_WAIT, () => Promise.resolve());
    const again = await h.deliveries.start(request);
    s.count('duplicate-start', `duplicate StartExecution ${r.executionName}: ${again}`);
  });
}

/** A deliver-window execution ended: a failure goes to the dispatcher, once or twice (EventBridge is at least once). */
function delivered(s: Scheduler, r: ScheduleRoute, h: History, result: FlowResult, duplicateEvents: boolean): void {
  if (result.status !== 'FAILED') return;
  const detail = {
    executionArn: result.executionArn,
    name: r.executionName,
    status: 'FAILED' as const,
    input: JSON.stringify(r.input),
    inputDetails: { included: true },
    error: result.error,
  };
  for (let i = 0; i < (duplicateEvents ? 2 : 1); i++) {
    if (i > 0) s.count('duplicate-event', `EventBridge delivers the failure of ${r.executionName} again`);
    void s.spawn(`dispatch#${i}`, () => dispatch(s, h, { ...DISPATCH_TARGET, detail }));
  }
}

async function dispatch(s: Scheduler, h: History, event: unknown): Promise<void> {
  const metrics = { count: () => undefined };
  for (let attempt = 1; attempt <= LAMBDA_ATTEMPTS; attempt++) {
    try {
      const result = await dispatchRecovery(event, {
        executions: h.recoveries,
        metrics,
        notifier: recordingNotifier(),
        faults: s.faults,
      });
      h.dispatches.push(result);
      s.count(
        'dispatch',
        `dispatch: ${result.recovery.action}${'name' in result.recovery ? ` ${result.recovery.name}` : ''}`,
      );
      return;
    } catch (error) {
      s.note(`dispatch attempt ${attempt} threw ${(error as Error).name}`);
    }
  }
}

/** The permitted action inspect offers now (runbook order), or why there is none. */
async function nextAction(
  world: DeliveryWorld,
  r: ScheduleRoute,
): Promise<{ action?: LiveAction; projection?: RecoveryProjection }> {
  try {
    const projection = await inspectInvocation(world.stores.ports, r.invocationId);
    return { action: ACTION_ORDER.find((a) => projection.permitted_actions.includes(a)), projection };
  } catch (error) {
    if (error instanceof JournalUnavailableError && error.missing) return {};
    throw error;
  }
}

/**
 * One live action in process, its outcome in the history (a refusal or a retained outcome is
 * an answer, not a failure). A command that died (crash, lost answer, failed effect) is run
 * again, up to 4 times, as an operator re-runs it and the delivery-<action> flow's Retry does.
 */
async function act(
  world: DeliveryWorld,
  s: Scheduler,
  r: ScheduleRoute,
  h: History,
  action: LiveAction,
  session: string,
): Promise<void> {
  for (let attempt = 1; attempt <= 4; attempt++) {
    const tag = attempt === 1 ? session : `${session}.${attempt}`;
    // Each run of the command is a process of its own: one that died is not resumed, it is run again.
    const op = h.ops.invoke(tag, action, { invocationId: r.invocationId });
    try {
      const result = await LIVE_ACTION_RUNNERS[action](
        { invocationId: r.invocationId, manifestText: r.manifestText, selector: SELECTOR, session: tag },
        operatorDeps(world, r),
      );
      actionAnswered(op, result);
      h.actions.push(`${tag} ${action} → ${result.state}`);
      s.note(`operator: ${h.actions.at(-1)}`);
      return;
    } catch (error) {
      const { transient } = actionThrew(op, error);
      h.actions.push(`${tag} ${action} threw ${(error as Error).name}`);
      s.note(`operator: ${h.actions.at(-1)}`);
      if (!transient) return;
    }
  }
}

/**
 * The operator: waits a few moves (impatient) or until an execution failed (racing the
 * automatic recovery), then runs what inspect permits, up to twice.
 */
export function startOperator(
  world: DeliveryWorld,
  s: Scheduler,
  r: ScheduleRoute,
  h: History,
  impatient: boolean,
): void {
  void s.spawn(impatient ? 'operator:impatient' : 'operator:after-failure', async () => {
    for (let round = 1; round <= 2; round++) {
      const waits = s.rng.int(1, impatient ? 12 : 4);
      for (let i = 0; i < waits || (!impatient && i < 40 && !h.runs.some((run) => run.status === 'FAILED')); i++) {
        await s.faults.at(SCHED_WAIT, () => Promise.resolve());
      }
      const { action } = await nextAction(world, r);
      if (!action) continue;
      s.count('operator-race', `operator runs ${action}`);
      await act(world, s, r, h, action, `operator-${s.seed}-${round}`);
    }
  });
}

/** The operator finishing, faults off: permitted actions until the journal is final or offers none. */
export async function finish(world: DeliveryWorld, s: Scheduler, r: ScheduleRoute, h: History): Promise<void> {
  for (let round = 1; round <= 6; round++) {
    const { action, projection } = await nextAction(world, r);
    if (!action || !projection || isTerminal(projection.state)) return;
    await act(world, s, r, h, action, `settle-${s.seed}-${round}`);
  }
}
