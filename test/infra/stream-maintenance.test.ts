import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { loadFlowDefinition } from '../../infra/asl.js';
import { maintenanceConfigOf } from '../../infra/maintenance-schedule.js';
import { actionsOf, allowedActions, resourcesOf, roleStatements, unordered } from './policies.js';
import { logicalId } from './support/logical-id.js';

/**
 * Issue #11 on AWS: the stream-materialize and stream-compact flows, the stream-maintain
 * flow that runs them (and stream-gc) as child executions per configured lane, and its
 * EventBridge schedule — present only when lanes are configured.
 */
let configured: CutpointApp;
let workflows: Template;
let plain: Template;

beforeAll(() => {
  configured = builtApp({
    'cutpoint:maintenanceLanes': 'logs:0,logs:1,orders.eu:3',
    'cutpoint:maintenanceRateMinutes': '15',
    'cutpoint:gcGrace': '6h',
  });
  workflows = Template.fromStack(configured.workflows);
  plain = Template.fromStack(builtApp().workflows);
}, 180_000);

const machineRef = (flow: string) => ({ Ref: logicalId(configured.workflows.stateMachines.get(flow)!) });
const machineProps = (flow: string) =>
  workflows.toJSON().Resources[logicalId(configured.workflows.stateMachines.get(flow)!)].Properties;
const fnRole = (placeholder: string) =>
  workflows.toJSON().Resources[logicalId(configured.workflows.functions.get(placeholder)!)].Properties.Role[
    'Fn::GetAtt'
  ][0] as string;
/** The schedules that start stream-maintain (every stage also has the hourly delivery-expire one: chunk-expiry.test.ts). */
const scheduleRules = (template: Template) =>
  Object.values(
    template.findResources('AWS::Events::Rule', { Properties: { ScheduleExpression: Match.anyValue() } }),
  ).filter((r) => JSON.stringify(r.Properties.Targets).includes('StreamMaintainFlow'));

describe('stream maintenance on AWS', () => {
  it('materialize and compact are STANDARD state machines over their one step each', () => {
    for (const [flow, placeholder] of [
      ['stream-materialize', 'StreamMaterializeBatchFunctionArn'],
      ['stream-compact', 'StreamCompactLaneFunctionArn'],
    ] as const) {
      const props = machineProps(flow);
      expect(props.StateMachineType).toBe('STANDARD');
      expect(Object.keys(props.DefinitionSubstitutions)).toEqual([placeholder]);
    }
  });

  it("the steps touch only the stream's objects; only task cleanup deletes an item, and only generation tasks", () => {
    for (const placeholder of ['StreamMaterializeBatchFunctionArn', 'StreamCompactLaneFunctionArn']) {
      const statements = roleStatements(workflows, fnRole(placeholder));
      const reads = statements.filter((s) => actionsOf(s).includes('s3:GetObject'));
      expect(reads.flatMap(actionsOf)).toEqual(['s3:GetObject']);
      expect(reads.flatMap(resourcesOf).map((r) => JSON.stringify(r))).toEqual([
        expect.stringContaining('/generations/stream/*'),
        expect.stringContaining('/wal/*'),
      ]);
      // Writes: the stream's generations only, never a WAL object.
      const writes = statements.filter((s) => actionsOf(s).includes('s3:PutObject'));
      expect(writes.flatMap(actionsOf)).toEqual(['s3:PutObject']);
      expect(writes.flatMap(resourcesOf).map((r) => JSON.stringify(r))).toEqual([
        expect.stringContaining('/generations/stream/*'),
      ]);
      expect(allowedActions(statements, 's3:')).not.toContain('s3:DeleteObject');
    }
    const deleters = STEPS.filter((s) => s.table.includes('dynamodb:DeleteItem'));
    expect(deleters.map((s) => [s.placeholder, s.deleteLeadingKeys])).toEqual([
      ['GenerationCleanupTaskFunctionArn', ['gen#*']],
      ['StreamGcDrainFunctionArn', ['gc#*', 'lane#*']],
      ['StreamMaterializeBatchFunctionArn', ['gen#stream/*']],
      ['StreamCompactLaneFunctionArn', ['gen#stream/*']],
      ['DeliveryExpireFunctionArn', ['delivery#released']],
    ]);
    for (const placeholder of ['StreamMaterializeBatchFunctionArn', 'StreamCompactLaneFunctionArn']) {
      const del = roleStatements(workflows, fnRole(placeholder)).find(
        (s) => s.Effect === 'Allow' && actionsOf(s).includes('dynamodb:DeleteItem'),
      ) as { Condition?: unknown };
      expect(del.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['gen#stream/*'] } });
    }
  });

  it('stream-maintain checks its input with one Lambda, starts exactly its three child flows, may describe and stop only their executions, and touches no data', () => {
    const props = machineProps('stream-maintain');
    const check = {
      'Fn::GetAtt': [logicalId(configured.workflows.functions.get('EngineCheckFlowInputFunctionArn')!), 'Arn'],
    };
    expect(props.DefinitionSubstitutions).toEqual({
      EngineCheckFlowInputFunctionArn: check,
      StreamMaterializeStateMachineArn: machineRef('stream-materialize'),
      StreamCompactStateMachineArn: machineRef('stream-compact'),
      StreamGcStateMachineArn: machineRef('stream-gc'),
    });
    const statements = roleStatements(workflows, props.RoleArn['Fn::GetAtt'][0] as string);
    const start = statements.find((s) => actionsOf(s).includes('states:StartExecution'))!;
    expect(actionsOf(start)).toEqual(['states:StartExecution']);
    expect(resourcesOf(start)).toEqual(
      unordered([machineRef('stream-materialize'), machineRef('stream-compact'), machineRef('stream-gc')]),
    );
    const describe = statements.find((s) => actionsOf(s).includes('states:DescribeExecution'))!;
    expect(JSON.stringify(resourcesOf(describe))).toContain(':execution:');
    expect(resourcesOf(describe)).toHaveLength(3);
    expect(allowedActions(statements, 'events:')).toEqual([
      'events:DescribeRule',
      'events:PutRule',
      'events:PutTargets',
    ]);
    expect(
      JSON.stringify(statements.filter((s) => actionsOf(s).some((a) => a.startsWith('events:'))).flatMap(resourcesOf)),
    ).toContain('rule/StepFunctionsGetEventsForStepFunctionsExecutionRule');
    expect(allowedActions(statements, 'dynamodb:')).toEqual([]);
    expect(allowedActions(statements, 's3:')).toEqual([]);
    const invoke = statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).some((a) => a.startsWith('lambda:')));
    expect(invoke.flatMap(actionsOf)).toEqual(['lambda:InvokeFunction']);
    expect(JSON.stringify(invoke.flatMap(resourcesOf))).not.toContain(
      JSON.stringify(logicalId(configured.workflows.functions.get('StreamMaterializeBatchFunctionArn')!)),
    );
    expect(JSON.stringify(invoke.flatMap(resourcesOf))).toContain(JSON.stringify(check['Fn::GetAtt'][0]));
    // The check reads and writes nothing: its Lambda's role has no data action.
    const checkRole = roleStatements(workflows, fnRole('EngineCheckFlowInputFunctionArn'));
    expect([
      ...allowedActions(checkRole, 'dynamodb:'),
      ...allowedActions(checkRole, 's3:'),
      ...allowedActions(checkRole, 'secretsmanager:'),
    ]).toEqual([]);
  });

  it('configured lanes get one schedule at the configured rate, starting stream-maintain with them; unconfigured, none', () => {
    const rules = scheduleRules(workflows);
    expect(rules).toHaveLength(1);
    const rule = rules[0]!.Properties;
    expect(rule.ScheduleExpression).toBe('rate(15 minutes)');
    expect(rule.State).toBe('ENABLED');
    expect(rule.Targets).toHaveLength(1);
    expect(rule.Targets[0].Arn).toEqual(machineRef('stream-maintain'));
    expect(JSON.parse(rule.Targets[0].Input as string)).toEqual({
      lanes: [
        { stream: 'logs', partition: 0 },
        { stream: 'logs', partition: 1 },
        { stream: 'orders.eu', partition: 3 },
      ],
    });
    workflows.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Events',
      MetricName: 'FailedInvocations',
      Dimensions: [{ Name: 'RuleName', Value: { Ref: logicalId(configured.workflows.maintenance!.rule) } }],
    });
    // A start EventBridge could not make lands in the schedule's own dead-letter queue (encrypted, TLS only), which alarms on its first message.
    const queue = logicalId(configured.workflows.maintenance!.deadLetters.queue);
    expect(rule.Targets[0].DeadLetterConfig).toEqual({ Arn: { 'Fn::GetAtt': [queue, 'Arn'] } });
    expect(rule.Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 3600 });
    expect(workflows.toJSON().Resources[queue].Properties).toMatchObject({ SqsManagedSseEnabled: true });
    workflows.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      Threshold: 1,
    });
    expect(scheduleRules(plain)).toEqual([]);
    // The retained-items sweep reads the same lanes' heads for a suspension (src/operations/retained.ts).
    workflows.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [Match.objectLike({ Input: Match.stringLikeRegexp('"lanes":\\[\\{"stream":"logs","partition":0\\}') })],
    });
  });

  it('cutpoint:gcGrace sets the default grace (CUTPOINT_GC_GRACE) on the stream-gc steps only, scheduled GC included; unset, the code default', () => {
    const gcSteps = new Set(loadFlowDefinition('stream-gc').steps.map((s) => s.placeholder));
    expect(gcSteps.size).toBeGreaterThan(0);
    const envOf = (template: Template, app: CutpointApp, placeholder: string) =>
      (
        template.toJSON().Resources[logicalId(app.workflows.functions.get(placeholder)!)].Properties.Environment
          .Variables as Record<string, unknown>
      ).CUTPOINT_GC_GRACE;
    const plainApp = builtApp();
    const plainTemplate = Template.fromStack(plainApp.workflows);
    for (const step of STEPS) {
      expect(envOf(workflows, configured, step.placeholder), step.placeholder).toBe(
        gcSteps.has(step.placeholder) ? '6h' : undefined,
      );
      expect(envOf(plainTemplate, plainApp, step.placeholder), step.placeholder).toBeUndefined();
    }
  });

  it('cdk-nag: the app with a schedule leaves no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks(configured.app, { verbose: true }).validateScope(configured.app);
    expect(
      report.violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
      ),
    ).toEqual([]);
  });

  it("the configuration is checked at synth: lanes as stream:partition, once each; at most 8 lanes (stream-maintain's bound); a whole number of minutes; a rate needs lanes", () => {
    expect(maintenanceConfigOf(undefined, undefined)).toBeUndefined();
    expect(maintenanceConfigOf('a:0', undefined)?.rate.toMinutes()).toBe(60);
    expect(() => maintenanceConfigOf('logs', undefined)).toThrow(/is not stream:partition/);
    expect(() => maintenanceConfigOf('logs:-1', undefined)).toThrow(/is not stream:partition/);
    expect(() => maintenanceConfigOf('a:0,a:0', undefined)).toThrow(/twice/);
    expect(() => maintenanceConfigOf('a:0', '1.5')).toThrow(/whole number of minutes/);
    expect(() => maintenanceConfigOf(undefined, '15')).toThrow(/needs cutpoint:maintenanceLanes/);
    expect(
      maintenanceConfigOf(Array.from({ length: 8 }, (_, i) => `stream-${i}:0`).join(','), undefined)?.lanes,
    ).toHaveLength(8);
    expect(() =>
      maintenanceConfigOf(Array.from({ length: 9 }, (_, i) => `stream-${i}:0`).join(','), undefined),
    ).toThrow(/9 lanes; one schedule maintains at most 8/);
  });
});
