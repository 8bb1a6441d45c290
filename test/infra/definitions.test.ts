import { Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { STEPS, type StepEntry } from '../../src/registry/index.js';
import { placeholdersOf, resolveFlowDefinition } from '../../infra/asl.js';
import { stepPolicyStatements } from '../../infra/step-policy.js';

// The pure halves of the CDK app: ASL placeholder resolution and registry-to-IAM mapping.

describe('ASL placeholders', () => {
  it('lists each placeholder once, in first-use order', () => {
    expect(placeholdersOf('{"a":"${First}","b":"${Second}","c":"${First}"}')).toEqual(['First', 'Second']);
  });

  it('resolves every placeholder to its registry step', () => {
    const [step] = STEPS;
    const definition = resolveFlowDefinition('x.asl.json', JSON.stringify({ Resource: `\${${step?.placeholder}}` }));
    expect(definition.steps).toEqual([step]);
  });

  it('fails loudly, naming the file, for a placeholder the registry does not know', () => {
    expect(() => resolveFlowDefinition('statemachines/x.asl.json', '{"Resource":"${NoSuchFunctionArn}"}')).toThrow(
      /statemachines\/x\.asl\.json uses \$\{NoSuchFunctionArn\}, which has no entry/,
    );
  });

  it('fails loudly for ASL that is not JSON', () => {
    expect(() => resolveFlowDefinition('statemachines/x.asl.json', '{"Resource":')).toThrow(/not valid JSON/);
  });
});

describe('step policy statements', () => {
  const stack = new Stack();
  const arns = {
    tableArn: 'arn:aws:dynamodb:eu-west-1:111111111111:table/t',
    bucketArn: 'arn:aws:s3:::b',
    incidentTopicArn: 'arn:aws:sns:eu-west-1:111111111111:incidents',
    incidentKeyArn: 'arn:aws:kms:eu-west-1:111111111111:key/k',
    deliverySecrets: {
      source: ['arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/source/*'],
      target: ['arn:aws:secretsmanager:eu-west-1:111111111111:secret:cutpoint/delivery/target/*'],
    },
  };
  const entry = (table: StepEntry['table'], bucket: StepEntry['bucket']): StepEntry => ({
    ...STEPS[0]!,
    table,
    bucket,
  });
  const render = (step: StepEntry) => stepPolicyStatements(step, arns).map((s) => stack.resolve(s.toStatementJson()));

  it('grants table actions on the table ARN only', () => {
    expect(render(entry(['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'], []))).toEqual([
      {
        Sid: 'AuthorityTable',
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:ConditionCheckItem'],
        Resource: arns.tableArn,
      },
    ]);
  });

  it('puts s3:ListBucket on the bucket and object actions on its keys', () => {
    expect(render(entry([], ['s3:ListBucket', 's3:GetObject']))).toEqual([
      { Sid: 'ObjectBucket', Effect: 'Allow', Action: 's3:ListBucket', Resource: arns.bucketArn },
      { Sid: 'ObjectKeys', Effect: 'Allow', Action: 's3:GetObject', Resource: `${arns.bucketArn}/*` },
    ]);
  });

  it('grants GetSecretValue on the target secrets to a target step, and on the source secrets only to a source step', () => {
    expect(render({ ...entry([], []), readsSecrets: 'target' })).toEqual([
      {
        Sid: 'TargetSecrets',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: arns.deliverySecrets.target[0],
      },
    ]);
    expect(render({ ...entry([], []), readsSecrets: 'source-and-target' })).toEqual([
      {
        Sid: 'SourceSecrets',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: arns.deliverySecrets.source[0],
      },
      {
        Sid: 'TargetSecrets',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: arns.deliverySecrets.target[0],
      },
    ]);
    expect(render(entry([], []))).toEqual([]);
  });

  it('grants Publish on the incident topic, and the key it is encrypted with, only to a notifying step', () => {
    expect(render({ ...entry([], []), notifies: true })).toEqual([
      { Sid: 'IncidentTopic', Effect: 'Allow', Action: 'sns:Publish', Resource: arns.incidentTopicArn },
      {
        Sid: 'IncidentTopicKey',
        Effect: 'Allow',
        Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
        Resource: arns.incidentKeyArn,
      },
    ]);
  });

  it('limits DeleteItem to the partition keys a step names (deleteLeadingKeys), in a statement of its own', () => {
    expect(
      render({ ...entry(['dynamodb:GetItem', 'dynamodb:DeleteItem'], []), deleteLeadingKeys: ['gen#stream/*'] }),
    ).toEqual([
      { Sid: 'AuthorityTable', Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: arns.tableArn },
      {
        Sid: 'AuthorityTableDelete',
        Effect: 'Allow',
        Action: 'dynamodb:DeleteItem',
        Resource: arns.tableArn,
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['gen#stream/*'] } },
      },
    ]);
  });

  it('limits writes to writePrefixes when a step names them, reads to its objectPrefixes', () => {
    expect(
      render({
        ...entry([], ['s3:ListBucket', 's3:GetObject', 's3:PutObject']),
        objectPrefixes: ['wal/', 'generations/stream/'],
        writePrefixes: ['generations/stream/'],
      }),
    ).toEqual([
      { Sid: 'ObjectBucket', Effect: 'Allow', Action: 's3:ListBucket', Resource: arns.bucketArn },
      {
        Sid: 'ObjectKeys',
        Effect: 'Allow',
        Action: 's3:GetObject',
        Resource: [`${arns.bucketArn}/wal/*`, `${arns.bucketArn}/generations/stream/*`],
      },
      {
        Sid: 'ObjectKeyWrites',
        Effect: 'Allow',
        Action: 's3:PutObject',
        Resource: `${arns.bucketArn}/generations/stream/*`,
      },
    ]);
  });

  it('grants nothing for a step with no actions', () => {
    expect(render(entry([], []))).toEqual([]);
  });
});
