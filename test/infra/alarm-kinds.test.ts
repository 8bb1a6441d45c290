import type { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CutpointApp } from '../../infra/app.js';
import { LIST_COMMAND, RETAINED_PERIOD } from '../../infra/retained-alarms.js';
import { runbookLinkOf } from '../../src/docs/runbook/ref.js';
import { DEFAULT_RETAINED_AFTER_MINUTES, RETAINED_STATES, RETAINED_SUBSYSTEM } from '../../src/operations/retained.js';
import { FLOWS, STEPS, stepByHandler } from '../../src/registry/index.js';
import {
  ALARMING_RECOVERY_OUTCOMES,
  CUT_POINT_OUTCOMES,
  METRIC_NAMESPACE,
  METRICS,
} from '../../src/telemetry/metric-names.js';
import { alarmsOf, metricsOf } from './support/alarm-props.js';
import { builtApp } from './support/built-app.js';
import { logicalId } from './support/logical-id.js';
import { operationsTemplate } from './support/operations-template.js';

/**
 * The alarms of each kind the operations stack holds (test/infra/alarms.test.ts: that every
 * alarm reaches someone, and where they live): step timeouts, recovery outcomes, retained
 * items, the authority table, and the operations dashboard.
 */

// One build per worker (support/built-app.ts); templates only.
let built: CutpointApp;
let workflows: Template;
/** The nested operations stack, parameters resolved. */
let ops: Template;

beforeAll(() => {
  built = builtApp();
  workflows = Template.fromStack(built.workflows as Stack);
  ops = operationsTemplate(built.workflows);
}, 600_000);

const fnArnRef = (placeholder: string) => ({ Ref: logicalId(built.workflows.functions.get(placeholder)!) });
const stepName = (placeholder: string) => placeholder.replace(/FunctionArn$/, '');
const byName = (name: string) => Object.values(alarmsOf(ops)).find((a) => a.AlarmName === name);
/** The prefix of every alarm name of the operations stack (infra/operations-stack.ts). */
const OPS = 'CutpointWorkflows-ops';

describe('step timeout alarms', () => {
  it('every registry step alarms when its Lambda ran to 98% of its own timeout (what its handler cannot report)', () => {
    for (const step of STEPS) {
      const alarm = byName(`${OPS}-step-${stepName(step.placeholder)}-timeout`);
      expect(alarm, step.placeholder).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        Statistic: 'Maximum',
        Threshold: Math.floor(step.timeoutSeconds * 1000 * 0.98),
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
      expect(metricsOf(alarm!)[0]!.Dimensions).toEqual({ FunctionName: fnArnRef(step.placeholder) });
    }
  });
});

describe('recovery outcome alarms', () => {
  it('one alarm per alarming outcome of the contract, over every flow that reports it (a Metrics Insights sum, no flow list to drift)', () => {
    const recovery = Object.values(alarmsOf(ops)).filter((a) => a.AlarmName?.startsWith(`${OPS}-recovery-`));
    expect(recovery.map((a) => a.AlarmName).sort()).toEqual(
      ALARMING_RECOVERY_OUTCOMES.map((o) => `${OPS}-recovery-${o}`).sort(),
    );
    for (const outcome of ALARMING_RECOVERY_OUTCOMES) {
      const alarm = byName(`${OPS}-recovery-${outcome}`)!;
      expect(alarm.Metrics).toEqual([
        expect.objectContaining({
          Expression: `SELECT SUM(${METRICS.recoveryOutcome}) FROM "${METRIC_NAMESPACE}" WHERE Outcome = '${outcome}'`,
          Period: 300,
          ReturnData: true,
        }),
      ]);
    }
    // 'resolved' needs no one.
    expect(JSON.stringify(recovery)).not.toContain("'resolved'");
  });
});

describe('retained-items alarms', () => {
  it("one alarm per retained (kind, state) on the sweep's gauge, not auto-clearing: Maximum over three sweeps, missing data breaching; each names its runbook page, the list command and the one command", () => {
    const retained = Object.values(alarmsOf(ops)).filter((a) => a.AlarmName?.startsWith(`${OPS}-retained-`));
    expect(retained.length).toBe(RETAINED_STATES.length);
    for (const { kind, state } of RETAINED_STATES) {
      const name = `${OPS}-retained-${kind}-${state.toLowerCase().replace(/_/g, '-')}`;
      const alarm = byName(name)!;
      expect(alarm, name).toBeDefined();
      expect(alarm).toMatchObject({
        Namespace: METRIC_NAMESPACE,
        MetricName: METRICS.retainedItems,
        Dimensions: [
          { Name: 'Kind', Value: kind },
          { Name: 'State', Value: state },
        ],
        Statistic: 'Maximum',
        Period: RETAINED_PERIOD.toSeconds(),
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'breaching',
      });
      const link = runbookLinkOf(RETAINED_SUBSYSTEM[kind], state);
      expect(alarm.AlarmDescription).toContain(link.page);
      expect(alarm.AlarmDescription).toContain(link.command);
      expect(alarm.AlarmDescription).toContain(LIST_COMMAND[kind]);
    }
    // The sweep that feeds them: a schedule invoking the registry step with the input its alarms describe.
    const sweep = stepByHandler('operations/sweep-retained').placeholder;
    workflows.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(built.workflows.functions.get(sweep)!), 'Arn'] },
          // No maintenanceLanes in this stage: no lane to read (test/infra/maintenance-schedule.test.ts gives some).
          Input: JSON.stringify({ retainedAfterMinutes: DEFAULT_RETAINED_AFTER_MINUTES, lanes: [] }),
        }),
      ],
    });
  });
});

describe('authority table alarms', () => {
  it('throttled requests and system errors of the authority table, over exactly the operations the registry uses', () => {
    const actions = new Set(STEPS.flatMap((s) => s.table));
    const expected = [
      ...['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'].filter((op) =>
        actions.has(`dynamodb:${op}` as never),
      ),
      ...(actions.has('dynamodb:ConditionCheckItem') ? ['TransactWriteItems'] : []),
      // A snapshot read of a few items (authority getTogether) is one TransactGetItems.
      ...(actions.has('dynamodb:GetItem') ? ['TransactGetItems'] : []),
    ].sort();
    for (const [what, metricName] of [
      ['throttled', 'ThrottledRequests'],
      ['system-errors', 'SystemErrors'],
    ] as const) {
      const metrics = metricsOf(byName(`${OPS}-authority-table-${what}`)!);
      expect(metrics.map((m) => m.Dimensions.Operation).sort()).toEqual(expected);
      for (const m of metrics)
        expect(m).toMatchObject({
          Namespace: 'AWS/DynamoDB',
          MetricName: metricName,
          Dimensions: { TableName: { 'Fn::ImportValue': 'CutpointStateful-TableName' } },
        });
    }
  });
});

describe('operations dashboard', () => {
  it("one dashboard, a row per flow, naming the contract's metrics", () => {
    workflows.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    const dashboards = Object.values(ops.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]!.Properties.DashboardName).toEqual({
      'Fn::Join': ['', [`${OPS}-`, { Ref: 'AWS::Region' }]],
    });
    const body = JSON.stringify(
      ops.toJSON().Resources[logicalId(built.workflows.operations.dashboard.dashboard)].Properties.DashboardBody,
    );
    for (const flow of FLOWS) expect(body).toContain(`### ${flow.name} (${flow.type})`);
    for (const metric of [
      METRICS.executionOutcome,
      METRICS.cutPointOutcome,
      METRICS.rowsDelivered,
      METRICS.bytesDelivered,
      METRICS.recordsAppended,
      METRICS.bytesAppended,
    ]) {
      expect(body).toContain(`\\"${metric}\\"`);
    }
    expect(body).toContain(`SELECT SUM(${METRICS.recoveryOutcome})`);
    expect(body).toContain(`SELECT SUM(${METRICS.recoveryStarted})`);
    for (const outcome of CUT_POINT_OUTCOMES) expect(body).toContain(`\\"label\\":\\"${outcome}\\"`);
    expect(body).toContain(METRIC_NAMESPACE);
    expect(body).toContain('\\"stat\\":\\"p99\\"');
    expect(body).toContain('\\"stat\\":\\"p50\\"');
    // Far below CloudWatch's 500 widgets per dashboard.
    expect((body.match(/\\"type\\":/g) ?? []).length).toBeLessThanOrEqual(500);
  });
});
