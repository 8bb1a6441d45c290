import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { BucketAction, StepEntry } from '../src/registry/index.js';

/** ARNs of the authority table and the object bucket, as the workflows stack sees them. */
export interface DataArns {
  tableArn: string;
  bucketArn: string;
  incidentTopicArn: string;
  incidentKeyArn: string;
  /**
   * Secrets a delivery step may read (route bindings' secret_arn): ARNs or ARN patterns.
   * `source`: only the steps that open the source (readsSecrets `source-and-target`);
   * `target`: every step that opens a database.
   */
  deliverySecrets: DeliverySecretArns;
}

/** The connection secrets of route sources and of route targets, kept apart (least privilege). */
export interface DeliverySecretArns {
  source: string[];
  target: string[];
}

/** s3:ListBucket applies to the bucket itself; every other registry action to its objects. */
const BUCKET_LEVEL: readonly BucketAction[] = ['s3:ListBucket'];
/** Object actions that change a key. */
const WRITES: readonly BucketAction[] = ['s3:PutObject', 's3:DeleteObject'];

/**
 * The data-plane statements for one step, built from its registry entry and nothing else,
 * so a step gets exactly the DynamoDB and S3 actions the registry lists (no grant*
 * helpers, which add actions the step never uses). TransactWriteItems is authorized per
 * leg by PutItem/UpdateItem/DeleteItem/ConditionCheckItem, so it needs no action of its own.
 */
export function stepPolicyStatements(step: StepEntry, arns: DataArns): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  // A limited DeleteItem gets a statement of its own, conditioned on the item's partition key.
  const limitedDelete = step.deleteLeadingKeys !== undefined && step.table.includes('dynamodb:DeleteItem');
  const tableActions = limitedDelete ? step.table.filter((a) => a !== 'dynamodb:DeleteItem') : step.table;
  if (tableActions.length > 0) {
    statements.push(
      new PolicyStatement({ sid: 'AuthorityTable', actions: [...tableActions], resources: [arns.tableArn] }),
    );
  }
  if (limitedDelete) {
    statements.push(
      new PolicyStatement({
        sid: 'AuthorityTableDelete',
        actions: ['dynamodb:DeleteItem'],
        resources: [arns.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...(step.deleteLeadingKeys ?? [])] } },
      }),
    );
  }
  const bucketActions = step.bucket.filter((a) => BUCKET_LEVEL.includes(a));
  if (bucketActions.length > 0) {
    statements.push(new PolicyStatement({ sid: 'ObjectBucket', actions: bucketActions, resources: [arns.bucketArn] }));
  }
  // Writes limited more narrowly than reads (writePrefixes) get a statement of their own.
  const writes = step.writePrefixes ? step.bucket.filter((a) => WRITES.includes(a)) : [];
  const objectActions = step.bucket.filter((a) => !BUCKET_LEVEL.includes(a) && !writes.includes(a));
  if (objectActions.length > 0) {
    statements.push(
      new PolicyStatement({ sid: 'ObjectKeys', actions: objectActions, resources: objectArns(step, arns.bucketArn) }),
    );
  }
  if (writes.length > 0) {
    statements.push(
      new PolicyStatement({
        sid: 'ObjectKeyWrites',
        actions: writes,
        resources: objectArns({ objectPrefixes: step.writePrefixes }, arns.bucketArn),
      }),
    );
  }
  if (step.readsSecrets === 'source-and-target') {
    statements.push(
      new PolicyStatement({
        sid: 'SourceSecrets',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [...arns.deliverySecrets.source],
      }),
    );
  }
  if (step.readsSecrets) {
    statements.push(
      new PolicyStatement({
        sid: 'TargetSecrets',
        actions: ['secretsmanager:GetSecretValue'],
        resources: [...arns.deliverySecrets.target],
      }),
    );
  }
  if (step.notifies) statements.push(...incidentTopicStatements(arns));
  return statements;
}

/** Publishing to the incident topic, and nothing else of it: a notifying step, the recovery dispatcher. */
export function incidentTopicStatements(
  arns: Pick<DataArns, 'incidentTopicArn' | 'incidentKeyArn'>,
): PolicyStatement[] {
  return [
    new PolicyStatement({ sid: 'IncidentTopic', actions: ['sns:Publish'], resources: [arns.incidentTopicArn] }),
    // Publishing to a KMS-encrypted topic: SNS asks KMS on the publisher's behalf.
    new PolicyStatement({
      sid: 'IncidentTopicKey',
      actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
      resources: [arns.incidentKeyArn],
    }),
  ];
}

/** The secret ARNs (patterns included) a step may read: source ones only with `source-and-target`. */
export function secretArnsOf(step: Pick<StepEntry, 'readsSecrets'>, secrets: DeliverySecretArns): string[] {
  if (!step.readsSecrets) return [];
  return step.readsSecrets === 'source-and-target'
    ? [...new Set([...secrets.source, ...secrets.target])]
    : [...secrets.target];
}

/**
 * The partition keys of the quality governance items (capsules `quality#<targetId>`,
 * docs/rules.md#authority-keys).
 */
export const QUALITY_KEY_PATTERN = 'quality#*';

/**
 * No step may delete a quality item (docs/rules.md#authority-keys) — "clear the journal" is impossible for the
 * code, not only forbidden. No registry entry grants DeleteItem today; this explicit Deny
 * on the quality partition keys (also a DeleteItem leg of a transaction) keeps it so if
 * one ever does. Added by StepFunction to every role with table actions.
 */
export function noQualityDelete(tableArn: string): PolicyStatement {
  return new PolicyStatement({
    sid: 'NoQualityDelete',
    effect: Effect.DENY,
    actions: ['dynamodb:DeleteItem'],
    resources: [tableArn],
    conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [QUALITY_KEY_PATTERN] } },
  });
}

/** Every object key in the bucket: keys derive from identity at run time. */
export function objectArn(bucketArn: string): string {
  return `${bucketArn}/*`;
}

/** The object ARNs a step's object actions apply to: its key prefixes, else every key. */
export function objectArns(step: Pick<StepEntry, 'objectPrefixes'>, bucketArn: string): string[] {
  return step.objectPrefixes ? step.objectPrefixes.map((prefix) => `${bucketArn}/${prefix}*`) : [objectArn(bucketArn)];
}
