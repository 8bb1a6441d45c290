import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWS, STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { repoPath } from '../../infra/repo.js';
import { actionsOf, allowedActions, resourcesOf, roleStatements, type Statement } from './policies.js';
import { logicalId } from './support/logical-id.js';

// One build (templates only): which role may read which connection secret, and how the
// flows' execution history and logs are encrypted.
let built: CutpointApp;
let workflows: Template;
let resources: Record<string, { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }>;

beforeAll(() => {
  built = builtApp();
  built.app.synth();
  workflows = Template.fromStack(built.workflows);
  resources = workflows.toJSON().Resources as typeof resources;
}, 600_000);

/** The steps that extract: Begin's check, the plan's count and the Map's part (deliver-window's, and resume's continue of a PARTIAL_PROVED). */
const SOURCE_STEPS = ['DeliveryBeginFunctionArn', 'DeliveryExtractLoadPartFunctionArn', 'DeliveryPlanPartsFunctionArn'];

/** The secret name patterns a role may read (GetSecretValue), as `source` / `target` / the raw resource. */
function secretReads(statements: Statement[]): string[] {
  return statements
    .filter((s) => s.Effect === 'Allow' && actionsOf(s).some((a) => a.startsWith('secretsmanager:')))
    .flatMap((s) => {
      expect(actionsOf(s)).toEqual(['secretsmanager:GetSecretValue']);
      return resourcesOf(s).map((r) => {
        const text = JSON.stringify(r);
        return text.includes(':secret:cutpoint/delivery/source/*')
          ? 'source'
          : text.includes(':secret:cutpoint/delivery/target/*')
            ? 'target'
            : text;
      });
    })
    .sort();
}

describe('connection secrets: sources and targets apart', () => {
  it('only the steps that open the source may read the source prefix; every other database step reads the target prefix only', () => {
    for (const step of STEPS) {
      const fn = built.workflows.functions.get(step.placeholder)!;
      const role = (resources[logicalId(fn)]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const reads = secretReads(roleStatements(workflows, role));
      if (SOURCE_STEPS.includes(step.placeholder)) expect(reads, step.placeholder).toEqual(['source', 'target']);
      else if (step.readsSecrets) expect(reads, step.placeholder).toEqual(['target']);
      else expect(reads, step.placeholder).toEqual([]);
    }
  });

  it('no role of the stack but those four may read a source secret (state machines, rules and schedules included)', () => {
    const readers = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::IAM::Role')
      .filter(([id]) => secretReads(roleStatements(workflows, id)).includes('source'))
      .map(([id]) => id);
    const expected = SOURCE_STEPS.map(
      (p) =>
        (
          resources[logicalId(built.workflows.functions.get(p)!)]!.Properties.Role as { 'Fn::GetAtt': [string, string] }
        )['Fn::GetAtt'][0],
    );
    expect(readers.sort()).toEqual(expected.sort());
  });

  it('the registry says source-and-target exactly for the handlers built on lambdaSourceDeps (the only provider that reads the source binding)', () => {
    for (const step of STEPS) {
      const source = readFileSync(repoPath(step.entry), 'utf8');
      expect(/\blambdaSourceDeps\b/.test(source), step.entry).toBe(step.readsSecrets === 'source-and-target');
      if (/\blambda(Source|Target)Deps\b/.test(source)) expect(step.readsSecrets, step.entry).toBeDefined();
    }
  });
});

describe('the read-only quality flows (quality-replay, quality-diagnose): their Lambdas may read, never write', () => {
  const roleOf = (placeholder: string) =>
    (
      resources[logicalId(built.workflows.functions.get(placeholder)!)]!.Properties.Role as {
        'Fn::GetAtt': [string, string];
      }
    )['Fn::GetAtt'][0];

  it.each([
    ['quality-replay', 'QualityReplayFunctionArn'],
    ['quality-diagnose', 'QualityDiagnoseFunctionArn'],
  ])(
    '%s: GetItem and DescribeTable, GetObject and ListBucket, the target secrets only; its state machine invokes that one function',
    (flow, placeholder) => {
      const statements = roleStatements(workflows, roleOf(placeholder));
      expect(allowedActions(statements, 'dynamodb:')).toEqual(['dynamodb:DescribeTable', 'dynamodb:GetItem']);
      expect(allowedActions(statements, 's3:')).toEqual(['s3:GetObject', 's3:ListBucket']);
      expect(secretReads(statements)).toEqual(['target']);
      expect(allowedActions(statements, 'sns:')).toEqual([]);
      expect(FLOWS.map((f) => f.name)).toContain(flow);
      const machine = resources[logicalId(built.workflows.stateMachines.get(flow)!)]!.Properties;
      expect(Object.keys(machine.DefinitionSubstitutions as Record<string, unknown>)).toEqual([placeholder]);
    },
  );
});

describe('execution history and state machine logs', () => {
  const keyId = () => {
    const keys = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    return keys[0]![0];
  };

  it('one customer-managed key, rotated and retained', () => {
    const key = resources[keyId()]!;
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
    // CloudWatch Logs may use it for the state machine log groups only.
    const statements = (key.Properties.KeyPolicy as { Statement: Array<Record<string, unknown>> }).Statement;
    const logs = statements.find((s) => s.Sid === 'StateMachineLogGroups')!;
    expect(JSON.stringify(logs.Principal)).toContain('logs.');
    // This stack's flow log groups only: cutpoint-*-<stack name>-<its stack id's first group> (not another stage's).
    const condition = JSON.stringify(logs.Condition);
    expect(condition).toContain(':log-group:/aws/vendedlogs/states/cutpoint-*');
    expect(condition).toContain('-CutpointWorkflows-');
    expect(condition).toContain('AWS::StackId');
  });

  it.each(FLOWS.map((f) => [f.name] as const))(
    '%s: history under the key, readable by its own role for its own ARN, logs under /aws/vendedlogs/states/',
    (name) => {
      const stateMachine = built.workflows.stateMachines.get(name)!;
      const resource = resources[logicalId(stateMachine)]!;
      expect(resource.Properties.StateMachineName).toBe(`CutpointWorkflows-${name}`);
      expect(resource.Properties.EncryptionConfiguration).toEqual({
        Type: 'CUSTOMER_MANAGED_KMS_KEY',
        KmsKeyId: { 'Fn::GetAtt': [keyId(), 'Arn'] },
        KmsDataKeyReusePeriodSeconds: 300,
      });
      const role = (resource.Properties.RoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      const kms = roleStatements(workflows, role).filter((s) => actionsOf(s).some((a) => a.startsWith('kms:')));
      const history = kms.find((s) => actionsOf(s).includes('kms:Decrypt'))!;
      expect(JSON.stringify((history as unknown as { Condition: unknown }).Condition)).toContain(
        `:stateMachine:CutpointWorkflows-${name}"`,
      );

      const logGroupArn = (
        resource.Properties.LoggingConfiguration as {
          Destinations: Array<{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [string, string] } } }>;
        }
      ).Destinations[0]!.CloudWatchLogsLogGroup.LogGroupArn;
      const logGroup = resources[logGroupArn['Fn::GetAtt'][0]]!;
      expect(logGroup.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId(), 'Arn'] });
      const logGroupName = logGroup.Properties.LogGroupName as { 'Fn::Join': [string, unknown[]] };
      // `/aws/vendedlogs/states/cutpoint-<flow>-<stack>-` + the first group of the stack's id: unique per stack.
      expect(logGroupName['Fn::Join'][1][0]).toBe(`/aws/vendedlogs/states/cutpoint-${name}-CutpointWorkflows-`);
      expect(JSON.stringify(logGroupName['Fn::Join'][1][1])).toContain('AWS::StackId');
    },
  );
});

describe('whoever starts or reads a flow may use the history key for exactly that flow', () => {
  // With the maintenance schedule, so EventBridge's start role is in the template too.
  let scheduled: Template;
  beforeAll(() => {
    const app = builtApp({ 'cutpoint:maintenanceLanes': 'logs:0' });
    app.app.synth();
    scheduled = Template.fromStack(app.workflows);
  }, 600_000);

  /** The state machines (as template values) a role's statements name in their KMS encryption-context conditions, for `action`. */
  function keyContexts(statements: Statement[], action: string): string[] {
    return statements
      .filter((s) => s.Effect === 'Allow' && actionsOf(s).includes(action))
      .flatMap((s) => {
        const condition = (s as unknown as { Condition?: { StringEquals?: Record<string, unknown> } }).Condition
          ?.StringEquals?.['kms:EncryptionContext:aws:states:stateMachineArn'];
        return condition === undefined
          ? []
          : (Array.isArray(condition) ? condition : [condition]).map((c) => JSON.stringify(c));
      });
  }

  it('every role with states:StartExecution on a state machine has kms:GenerateDataKey for that ARN (flows, dispatcher, schedule)', () => {
    const json = scheduled.toJSON().Resources as typeof resources;
    let starters = 0;
    for (const [id, r] of Object.entries(json)) {
      if (r.Type !== 'AWS::IAM::Role') continue;
      const statements = roleStatements(scheduled, id);
      const started = statements
        .filter((s) => s.Effect === 'Allow' && actionsOf(s).includes('states:StartExecution'))
        .flatMap(resourcesOf)
        .map((arn) => JSON.stringify(arn));
      if (started.length === 0) continue;
      starters += 1;
      const generate = keyContexts(statements, 'kms:GenerateDataKey');
      for (const arn of started) expect(generate, `${id} starts ${arn}`).toContain(arn);
    }
    // stream-maintain, deliver-window and publish-clickhouse (their own Distributed Map), the dispatcher, the schedule.
    expect(starters).toBeGreaterThanOrEqual(4);
  });
});
