import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { LAMBDA_BUNDLING } from '../../infra/bundling.js';
import { repoPath } from '../../infra/repo.js';
import { loadAsl } from '../../src/local/asl.js';
import { designedStopErrors } from '../../src/recovery/designed-stops.js';
import { RECOVERY_FLOWS, recoveryStopsOf } from '../../src/recovery/recovery-stops.js';
import { actionsOf, allowedActions, resourcesOf, roleStatements, unordered } from './policies.js';
import { logicalId } from './support/logical-id.js';

/**
 * Issue #12: every ended execution of every STANDARD flow goes to the recovery dispatcher
 * (one Lambda), which counts it and starts the registry's recovery under a deterministic
 * name; every EventBridge target in the app has retries, a maxEventAge and an encrypted,
 * TLS-only dead-letter queue with a depth alarm.
 */
let built: CutpointApp;
let template: Template;

beforeAll(() => {
  built = builtApp({ 'cutpoint:maintenanceLanes': 'logs:0' });
  template = Template.fromStack(built.workflows);
}, 180_000);

const machineRef = (flow: string) => ({ Ref: logicalId(built.workflows.stateMachines.get(flow)!) });
const dispatcherArn = () => ({ 'Fn::GetAtt': [logicalId(built.workflows.recovery.fn), 'Arn'] });
type RuleProps = {
  EventPattern?: { detail?: { stateMachineArn?: unknown[]; status?: string[] } };
  Targets: Array<Record<string, unknown> & { InputTransformer?: { InputPathsMap: unknown; InputTemplate: unknown } }>;
};
const importOf = (name: string) => ({ 'Fn::ImportValue': `CutpointStateful-${name}` });
const rules = (t: Template) =>
  Object.values(t.findResources('AWS::Events::Rule')).map((r) => r.Properties as RuleProps);

/** The target's input template as JSON, `Ref(<logical id>)` for each CloudFormation reference and null for each `<detail-…>` field. */
function inputOf(target: RuleProps['Targets'][number]): Record<string, unknown> {
  const raw = target.InputTransformer!.InputTemplate;
  const parts = typeof raw === 'string' ? [raw] : (raw as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const text = parts.map((p) => (typeof p === 'string' ? p : `Ref(${(p as { Ref: string }).Ref})`)).join('');
  return JSON.parse(text.replace(/<detail-[A-Za-z]+>/g, 'null')) as Record<string, unknown>;
}

describe('recovery dispatcher', () => {
  it('one rule per STANDARD flow routes every terminal status of its executions to the dispatcher; none for EXPRESS flows', () => {
    for (const flow of FLOWS) {
      const own = rules(template).filter(
        (r) => JSON.stringify(r.EventPattern?.detail?.stateMachineArn) === JSON.stringify([machineRef(flow.name)]),
      );
      if (flow.type === 'EXPRESS') {
        expect(own, flow.name).toEqual([]);
        continue;
      }
      expect(own, flow.name).toHaveLength(1);
      expect(own[0]!.EventPattern).toEqual({
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [machineRef(flow.name)] },
      });
      expect(own[0]!.Targets).toHaveLength(1);
      expect(own[0]!.Targets[0]!.Arn).toEqual(dispatcherArn());
    }
    // No rule starts a state machine directly any more, except the schedules (maintenance, chunk expiry).
    const direct = rules(template)
      .flatMap((r) => r.Targets)
      .filter((t) => JSON.stringify(t.Arn).includes('StateMachine'));
    expect(direct.map((t) => t.Arn)).toEqual(
      expect.arrayContaining([machineRef('stream-maintain'), machineRef('delivery-expire')]),
    );
    expect(direct).toHaveLength(2);
  });

  it("the target input carries the flow, its designed stops from its ASL, the registry's recovery, and the event detail", () => {
    for (const flow of FLOWS.filter((f) => f.type === 'STANDARD')) {
      const rule = built.workflows.recovery.rules.get(flow.name)!;
      const target = (template.toJSON().Resources[logicalId(rule)].Properties as RuleProps).Targets[0]!;
      // Only what the dispatcher reads: never the execution's output or cause (the async payload stays small).
      const fields = ['executionArn', 'name', 'status', 'input', 'inputDetails', 'error'];
      expect(target.InputTransformer!.InputPathsMap).toEqual(
        Object.fromEntries(fields.map((f) => [`detail-${f}`, `$.detail.${f}`])),
      );
      const input = inputOf(target);
      expect(input.flow).toBe(flow.name);
      expect(input.designedStops).toEqual(designedStopErrors(loadAsl(flow.name)));
      expect(input.detail).toEqual(Object.fromEntries(fields.map((f) => [f, null])));
      // A flow that runs recoveries: which executions are recoveries, what they work on, the stops that page.
      if (Object.hasOwn(RECOVERY_FLOWS, flow.name))
        expect(input.recoveryStops, flow.name).toEqual(recoveryStopsOf(flow.name, loadAsl(flow.name)));
      else expect(input, flow.name).not.toHaveProperty('recoveryStops');
      // The resolve re-runs itself: the rule tells the dispatcher which of its stops a re-run cannot get past.
      if (flow.name === 'stream-resolve-append')
        expect(input.recoveryStops).toMatchObject({
          deterministic: ['Stream.RecoveryExhausted', 'Stream.Rejected', 'Stream.Unresolvable'],
        });
      if (!flow.recovery) {
        expect(input).not.toHaveProperty('recovery');
        continue;
      }
      expect(input.recovery).toEqual({
        by: flow.recovery.by,
        stateMachineArn: `Ref(${machineRef(flow.recovery.by).Ref})`,
        on: [...flow.recovery.on],
      });
    }
  });

  it('may start exactly the recovering state machines and describe executions of exactly the recovered flows and the flows that run recoveries', () => {
    const role = (
      template.toJSON().Resources[logicalId(built.workflows.recovery.fn)].Properties.Role as { 'Fn::GetAtt': [string] }
    )['Fn::GetAtt'][0];
    const statements = roleStatements(template, role);
    const start = statements.filter((s) => actionsOf(s).includes('states:StartExecution'));
    const recovering = [...new Set(FLOWS.flatMap((f) => (f.recovery ? [f.recovery.by] : [])))];
    expect(start.flatMap(actionsOf)).toEqual(['states:StartExecution']);
    expect(start.flatMap(resourcesOf)).toEqual(unordered(recovering.map(machineRef)));
    const describe = statements.filter((s) => actionsOf(s).includes('states:DescribeExecution'));
    expect(describe.flatMap(actionsOf)).toEqual(['states:DescribeExecution']);
    const read = FLOWS.filter((f) => f.recovery || Object.hasOwn(RECOVERY_FLOWS, f.name)).map((f) => f.name);
    const described = JSON.stringify(describe.flatMap(resourcesOf));
    expect(describe.flatMap(resourcesOf)).toHaveLength(read.length);
    for (const name of read) expect(described).toContain(logicalId(built.workflows.stateMachines.get(name)!));
    expect(described).toContain(':execution:');
    expect(allowedActions(statements, 'states:')).toEqual(['states:DescribeExecution', 'states:StartExecution']);
    expect(allowedActions(statements, 'dynamodb:')).toEqual([]);
    expect(allowedActions(statements, 's3:')).toEqual([]);
    expect(allowedActions(statements, 'sqs:')).toEqual(['sqs:SendMessage']);
  });

  it('may publish to the incident topic and nothing else of SNS (a recovery that stopped for an operator), with the topic in its environment', () => {
    const fn = template.toJSON().Resources[logicalId(built.workflows.recovery.fn)].Properties as {
      Role: { 'Fn::GetAtt': [string] };
      Environment: { Variables: Record<string, unknown> };
    };
    const statements = roleStatements(template, fn.Role['Fn::GetAtt'][0]);
    const sns = statements.filter((s) => s.Effect === 'Allow' && actionsOf(s).some((a) => a.startsWith('sns:')));
    expect(sns.map((s) => [actionsOf(s), resourcesOf(s)])).toEqual([[['sns:Publish'], [importOf('IncidentTopicArn')]]]);
    const incidentKey = statements.filter(
      (s) =>
        s.Effect === 'Allow' &&
        resourcesOf(s).some((r) => JSON.stringify(r) === JSON.stringify(importOf('IncidentTopicKeyArn'))),
    );
    expect(incidentKey.map((s) => [actionsOf(s), resourcesOf(s)])).toEqual([
      [unordered(['kms:GenerateDataKey', 'kms:Decrypt']), [importOf('IncidentTopicKeyArn')]],
    ]);
    expect(fn.Environment.Variables.CUTPOINT_INCIDENT_TOPIC_ARN).toEqual(importOf('IncidentTopicArn'));
  });

  it('Lambda retries a failed run twice, then dead-letters it to the same queue', () => {
    const queue = { 'Fn::GetAtt': [logicalId(built.workflows.recovery.deadLetters.queue), 'Arn'] };
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(built.workflows.recovery.fn) },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 6 * 3600,
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      DeadLetterConfig: { TargetArn: queue },
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
    });
  });
});

describe('every EventBridge target', () => {
  it('has retries, a maxEventAge and a dead-letter queue', () => {
    const targets = rules(template).flatMap((r) => r.Targets);
    expect(targets.length).toBeGreaterThan(FLOWS.length / 2);
    for (const target of targets) {
      expect(target.RetryPolicy, JSON.stringify(target.Arn)).toEqual({
        MaximumRetryAttempts: expect.any(Number),
        MaximumEventAgeInSeconds: expect.any(Number),
      });
      expect(target.DeadLetterConfig, JSON.stringify(target.Arn)).toEqual({
        Arn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] },
      });
    }
  });

  it('each dead-letter queue is SSE encrypted, refuses plain HTTP, and alarms on its first message', () => {
    const queues = Object.keys(template.findResources('AWS::SQS::Queue'));
    const used = new Set(
      rules(template).flatMap((r) =>
        r.Targets.map((t) => (t.DeadLetterConfig as { Arn: { 'Fn::GetAtt': [string] } }).Arn['Fn::GetAtt'][0]),
      ),
    );
    expect([...used].sort()).toEqual([...queues].sort());
    // The dispatcher's, the maintenance schedule's, the chunk-expiry schedule's and the retained-items sweep's.
    expect(queues).toHaveLength(4);
    for (const id of queues) {
      expect(template.toJSON().Resources[id].Properties).toMatchObject({ SqsManagedSseEnabled: true });
      const policies = Object.values(template.findResources('AWS::SQS::QueuePolicy')).filter(
        (p) => JSON.stringify(p.Properties.Queues) === JSON.stringify([{ Ref: id }]),
      );
      const statements = policies.flatMap(
        (p) => p.Properties.PolicyDocument.Statement as Array<{ Effect: string; Condition?: unknown }>,
      );
      expect(statements).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
  });

  it('cdk-nag: no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks(built.app, { verbose: true }).validateScope(built.app);
    expect(
      report.violations.flatMap((v) =>
        v.violatingResources.map((r) => `${v.ruleName} at ${r.constructPath ?? r.resourceLogicalId}`),
      ),
    ).toEqual([]);
  });
});

describe('the dispatcher bundle', () => {
  it("bundles as node24 ESM with the stack's options, loads in plain Node, and refuses a malformed event by name", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cutpoint-dispatch-'));
    try {
      await build({
        entryPoints: { dispatch: repoPath('functions/recovery/dispatch.ts') },
        outdir: dir,
        outExtension: { '.js': '.mjs' },
        bundle: true,
        platform: 'node',
        target: LAMBDA_BUNDLING.target,
        format: LAMBDA_BUNDLING.format,
        minify: LAMBDA_BUNDLING.minify,
        external: [...LAMBDA_BUNDLING.externalModules],
        banner: { js: LAMBDA_BUNDLING.banner },
        mainFields: [...LAMBDA_BUNDLING.mainFields],
        logLevel: 'error',
      });
      const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(dir, 'dispatch.mjs')).href)});
        try { await handler({}, {}); console.log('resolved'); } catch (error) { console.log(error.name, error.code); }`;
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: tmpdir(),
        env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1' },
        encoding: 'utf8',
      });
      expect(out.trim()).toBe('Cutpoint.ValidationError recovery.event_invalid');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
