// Over ~300 lines (433), kept whole — one subject: the synthesized stacks, built once and shared by its cases.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOWS, OBSERVE_TIMING, STEPS } from '../../src/registry/index.js';
import type { CutpointApp } from '../../infra/app.js';
import { builtApp } from './support/built-app.js';
import { operationsTemplate } from './support/operations-template.js';
import { placeholdersOf, resolveFlowDefinition } from '../../infra/asl.js';
import { flowPlaceholder } from '../../src/local/asl.js';
import { RECOVERY_FLOWS } from '../../src/recovery/recovery-stops.js';
import { repoPath } from '../../infra/repo.js';
import { actionsOf, allowedActions, resourcesOf, roleStatements, unordered } from './policies.js';
import { logicalId } from './support/logical-id.js';

// One build shared by the whole file. The templates only: the Lambda code is bundled by
// test/infra/bundles.test.ts (one esbuild run) and by `cdk synth` in CI.
let built: CutpointApp;
let stateful: Template;
let workflows: Template;
/** The workflows' nested operations stack (alarms, dashboard), parameters resolved. */
let ops: Template;

beforeAll(() => {
  built = builtApp();
  built.app.synth();
  stateful = Template.fromStack(built.stateful);
  workflows = Template.fromStack(built.workflows);
  ops = operationsTemplate(built.workflows);
}, 600_000);

function fnFor(placeholder: string) {
  const fn = built.workflows.functions.get(placeholder);
  if (!fn) throw new Error(`no function for ${placeholder}`);
  return fn;
}

const importOf = (name: string) => ({ 'Fn::ImportValue': `CutpointStateful-${name}` });
const RETAINED = { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' };

describe('template size', () => {
  it("the workflows template and its nested operations template are written without indentation and stay well inside CloudFormation's 1 MB", () => {
    for (const stack of [built.workflows, built.workflows.operations]) {
      const text = readFileSync(join(built.app.outdir, stack.templateFile), 'utf8');
      expect(text, stack.templateFile).not.toMatch(/\n\s+"/);
      // Headroom for growth: a registry entry adds a function, its role, alarms and a dashboard row.
      // CDK warns from 80 %.
      expect(text.length, stack.templateFile).toBeLessThan(800_000);
    }
  });
});

describe('CutpointStateful', () => {
  it('has the authority table: pk/sk strings, on demand, PITR, KMS encryption, deletion protection, retained', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', 1);
    stateful.hasResource('AWS::DynamoDB::Table', {
      ...RETAINED,
      Properties: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayEquals([
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        // SSEEnabled without a key: the AWS-managed KMS key (aws/dynamodb).
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
  });

  it('has the object bucket: no public access, versioned, SSE-S3, access logs, retained', () => {
    const objects = logicalId(built.stateful.bucket);
    const buckets = stateful.findResources('AWS::S3::Bucket');
    expect(Object.keys(buckets)).toHaveLength(2);
    const accessLogs = Object.keys(buckets).find((id) => id !== objects);
    expect(buckets[objects]).toMatchObject({
      ...RETAINED,
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        VersioningConfiguration: { Status: 'Enabled' },
        LoggingConfiguration: { DestinationBucketName: { Ref: accessLogs } },
      },
    });
    expect(buckets[accessLogs!]).toMatchObject({
      ...RETAINED,
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      },
    });
  });

  it('denies every non-TLS request to both buckets', () => {
    for (const bucket of Object.keys(stateful.findResources('AWS::S3::Bucket'))) {
      stateful.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucket },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('exports table and bucket names and ARNs under stable names', () => {
    for (const name of ['TableName', 'TableArn', 'BucketName', 'BucketArn']) {
      stateful.hasOutput(name, { Export: { Name: `CutpointStateful-${name}` } });
    }
  });

  it('has the delivery incident topic: KMS-encrypted with a rotating customer key, TLS only, exported', () => {
    // Two topics: this one and the operations (alarm) topic, test/infra/alarms.test.ts.
    expect(Object.keys(stateful.findResources('AWS::SNS::Topic'))).toHaveLength(2);
    const topic = stateful.toJSON().Resources[logicalId(built.stateful.incidentTopic)];
    const keyId = (topic!.Properties.KmsMasterKeyId as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    expect(stateful.toJSON().Resources[keyId]).toMatchObject({
      Type: 'AWS::KMS::Key',
      Properties: { EnableKeyRotation: true },
      ...RETAINED,
    });
    stateful.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    for (const name of ['IncidentTopicArn', 'IncidentTopicKeyArn']) {
      stateful.hasOutput(name, { Export: { Name: `CutpointStateful-${name}` } });
    }
  });

  it('creates no custom resources (no log-retention or auto-delete Lambdas)', () => {
    for (const template of [stateful, workflows]) {
      const types = Object.values(template.toJSON().Resources as Record<string, { Type: string }>).map((r) => r.Type);
      expect(types.filter((t) => t.startsWith('Custom::') || t === 'AWS::CloudFormation::CustomResource')).toEqual([]);
    }
  });
});

describe('CutpointWorkflows functions', () => {
  it('builds exactly one Lambda per registry step (and the recovery dispatcher)', () => {
    workflows.resourceCountIs('AWS::Lambda::Function', STEPS.length + 1);
    expect([...built.workflows.functions.keys()].sort()).toEqual(STEPS.map((s) => s.placeholder).sort());
  });

  it.each(STEPS.map((s) => [s.placeholder, s] as const))(
    '%s: nodejs24.x on arm64, registry timeout, table and bucket env, X-Ray, own log group',
    (placeholder, step) => {
      const fn = workflows.toJSON().Resources[logicalId(fnFor(placeholder))];
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: step.timeoutSeconds,
        TracingConfig: { Mode: 'Active' },
        Environment: {
          Variables: { CUTPOINT_TABLE_NAME: importOf('TableName'), CUTPOINT_BUCKET_NAME: importOf('BucketName') },
        },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
      const logGroup = workflows.toJSON().Resources[fn.Properties.LoggingConfig.LogGroup.Ref];
      expect(logGroup).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { RetentionInDays: expect.any(Number) },
      });
    },
  );
});

describe('CutpointWorkflows IAM: each function gets exactly its registry actions', () => {
  const roleOf = (placeholder: string) => {
    const fn = workflows.toJSON().Resources[logicalId(fnFor(placeholder))];
    return (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  };

  it.each(STEPS.map((s) => [s.placeholder, s] as const))('%s', (placeholder, step) => {
    const role = roleOf(placeholder);
    const statements = roleStatements(workflows, role);
    expect(allowedActions(statements, 'dynamodb:')).toEqual([...step.table].sort());
    expect(allowedActions(statements, 's3:')).toEqual([...step.bucket].sort());
    // A source step: one statement for the source secrets, one for the target secrets; a target step: the latter only.
    const secretStatements = step.readsSecrets === 'source-and-target' ? 2 : step.readsSecrets ? 1 : 0;
    expect(allowedActions(statements, 'secretsmanager:')).toEqual(
      Array<string>(secretStatements).fill('secretsmanager:GetSecretValue'),
    );
    expect(allowedActions(statements, 'sns:')).toEqual(step.notifies ? ['sns:Publish'] : []);
    expect(allowedActions(statements, 'kms:')).toEqual(step.notifies ? ['kms:Decrypt', 'kms:GenerateDataKey'] : []);

    // No wildcard actions at all, and no AWS-managed policies (AWSLambdaBasicExecutionRole).
    expect(statements.flatMap(actionsOf).filter((a) => a.includes('*'))).toEqual([]);
    expect(workflows.toJSON().Resources[role].Properties.ManagedPolicyArns).toBeUndefined();

    for (const statement of statements) {
      const actions = actionsOf(statement);
      if (actions.some((a) => a.startsWith('dynamodb:')))
        expect(resourcesOf(statement)).toEqual([importOf('TableArn')]);
      if (actions.some((a) => a === 's3:ListBucket')) expect(resourcesOf(statement)).toEqual([importOf('BucketArn')]);
      if (actions.some((a) => a.startsWith('s3:') && a !== 's3:ListBucket')) {
        // Every key, or only the step's key prefixes (the GC Delete step: WAL objects and stream generations);
        // writes limited more narrowly (writePrefixes) in a statement of their own.
        const writes = actions.filter((a) => a === 's3:PutObject' || a === 's3:DeleteObject');
        if (step.writePrefixes)
          expect(
            writes.length === 0 || writes.length === actions.length,
            `${step.placeholder}: writes beside reads`,
          ).toBe(true);
        const prefixes = (step.writePrefixes && writes.length ? step.writePrefixes : step.objectPrefixes) ?? [''];
        expect(resourcesOf(statement)).toEqual(
          unordered(prefixes.map((prefix) => ({ 'Fn::Join': ['', [importOf('BucketArn'), `/${prefix}*`]] }))),
        );
      }
      // Only the delivery secrets prefixes in this account and region (the source one for a source step only,
      // test/infra/least-privilege.test.ts); only the incident topic and its key.
      if (actions.some((a) => a.startsWith('secretsmanager:'))) {
        expect(JSON.stringify(resourcesOf(statement))).toMatch(/:secret:cutpoint\/delivery\/(source|target)\/\*/);
        expect(resourcesOf(statement)).toHaveLength(1);
      }
      if (actions.some((a) => a.startsWith('sns:')))
        expect(resourcesOf(statement)).toEqual([importOf('IncidentTopicArn')]);
      if (actions.some((a) => a.startsWith('kms:')))
        expect(resourcesOf(statement)).toEqual([importOf('IncidentTopicKeyArn')]);
    }
  });

  it('the probe only reads and the object writer never updates authority items', () => {
    const probe = allowedActions(roleStatements(workflows, roleOf('GenerationProbeFunctionArn')), 'dynamodb:');
    expect(probe).toEqual(['dynamodb:GetItem']);
    const writer = allowedActions(roleStatements(workflows, roleOf('GenerationWriteObjectFunctionArn')), 'dynamodb:');
    expect(writer).not.toContain('dynamodb:UpdateItem');
    expect(writer).not.toContain('dynamodb:PutItem');
  });
});

// F4 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('CutpointWorkflows publish-clickhouse (F4)', () => {
  it('ObserveTarget: default deadline + reserve < the deployed Lambda timeout < the deployed Task TimeoutSeconds', () => {
    const fn = workflows.toJSON().Resources[logicalId(fnFor('QualityObserveTargetFunctionArn'))];
    const lambda = fn.Properties.Timeout as number;
    expect(lambda).toBe(OBSERVE_TIMING.lambdaSeconds);
    expect(OBSERVE_TIMING.deadlineSeconds + OBSERVE_TIMING.reserveSeconds).toBeLessThan(lambda);
    const machine = workflows.toJSON().Resources[logicalId(built.workflows.stateMachines.get('publish-clickhouse')!)];
    const task = JSON.parse(machine.Properties.DefinitionString as string).States.ObserveTarget as {
      TimeoutSeconds: number;
    };
    expect(lambda).toBeLessThan(task.TimeoutSeconds);
  });

  it('the recovery dispatcher starts delivery-reconcile when it ends FAILED, TIMED_OUT or ABORTED, as for deliver-window', () => {
    const recoveryOf = (flow: string) => recoveryInputOf(flow)?.recovery;
    expect(recoveryOf('publish-clickhouse')).toEqual({
      by: 'delivery-reconcile',
      on: ['FAILED', 'TIMED_OUT', 'ABORTED'],
    });
    expect(recoveryOf('publish-clickhouse')).toEqual(recoveryOf('deliver-window'));
  });
});

describe.each(FLOWS.map((f) => [f.name, f] as const))('CutpointWorkflows flow %s', (name, flow) => {
  const asl = readFileSync(repoPath(`statemachines/${name}.asl.json`), 'utf8');
  const placeholders = placeholdersOf(asl);
  const { distributedMap, childFlows } = resolveFlowDefinition(name, asl);
  // `${<Flow>StateMachineArn}`: a child flow this one starts (stream-maintain), substituted by that state machine.
  const childOf = (placeholder: string) => childFlows.find((f) => flowPlaceholder(f) === placeholder);
  const stepPlaceholders = placeholders.filter((p) => !childOf(p));
  const stateMachine = () => built.workflows.stateMachines.get(name)!;
  const props = () => workflows.toJSON().Resources[logicalId(stateMachine())].Properties;

  it('is one state machine per registry flow', () => {
    workflows.resourceCountIs('AWS::StepFunctions::StateMachine', FLOWS.length);
    expect(props().StateMachineType).toBe(flow.type);
  });

  it('deploys the ASL file verbatim, every placeholder substituted by its registry function', () => {
    const { DefinitionString, DefinitionSubstitutions } = props();
    expect(DefinitionString).toBe(asl);
    expect(Object.keys(DefinitionSubstitutions).sort()).toEqual([...placeholders].sort());
    for (const placeholder of placeholders) {
      const child = childOf(placeholder);
      const expected = child
        ? { Ref: logicalId(built.workflows.stateMachines.get(child)!) }
        : { 'Fn::GetAtt': [logicalId(fnFor(placeholder)), 'Arn'] };
      expect(DefinitionSubstitutions[placeholder]).toEqual(expected);
    }
    // What Step Functions runs after substitution: no placeholder left, no literal ARN.
    const substituted = (DefinitionString as string).replace(/\$\{(\w+)\}/g, (_m, p: string) =>
      p in DefinitionSubstitutions ? 'SUBSTITUTED' : _m,
    );
    expect(substituted).not.toContain('${');
    // The only ARNs: a Distributed Map's S3 reader and writer integrations, and the start of a child flow.
    expect(
      substituted.replace(/"arn:aws:states:::(s3:(getObject|putObject)|states:startExecution\.sync:2)"/g, '""'),
    ).not.toMatch(/arn:aws/);
  });

  it('logs ALL without execution data, and traces', () => {
    expect(props()).toMatchObject({
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      TracingConfiguration: { Enabled: true },
    });
  });

  it('may invoke exactly the functions its ASL names, and touches no data directly', () => {
    const role = props().RoleArn['Fn::GetAtt'][0] as string;
    const statements = roleStatements(workflows, role);
    const lambda = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('lambda:')));
    expect(lambda.flatMap(actionsOf)).toEqual(stepPlaceholders.length ? ['lambda:InvokeFunction'] : []);
    const expected = stepPlaceholders.map((p) => ({ 'Fn::GetAtt': [logicalId(fnFor(p)), 'Arn'] }));
    expect(lambda.flatMap(resourcesOf)).toEqual(unordered(expected));
    expect(allowedActions(statements, 'dynamodb:')).toEqual([]);
    if (childFlows.length) {
      // Starts its child flows and follows their executions (test/infra/stream-maintenance.test.ts checks the resources).
      expect(allowedActions(statements, 's3:')).toEqual([]);
      expect(allowedActions(statements, 'states:').sort()).toEqual([
        'states:DescribeExecution',
        'states:StartExecution',
        'states:StopExecution',
      ]);
      return;
    }
    if (!distributedMap) {
      expect(allowedActions(statements, 's3:')).toEqual([]);
      expect(allowedActions(statements, 'states:')).toEqual([]);
      return;
    }
    // A Distributed Map: its item list and results under delivery/ only, and its own child executions.
    const s3 = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
    expect(s3.flatMap(actionsOf).sort()).toEqual([
      's3:AbortMultipartUpload',
      's3:GetObject',
      's3:ListMultipartUploadParts',
      's3:PutObject',
    ]);
    expect(JSON.stringify(s3.flatMap(resourcesOf))).toContain('/delivery/*');
    expect(allowedActions(statements, 'states:').sort()).toEqual([
      'states:DescribeExecution',
      'states:RedriveExecution',
      'states:StartExecution',
      'states:StopExecution',
    ]);
    const start = statements.find((st) => actionsOf(st).includes('states:StartExecution'));
    expect(JSON.stringify(resourcesOf(start!))).toContain(`:stateMachine:`);
    expect(JSON.stringify(resourcesOf(start!))).toContain(`-${name}`);
  });

  it("alarms on failed executions: a flow with a recovery rule or that runs recoveries on the dispatcher's ExecutionOutcome=failed (designed stops excluded), any other on AWS/States ExecutionsFailed (test/infra/alarms.test.ts has the rest)", () => {
    const failed =
      flow.recovery || Object.hasOwn(RECOVERY_FLOWS, name)
        ? {
            Namespace: 'Cutpoint',
            MetricName: 'ExecutionOutcome',
            Dimensions: Match.arrayEquals([
              { Name: 'Flow', Value: name },
              { Name: 'Outcome', Value: 'failed' },
            ]),
          }
        : {
            Namespace: 'AWS/States',
            MetricName: 'ExecutionsFailed',
            Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: logicalId(stateMachine()) } }],
          };
    ops.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `CutpointWorkflows-ops-${name}-failed`,
      ...failed,
    });
  });

  it('exports its ARN', () => {
    const outputs = workflows.findOutputs('*', { Value: { Ref: logicalId(stateMachine()) } });
    expect(Object.keys(outputs)).toHaveLength(1);
  });

  it('the flow it declares recovers it: the recovery dispatcher gets its ended executions (test/infra/recovery-dispatch.test.ts)', () => {
    const input = recoveryInputOf(name);
    if (flow.type === 'EXPRESS') return expect(input).toBeUndefined();
    expect(input?.recovery).toEqual(flow.recovery ? { by: flow.recovery.by, on: [...flow.recovery.on] } : undefined);
    if (!flow.recovery) return;
    // The recovering ASL unwraps the dispatcher's {recoveryOf, originalInput}.
    const recoveringAsl = readFileSync(repoPath(`statemachines/${flow.recovery.by}.asl.json`), 'utf8');
    expect(recoveringAsl).toContain('"Variable": "$.recoveryOf"');
    expect(recoveringAsl).toContain('States.StringToJson($.originalInput)');
    // A re-run never follows a deliberate stop; an observing reconcile does (deliver-window).
    if (flow.recovery.by === name) expect(flow.recovery.on).not.toContain('ABORTED');
  });
});

describe('object deletion', () => {
  it('only GC Delete (WAL objects and stream generations) and delivery Expire (work objects, never evidence) may delete objects', () => {
    const deleters = STEPS.filter((step) => step.bucket.includes('s3:DeleteObject'));
    expect(deleters.map((step) => [step.placeholder, step.objectPrefixes])).toEqual([
      ['StreamGcDeleteFunctionArn', ['wal/', 'generations/stream/']],
      ['DeliveryExpireFunctionArn', ['delivery/*/chunk-', 'delivery/*/plan.json', 'delivery/*/map-results/']],
    ]);
  });
});

/** The recovery dispatcher's constant input for a flow's rule (its `recovery` without the ARN), or undefined when no rule routes it. */
function recoveryInputOf(flow: string): { recovery?: { by: string; on: string[] } } | undefined {
  const rule = built.workflows.recovery.rules.get(flow);
  if (!rule) return undefined;
  const template = workflows.toJSON().Resources[logicalId(rule)].Properties.Targets[0].InputTransformer
    .InputTemplate as { 'Fn::Join'?: [string, unknown[]] } | string;
  const text = (typeof template === 'string' ? [template] : template['Fn::Join']![1])
    .map((p) => (typeof p === 'string' ? p : 'ref'))
    .join('');
  const input = JSON.parse(text.replace(/<detail-[A-Za-z]+>/g, 'null')) as {
    recovery?: { by: string; on: string[]; stateMachineArn?: string };
  };
  if (input.recovery) delete input.recovery.stateMachineArn;
  return input;
}
