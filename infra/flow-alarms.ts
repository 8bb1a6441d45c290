import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry, StepEntry } from '../src/registry/index.js';
import { RECOVERY_FLOWS, type RecoverySubject } from '../src/recovery/recovery-stops.js';
import { stopStateOf } from '../src/recovery/stop-state.js';
import { RUNBOOK_DIR } from '../src/docs/runbook/ref.js';
import { DIMENSIONS, METRICS } from '../src/telemetry/metric-names.js';
import { loadFlowDefinition } from './asl.js';
import { chunks, cutpointMetric, PERIOD, stepName, sumOf } from './cutpoint-metrics.js';

export interface FlowAlarmsProps {
  flow: FlowEntry;
  stateMachine: IStateMachine;
  /** Every registry step's function, by placeholder. */
  functions: ReadonlyMap<string, IFunction>;
  /** What the alarm names start with (infra/operations-stack.ts): `CutpointWorkflows-ops`. */
  namePrefix: string;
  /** Where the runbook pages are (the stage's runbookBaseUrl); absent: the repository path. */
  runbookBase?: string;
}

/**
 * The alarms of one flow, each with what happened and the first thing to do (the
 * operations topic action comes from infra/alarm-actions.ts):
 * - Failed: a flow with a recovery rule, or one that runs recoveries (every designed stop
 *   classified: src/recovery/recovery-stops.ts), alarms on ExecutionOutcome{Outcome=failed},
 *   the recovery dispatcher's classification, so a designed stop (a Fail state the flow
 *   means, handed to its recovery) is not an incident; any other flow alarms on AWS/States
 *   ExecutionsFailed (nothing else will act on any of its failures; this also covers the
 *   EXPRESS stream-append, which emits no status events the dispatcher could classify).
 * - RecoveryStopped: a flow that runs recoveries alarms on ExecutionOutcome{Outcome=
 *   recovery-stopped}: a recovery execution ended in a designed stop that leaves work for an
 *   operator (the dispatcher published its notice to the incident topic). Its failures,
 *   timeouts and aborts are noticed there too, as unclassified (src/recovery/failure-notice.ts).
 * - TimedOut, Throttled: AWS/States ExecutionsTimedOut and ExecutionThrottled, direct.
 * - LambdaThrottles, UnexpectedErrors: summed over the flow's functions. Lambda Errors
 *   would count designed errors (a named refusal is a function error too), and
 *   `Errors − Σ StepError` needs one metric per error name (20+ for a delivery step, over
 *   CloudWatch's 10 metrics per alarm; SEARCH is not allowed in alarms). So: the handlers'
 *   UnexpectedError {Step}; what a handler cannot report (a Lambda killed at its timeout)
 *   is alarmed per function (infra/step-alarms.ts). A flow of more than 10 functions gets
 *   one alarm per 10 (suffix -1, -2).
 * Recovery outcomes are alarmed across flows (infra/recovery-alarms.ts).
 */
export class FlowAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  private readonly prefix: string;

  constructor(
    scope: Construct,
    id: string,
    { flow, stateMachine, functions, namePrefix, runbookBase = RUNBOOK_DIR }: FlowAlarmsProps,
  ) {
    super(scope, id);
    const name = flow.name;
    this.prefix = `${namePrefix}-${name}`;
    const open = `Open the newest failed execution of ${name} in the Step Functions console: its last event names the step, the error name and the cause. ${itemsLeftBy(name, runbookBase)}`;

    const recoveryFlow = RECOVERY_FLOWS[name];
    if (flow.recovery || recoveryFlow) {
      const started = flow.recovery
        ? ` ${flow.recovery.by} was started on it automatically; if that cannot resolve it, its own alarms fire.`
        : '';
      const noticed = recoveryFlow
        ? ` A recovery execution's failure is also on the incident topic: an unclassified notice naming the execution, its error and cause, the ${recoveryFlow.subject} and the command to inspect it (docs/operate.md "Recovery stops").`
        : '';
      this.alarm(
        'failed',
        cutpointMetric(METRICS.executionOutcome, { [DIMENSIONS.flow]: name, [DIMENSIONS.outcome]: 'failed' }),
        `${name}: an execution failed with an error that is not a designed stop.${started}${noticed} ${open}`,
      );
    } else {
      this.alarm(
        'failed',
        stateMachine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
        `${name}: an execution failed (no recovery flow is declared for ${name}: nothing retries it). ${open} Fix the cause, then start the flow again with the same input (every step is idempotent by exact identity).`,
      );
    }
    if (recoveryFlow) {
      const paging = Object.keys(recoveryFlow.stops).filter((state) => recoveryFlow.stops[state]!.pages);
      this.alarm(
        'recovery-stopped',
        cutpointMetric(METRICS.executionOutcome, { [DIMENSIONS.flow]: name, [DIMENSIONS.outcome]: 'recovery-stopped' }),
        `${name}: a recovery execution ended in a designed stop that needs an operator (Fail state ${paging.join(', ')}): the ${recoveryFlow.subject} it works on is not recovered. The incident topic has a notice naming the execution, the ${recoveryFlow.subject}, the error, the state and the one command that resolves it (docs/operate.md "Recovery stops"). ${runbookOfStop(recoveryFlow.subject, runbookBase)} ${open}`,
      );
    }
    const timedOutNoticed = recoveryFlow
      ? ` A recovery execution that timed out is on the incident topic too (an unclassified notice).`
      : '';
    this.alarm(
      'timed-out',
      stateMachine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
      `${name}: an execution ran past its TimeoutSeconds and was stopped by Step Functions${flow.recovery?.on.includes('TIMED_OUT') ? ` (${flow.recovery.by} was started on it)` : ''}.${timedOutNoticed} ${open} Check the flow's step latency on the operations dashboard.`,
    );
    this.alarm(
      'throttled',
      stateMachine.metric('ExecutionThrottled', { period: PERIOD, statistic: 'Sum' }),
      `${name}: Step Functions throttled state transitions of an execution (account StateTransition quota). Check who starts executions at this rate (schedules, retries); request a quota increase if the rate is intended.`,
    );

    const steps = loadFlowDefinition(name).steps.map((step) => ({ step, fn: functionOf(functions, step) }));
    chunks(steps).forEach((group, i, all) => {
      const part = all.length > 1 ? `-${i + 1}` : '';
      const which = all.length > 1 ? ` (functions ${i * 10 + 1}-${i * 10 + group.length} of ${steps.length})` : '';
      this.alarm(
        `lambda-throttles${part}`,
        sumOf(
          group.map(({ fn }) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })),
          `${name} Lambda throttles`,
        ),
        `${name}: Lambda throttled a step function${which}; the Task retries Lambda.TooManyRequestsException with backoff, but a long throttle fails the execution. Check the account's concurrent executions (AWS/Lambda ConcurrentExecutions) and reserved concurrency.`,
      );
      this.alarm(
        `unexpected-errors${part}`,
        sumOf(
          group.map(({ step }) => cutpointMetric(METRICS.unexpectedError, { [DIMENSIONS.step]: stepName(step) })),
          `${name} unexpected errors`,
        ),
        `${name}: a step ended with an error that has no stable name (a defect, or an SDK/driver fault)${which}. Search the step's log group for level ERROR (docs/deploy.md "Logs, metrics and traces"); the execution that saw it failed or retried.`,
      );
    });
  }

  /** `<prefix>-<flow>-<what>` (kebab-case, as docs/operate.md "Alarms and dashboards" lists them): the name an operator reads in the notification. */
  private alarm(what: string, metric: IMetric, alarmDescription: string): Alarm {
    const alarm = new Alarm(this, pascal(what), {
      alarmName: `${this.prefix}-${what}`,
      alarmDescription,
      metric,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.alarms.push(alarm);
    return alarm;
  }
}

/** Where a recovery stop of this subject points (src/recovery/stop-state.ts, the same page and command as its notice). */
/** Where the items a failed execution of `flow` left are listed, each with its state's runbook page and command. */
function itemsLeftBy(flow: string, base: string): string {
  const [subsystem, command] = flow.startsWith('stream-')
    ? ['stream', 'cutpoint stream describe <stream> --partition <p> --aws']
    : flow.startsWith('quality-')
      ? ['quality', 'cutpoint quality inspect-all --aws']
      : flow === 'commit-generation'
        ? ['generation', 'the task id in the execution input']
        : ['delivery', 'cutpoint delivery inspect-all --aws'];
  return `What it left: ${command}; each item names its runbook page (${base}/${subsystem}/<STATE>.md).`;
}

function runbookOfStop(subject: RecoverySubject, base: string): string {
  const known = stopStateOf(subject, subject === 'invocation' ? 'Delivery.IncidentRetained' : null, base);
  const unknown = stopStateOf(subject, null, base);
  if (known.state === unknown.state)
    return `The stop leaves ${known.state}: runbook ${known.runbook.page}; then: ${known.runbook.command}.`;
  return `INCIDENT_RETAINED: runbook ${known.runbook.page}; then: ${known.runbook.command}. Any other stop: ${unknown.runbook.command} shows the state, whose page it names (${unknown.runbook.page}).`;
}

function functionOf(functions: ReadonlyMap<string, IFunction>, step: StepEntry): IFunction {
  const fn = functions.get(step.placeholder);
  if (!fn) throw new Error(`no function was built for \${${step.placeholder}}`);
  return fn;
}

/** `lambda-throttles-1` -> `LambdaThrottles1`, `timed-out` -> `TimedOut`. */
function pascal(id: string): string {
  return id.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase());
}
