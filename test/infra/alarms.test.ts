// Over ~300 lines (485), kept whole — one subject: the alarms of the synthesized stacks, built once and shared by its cases.
import { App, Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Alarm, CfnAlarm, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWS, STEPS, type FlowEntry } from '../../src/registry/index.js';
import { AlarmActions } from '../../infra/alarm-actions.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { operationsTemplate } from './support/operations-template.js';
import { FlowAlarms } from '../../infra/flow-alarms.js';
import { RecoveryOutcomeAlarms } from '../../infra/recovery-alarms.js';
import { StepTimeoutAlarms } from '../../infra/step-alarms.js';
import { TableAlarms } from '../../infra/table-alarms.js';
import { loadFlowDefinition } from '../../infra/asl.js';
import { RECOVERY_FLOWS } from '../../src/recovery/recovery-stops.js';
import { METRIC_NAMESPACE, METRICS } from '../../src/telemetry/metric-names.js';
import { logicalId } from './support/logical-id.js';
import { alarmsOf, metricsOf } from './support/alarm-props.js';
import { RetainedAlarms } from '../../infra/retained-alarms.js';

// One build for the file; templates only (no bundling).
let built: CutpointApp;
let stacks: Array<{ stack: Stack; template: Template }>;
let workflows: Template;
/** The nested operations stack (the alarms per flow, step, recovery outcome and table; the dashboard), parameters resolved. */
let ops: Template;
let stateful: Template;

beforeAll(() => {
  built = builtApp();
  built.app.synth();
  stacks = built.app.node
    .findAll()
    .filter((c): c is Stack => Stack.isStack(c))
    .map((stack) => ({ stack, template: Template.fromStack(stack) }));
  workflows = Template.fromStack(built.workflows);
  ops = operationsTemplate(built.workflows);
  stateful = Template.fromStack(built.stateful);
}, 600_000);

const topicOf = (stack: Stack) =>
  stack === built.stateful
    ? { Ref: logicalId(built.stateful.operationsTopic) }
    : { 'Fn::ImportValue': 'CutpointStateful-OperationsTopicArn' };
const machineRef = (flow: string) => ({ Ref: logicalId(built.workflows.stateMachines.get(flow)!) });
const fnArnRef = (placeholder: string) => ({ Ref: logicalId(built.workflows.functions.get(placeholder)!) });
const stepName = (placeholder: string) => placeholder.replace(/FunctionArn$/, '');
const byName = (name: string) => Object.values(alarmsOf(ops)).find((a) => a.AlarmName === name);
/** The prefix of every alarm name of the operations stack (infra/operations-stack.ts). */
const OPS = 'CutpointWorkflows-ops';

/** The alarm names a flow must have, derived from the registry. */
function expectedAlarms(flow: FlowEntry): string[] {
  const steps = loadFlowDefinition(flow.name).steps.length;
  const parts = Math.ceil(steps / 10);
  const perFunction = ['lambda-throttles', 'unexpected-errors'].flatMap((what) =>
    parts <= 1 ? (steps ? [what] : []) : Array.from({ length: parts }, (_x, i) => `${what}-${i + 1}`),
  );
  const recoveryStopped = Object.hasOwn(RECOVERY_FLOWS, flow.name) ? ['recovery-stopped'] : [];
  return ['failed', ...recoveryStopped, 'timed-out', 'throttled', ...perFunction].map(
    (what) => `${OPS}-${flow.name}-${what}`,
  );
}

describe('every alarm reaches someone', () => {
  it('every CloudWatch alarm of every stack notifies the operations topic on ALARM and on OK, and treats missing data as not breaching (but the retained-items gauge, where missing data is a stopped sweep)', () => {
    let count = 0;
    for (const { stack, template } of stacks) {
      for (const [id, alarm] of Object.entries(alarmsOf(template))) {
        count++;
        expect(alarm.AlarmActions, `${stack.stackName}/${id}`).toContainEqual(topicOf(stack));
        expect(alarm.OKActions, `${stack.stackName}/${id}`).toContainEqual(topicOf(stack));
        const gauge = typeof alarm.AlarmName === 'string' && alarm.AlarmName.startsWith(`${OPS}-retained-`);
        expect(alarm.TreatMissingData, `${stack.stackName}/${id}`).toBe(gauge ? 'breaching' : 'notBreaching');
        expect(alarm.AlarmDescription, `${stack.stackName}/${id}`).toMatch(/\S{10,}/);
        // CloudFormation's limits: a description of at most 1024 characters, a name of at most 255.
        expect(alarm.AlarmDescription!.length, `${stack.stackName}/${id}`).toBeLessThanOrEqual(1024);
        if (typeof alarm.AlarmName === 'string') expect(alarm.AlarmName.length).toBeLessThanOrEqual(255);
      }
      for (const [id, composite] of Object.entries(template.findResources('AWS::CloudWatch::CompositeAlarm'))) {
        expect(composite.Properties.AlarmActions, `${stack.stackName}/${id}`).toContainEqual(topicOf(stack));
      }
    }
    // Alarms other constructs define (the recovery path's EventBridge/dead-letter alarms) are reached without their files naming the topic.
    const ours = [FlowAlarms, StepTimeoutAlarms, RecoveryOutcomeAlarms, TableAlarms, RetainedAlarms];
    const others = built.workflows.node
      .findAll()
      .filter((c) => c instanceof Alarm && !c.node.scopes.some((s) => ours.some((k) => s instanceof k)));
    expect(others.length).toBeGreaterThan(0);
    for (const alarm of others)
      expect(alarmsOf(workflows)[logicalId(alarm)]!.AlarmActions, alarm.node.path).toContainEqual(
        topicOf(built.workflows),
      );
    expect(count).toBeGreaterThan(FLOWS.length * 3);
  });

  it('the Aspect reaches an alarm any construct adds, at any depth, and refuses a bare CfnAlarm it cannot wire', () => {
    const app = new App();
    const stack = new Stack(app, 'Probe');
    const topic = new Topic(stack, 'Ops');
    Aspects.of(stack).add(new AlarmActions(topic));
    const nested = new Construct(new Construct(stack, 'Someone'), 'Else');
    new Alarm(nested, 'Depth', {
      metric: new Metric({ namespace: 'X', metricName: 'Y' }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    new CfnAlarm(stack, 'Bare', {
      comparisonOperator: 'GreaterThanThreshold',
      evaluationPeriods: 1,
      threshold: 1,
      namespace: 'X',
      metricName: 'Y',
      period: 60,
      statistic: 'Sum',
    });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Y',
      AlarmActions: [{ Ref: logicalId(topic) }],
      OKActions: [{ Ref: logicalId(topic) }],
    });
    Annotations.fromStack(stack).hasError('/Probe/Bare', Match.stringLikeRegexp('operations topic'));
  });

  it("the operations topic: a rotating customer key whose policy lets CloudWatch encrypt, SNS publish allowed to this account's alarms, TLS only, retained key, exported", () => {
    const topic = stateful.toJSON().Resources[logicalId(built.stateful.operationsTopic)];
    const keyId = (topic.Properties.KmsMasterKeyId as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const key = stateful.toJSON().Resources[keyId];
    expect(key).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
    });
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    stateful.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: logicalId(built.stateful.operationsTopic) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: Match.objectLike({ ArnLike: Match.anyValue() }),
          }),
        ]),
      },
    });
    stateful.hasOutput('OperationsTopicArn', {
      Value: { Ref: logicalId(built.stateful.operationsTopic) },
      Export: { Name: 'CutpointStateful-OperationsTopicArn' },
    });
  });
});

describe('where the alarms live', () => {
  it('the alarms of flows, steps, recovery outcomes and the table are in the nested operations stack, all named <workflows stack>-ops-…; the workflows stack keeps the unnamed alarms of what it runs', () => {
    const nested = Object.values(alarmsOf(ops));
    expect(nested.length).toBeGreaterThan(FLOWS.length * 4 + STEPS.length);
    for (const alarm of nested) expect(alarm.AlarmName).toMatch(new RegExp(`^${OPS}-`));
    const own = Object.values(alarmsOf(workflows));
    expect(own.length).toBeGreaterThan(0);
    expect(own.flatMap((a) => (a.AlarmName === undefined ? [] : [a.AlarmName]))).toEqual([]);
  });
});

describe.each(FLOWS.map((f) => [f.name, f] as const))('alarms of flow %s', (name, flow) => {
  const steps = loadFlowDefinition(name).steps;

  it("has exactly the expected alarms (registry-derived), each within CloudWatch's 10 metrics per alarm", () => {
    // The flow an alarm belongs to: the longest flow name its name starts with.
    const ownerOf = (alarmName = '') =>
      FLOWS.map((f) => f.name)
        .filter((f) => alarmName.startsWith(`${OPS}-${f}-`))
        .sort((a, b) => b.length - a.length)[0];
    const own = Object.values(alarmsOf(ops)).filter((a) => ownerOf(a.AlarmName) === name);
    expect(own.map((a) => a.AlarmName).sort()).toEqual(expectedAlarms(flow).sort());
    for (const alarm of own) expect(metricsOf(alarm).length, alarm.AlarmName).toBeLessThanOrEqual(10);
  });

  // The dispatcher classifies every designed stop of a flow with a recovery rule or one that runs recoveries.
  const classified = flow.recovery !== undefined || Object.hasOwn(RECOVERY_FLOWS, name);
  it(
    classified
      ? "failed: the dispatcher's ExecutionOutcome=failed, never raw ExecutionsFailed (a designed stop goes to recovery or is classified)"
      : 'failed: AWS/States ExecutionsFailed (nothing else acts on its failures)',
    () => {
      const failed = metricsOf(byName(`${OPS}-${name}-failed`)!);
      if (classified) {
        expect(failed).toEqual([
          {
            Namespace: METRIC_NAMESPACE,
            MetricName: METRICS.executionOutcome,
            Dimensions: { Flow: name, Outcome: 'failed' },
          },
        ]);
        const raw = [...Object.values(alarmsOf(workflows)), ...Object.values(alarmsOf(ops))].filter((a) =>
          metricsOf(a).some(
            (m) =>
              m.MetricName === 'ExecutionsFailed' &&
              JSON.stringify(m.Dimensions.StateMachineArn) === JSON.stringify(machineRef(name)),
          ),
        );
        expect(raw.map((a) => a.AlarmName)).toEqual([]);
      } else {
        expect(failed).toEqual([
          {
            Namespace: 'AWS/States',
            MetricName: 'ExecutionsFailed',
            Dimensions: { StateMachineArn: machineRef(name) },
          },
        ]);
      }
      expect(metricsOf(byName(`${OPS}-${name}-timed-out`)!)).toEqual([
        {
          Namespace: 'AWS/States',
          MetricName: 'ExecutionsTimedOut',
          Dimensions: { StateMachineArn: machineRef(name) },
        },
      ]);
      expect(metricsOf(byName(`${OPS}-${name}-throttled`)!)).toEqual([
        {
          Namespace: 'AWS/States',
          MetricName: 'ExecutionThrottled',
          Dimensions: { StateMachineArn: machineRef(name) },
        },
      ]);
    },
  );

  it(
    Object.hasOwn(RECOVERY_FLOWS, name)
      ? "recovery-stopped: the dispatcher's ExecutionOutcome=recovery-stopped, naming the paging stops and the notice; failed and timed-out name the unclassified notice"
      : 'no recovery-stopped alarm: it never runs a recovery',
    () => {
      const alarm = byName(`${OPS}-${name}-recovery-stopped`);
      if (!Object.hasOwn(RECOVERY_FLOWS, name)) {
        expect(alarm).toBeUndefined();
        return;
      }
      expect(metricsOf(alarm!)).toEqual([
        {
          Namespace: METRIC_NAMESPACE,
          MetricName: METRICS.executionOutcome,
          Dimensions: { Flow: name, Outcome: 'recovery-stopped' },
        },
      ]);
      const paging = Object.entries(RECOVERY_FLOWS[name]!.stops)
        .filter(([, stop]) => stop.pages)
        .map(([state]) => state);
      for (const state of paging) expect(alarm!.AlarmDescription).toContain(state);
      expect(alarm!.AlarmDescription).toContain('incident topic');
      // Its executions' other ends are noticed too (src/recovery/failure-notice.ts): the alarms say where.
      for (const what of ['failed', 'timed-out'])
        expect(byName(`${OPS}-${name}-${what}`)!.AlarmDescription, what).toContain('unclassified notice');
    },
  );

  it("Lambda throttles and unexpected errors cover exactly the flow's functions and steps", () => {
    const covered = (what: string) =>
      Object.values(alarmsOf(ops))
        .filter(
          (a) =>
            a.AlarmName === `${OPS}-${name}-${what}` || a.AlarmName?.match(new RegExp(`^${OPS}-${name}-${what}-\\d+$`)),
        )
        .flatMap(metricsOf);
    const functions = steps.map((s) => ({
      Namespace: 'AWS/Lambda',
      Dimensions: { FunctionName: fnArnRef(s.placeholder) },
    }));
    expect(covered('lambda-throttles')).toEqual(functions.map((f) => ({ ...f, MetricName: 'Throttles' })));
    expect(covered('unexpected-errors')).toEqual(
      steps.map((s) => ({
        Namespace: METRIC_NAMESPACE,
        MetricName: METRICS.unexpectedError,
        Dimensions: { Step: stepName(s.placeholder) },
      })),
    );
    // A sum FILLs every term with 0: in metric math `a + b` has no value where either has none.
    for (const alarm of Object.values(alarmsOf(ops)).filter(
      (a) => a.AlarmName?.startsWith(`${OPS}-${name}-`) && a.Metrics,
    )) {
      const ids = alarm.Metrics!.filter((m) => m.MetricStat).map((m) => m.Id);
      if (ids.length > 1)
        expect(alarm.Metrics!.find((m) => m.Expression)!.Expression).toBe(
          ids.map((id) => `FILL(${id}, 0)`).join(' + '),
        );
    }
  });
});
