import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { cutpoint } from '../src/docs/runbook/commands.js';
import { runbookLinkOf } from '../src/docs/runbook/ref.js';
import { countsAtOnce, RETAINED_STATES, RETAINED_SUBSYSTEM, type RetainedKind } from '../src/operations/retained.js';
import { DIMENSIONS, METRIC_NAMESPACE, METRICS } from '../src/telemetry/metric-names.js';

/** How often the sweep counts (infra/retained-sweep.ts). */
export const SWEEP_RATE = Duration.minutes(5);
/** The alarms' period: three sweeps. A period with no count at all means the sweep stopped. */
export const RETAINED_PERIOD = Duration.minutes(15);

/** The command that lists the items of a kind, each with its runbook (inspect-all). */
export const LIST_COMMAND: Record<RetainedKind, string> = {
  custody: cutpoint('delivery inspect-all --format json'),
  governance: cutpoint('quality inspect-all --format json'),
  // Lanes have no index to list: the sweep's result (its log) names the suspended ones.
  lane: `the sweep's log (suspendedLanes), then ${cutpoint('stream describe "$STREAM"')}`,
};

/** The description of one retained state's alarm: what holds, the page, how to find the item, the one command. */
export function retainedDescription(
  kind: RetainedKind,
  state: string,
  retainedAfterMinutes: number,
  base?: string,
): string {
  const { page, command } = runbookLinkOf(RETAINED_SUBSYSTEM[kind], state, base === undefined ? {} : { base });
  const when =
    kind === 'lane'
      ? `at once when SuspendLane suspended it, once an append's own claim has not moved for ${retainedAfterMinutes} minutes`
      : countsAtOnce(state)
        ? 'from the moment it is written'
        : `once it has not moved for ${retainedAfterMinutes} minutes`;
  return [
    `retained ${kind} in ${state} (counted ${when}): an item waits for an operator.`,
    `Runbook: ${page}.`,
    `Find it: ${LIST_COMMAND[kind]} (items in state ${state}; each names its runbook).`,
    `Then, per the page: ${command}.`,
    `Stays in ALARM until no item is in ${state} (the sweep counts every ${SWEEP_RATE.toMinutes()} min); no count for ${RETAINED_PERIOD.toMinutes()} min (the sweep stopped or failed: its log group) alarms too.`,
  ].join(' ');
}

/**
 * One alarm per retained (kind, state) on the sweep's RetainedItems gauge (Maximum over
 * three sweeps ≥ 1). Not auto-clearing: the gauge is put every run, zeros included, so the
 * alarm returns to OK only once a sweep counts no item in the state — not five minutes after
 * an event. Missing data is BREACHING: a sweep that stopped (schedule disabled, function
 * failing, journal inconsistent) pages on every state instead of silently reading as "none".
 */
export class RetainedAlarms extends Construct {
  readonly alarms: Alarm[];

  constructor(
    scope: Construct,
    id: string,
    {
      namePrefix,
      retainedAfterMinutes,
      runbookBase,
    }: { namePrefix: string; retainedAfterMinutes: number; runbookBase?: string },
  ) {
    super(scope, id);
    this.alarms = RETAINED_STATES.map(
      ({ kind, state }) =>
        new Alarm(this, `${kind}-${state}`, {
          alarmName: `${namePrefix}-retained-${kind}-${state.toLowerCase().replace(/_/g, '-')}`,
          alarmDescription: retainedDescription(kind, state, retainedAfterMinutes, runbookBase),
          metric: new Metric({
            namespace: METRIC_NAMESPACE,
            metricName: METRICS.retainedItems,
            dimensionsMap: { [DIMENSIONS.kind]: kind, [DIMENSIONS.state]: state },
            statistic: 'Maximum',
            period: RETAINED_PERIOD,
          }),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.BREACHING,
        }),
    );
  }
}
