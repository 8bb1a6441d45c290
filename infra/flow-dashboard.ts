import { Aws } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  MathExpression,
  TextWidget,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry } from '../src/registry/index.js';
import {
  CUT_POINT_OUTCOMES,
  DIMENSIONS,
  EXECUTION_OUTCOMES,
  METRIC_NAMESPACE,
  METRICS,
} from '../src/telemetry/metric-names.js';
import { loadFlowDefinition } from './asl.js';
import { cutpointMetric, PERIOD, stepName, sumOf } from './cutpoint-metrics.js';

export interface DashboardFlow {
  flow: FlowEntry;
  stateMachine: IStateMachine;
}

/** The flows that move data, and the contract metrics that count it (left axis: rows/records, right: bytes). */
const THROUGHPUT: Readonly<Record<string, { title: string; count: string; bytes: string }>> = {
  'deliver-window': { title: 'Rows and bytes delivered', count: METRICS.rowsDelivered, bytes: METRICS.bytesDelivered },
  'publish-clickhouse': {
    title: 'Rows and bytes published',
    count: METRICS.rowsDelivered,
    bytes: METRICS.bytesDelivered,
  },
  'stream-append': {
    title: 'Records and bytes appended',
    count: METRICS.recordsAppended,
    bytes: METRICS.bytesAppended,
  },
};

/** CloudWatch's limit of widgets on one dashboard. */
export const DASHBOARD_WIDGET_LIMIT = 500;

/**
 * One operations dashboard with a row per flow (a dashboard per flow would cost one
 * dashboard-month each past the free three, and 15 flows x at most 5 widgets stays far below
 * DASHBOARD_WIDGET_LIMIT): the flow's name and description, then its executions by outcome
 * (ExecutionOutcome, the dispatcher's classification; an EXPRESS flow emits no status
 * events, so AWS/States counts), its cut points by outcome (CutPointOutcome summed over the
 * flow's steps), p50/p99 latency per step (AWS/Lambda Duration), and what it delivered or
 * appended where it moves data. A first row shows the recovery outcomes and the recoveries
 * started, by flow (Metrics Insights GROUP BY: whichever flows report them).
 */
export class FlowDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(
    scope: Construct,
    id: string,
    {
      flows,
      functions,
      namePrefix,
    }: { flows: DashboardFlow[]; functions: ReadonlyMap<string, IFunction>; namePrefix: string },
  ) {
    super(scope, id);
    // Dashboard names are global to the account (alarm names are per region): the region keeps two deployments apart.
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `${namePrefix}-${Aws.REGION}`,
    });
    const byFlow = (metricName: string, groupBy: string) =>
      new MathExpression({
        expression: `SELECT SUM(${metricName}) FROM "${METRIC_NAMESPACE}" GROUP BY ${groupBy}`,
        period: PERIOD,
        label: '',
      });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Recovery outcomes by flow',
        left: [byFlow(METRICS.recoveryOutcome, `${DIMENSIONS.flow}, ${DIMENSIONS.outcome}`)],
        stacked: true,
        period: PERIOD,
        width: 12,
      }),
      new GraphWidget({
        title: 'Recoveries started by flow',
        left: [byFlow(METRICS.recoveryStarted, DIMENSIONS.flow)],
        stacked: true,
        period: PERIOD,
        width: 12,
      }),
    );
    for (const { flow, stateMachine } of flows) {
      const steps = loadFlowDefinition(flow.name).steps.map((step) => {
        const fn = functions.get(step.placeholder);
        if (!fn) throw new Error(`no function was built for \${${step.placeholder}}`);
        return { name: stepName(step), fn };
      });
      const throughput = THROUGHPUT[flow.name];
      const width = Math.floor(24 / (1 + (steps.length > 0 ? 2 : 0) + (throughput ? 1 : 0)));
      const graphs: GraphWidget[] = [executions(flow, stateMachine, width)];
      if (steps.length > 0)
        graphs.push(
          cutPoints(
            steps.map((s) => s.name),
            width,
          ),
          latency(steps, width),
        );
      if (throughput) {
        const of = (metricName: string) => cutpointMetric(metricName, { [DIMENSIONS.flow]: flow.name }, metricName);
        graphs.push(
          new GraphWidget({
            title: throughput.title,
            left: [of(throughput.count)],
            right: [of(throughput.bytes)],
            period: PERIOD,
            width,
          }),
        );
      }
      const rows: IWidget[][] = [
        [new TextWidget({ markdown: `### ${flow.name} (${flow.type})\n${flow.description}`, width: 24, height: 2 })],
        graphs,
      ];
      for (const row of rows) this.dashboard.addWidgets(...row);
    }
  }
}

function executions(flow: FlowEntry, stateMachine: IStateMachine, width: number): GraphWidget {
  const options = { period: PERIOD, statistic: 'Sum' };
  const left: IMetric[] =
    flow.type === 'STANDARD'
      ? EXECUTION_OUTCOMES.map((outcome) =>
          cutpointMetric(
            METRICS.executionOutcome,
            { [DIMENSIONS.flow]: flow.name, [DIMENSIONS.outcome]: outcome },
            outcome,
          ),
        )
      : [
          stateMachine.metricSucceeded({ ...options, label: 'succeeded' }),
          stateMachine.metricFailed({ ...options, label: 'failed' }),
          stateMachine.metricTimedOut({ ...options, label: 'timed-out' }),
          stateMachine.metricAborted({ ...options, label: 'aborted' }),
        ];
  return new GraphWidget({ title: 'Executions by outcome', left, stacked: true, period: PERIOD, width });
}

function cutPoints(steps: string[], width: number): GraphWidget {
  const left = CUT_POINT_OUTCOMES.map((outcome) =>
    sumOf(
      steps.map((step) =>
        cutpointMetric(METRICS.cutPointOutcome, { [DIMENSIONS.step]: step, [DIMENSIONS.outcome]: outcome }),
      ),
      outcome,
      outcome.replace(/[^a-z]/g, ''),
    ),
  );
  return new GraphWidget({ title: 'Cut points by outcome', left, stacked: true, period: PERIOD, width });
}

function latency(steps: Array<{ name: string; fn: IFunction }>, width: number): GraphWidget {
  const left = steps.flatMap(({ name, fn }) =>
    ['p50', 'p99'].map((statistic) => fn.metricDuration({ period: PERIOD, statistic, label: `${name} ${statistic}` })),
  );
  return new GraphWidget({ title: 'Step latency p50 / p99 (ms)', left, period: PERIOD, width });
}
