import { Aspects, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { AlarmActions } from './alarm-actions.js';
import { OperationsTopic } from './operations-topic.js';

/**
 * Names and ARNs of the stateful resources, for other stacks. They are imports of this
 * stack's named exports (not CDK's generated cross-stack references), so every consumer
 * sees stable, readable values: `cdk-nag` acknowledgements can name them exactly, and an
 * operator can find them by export name.
 */
export interface StatefulRefs {
  tableName: string;
  tableArn: string;
  bucketName: string;
  bucketArn: string;
  /** SNS topic a retained delivery incident is published to; operators subscribe to it. */
  incidentTopicArn: string;
  /** The topic's KMS key (publishers need GenerateDataKey and Decrypt on it). */
  incidentKeyArn: string;
  /** SNS topic every CloudWatch alarm of the app notifies (ALARM and OK); operators subscribe to it. */
  operationsTopicArn: string;
}

export interface StatefulStackProps extends StackProps {
  /**
   * RETAIN (the default): the table, buckets and keys outlive the stack, with deletion and
   * termination protection. DESTROY is for a throwaway stage: no protection, and deleting
   * the stack deletes them (a bucket that still holds objects makes the delete fail).
   */
  removalPolicy?: RemovalPolicy;
  /** Addresses subscribed to the operations topic (each confirms by mail). */
  alarmEmails?: readonly string[];
}

/**
 * The authority table and the object bucket: everything that must outlive a redeploy.
 * Kept apart from the workflows so functions and state machines can be replaced freely
 * while data stays (RETAIN, deletion protection, termination protection).
 */
export class CutpointStatefulStack extends Stack {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly incidentTopic: Topic;
  readonly operationsTopic: Topic;
  readonly refs: StatefulRefs;

  constructor(
    scope: Construct,
    id: string,
    { removalPolicy = RemovalPolicy.RETAIN, alarmEmails = [], ...props }: StatefulStackProps = {},
  ) {
    const retained = removalPolicy === RemovalPolicy.RETAIN;
    super(scope, id, { terminationProtection: retained, ...props });

    this.table = new Table(this, 'Authority', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // AWS-managed KMS key: every use of the key is in CloudTrail, and DynamoDB
      // authorizes it for callers of the table, so the registry's table actions stay the
      // complete grant. A customer-managed key would add a key policy and kms:* grants to
      // every function for no control we need (we never share or revoke the key apart).
      encryption: TableEncryption.AWS_MANAGED,
      deletionProtection: retained,
      removalPolicy,
    });

    const accessLogs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // SSE-S3: server access log delivery needs no key grant to the logging service.
      encryption: BucketEncryption.S3_MANAGED,
      // Log delivery is granted by bucket policy (feature flag set in app.ts), not ACLs.
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy,
      autoDeleteObjects: !retained,
    });
    // No AwsSolutions-S1 acknowledgement needed: cdk-nag accepts a bucket that is itself a
    // server access log destination.

    this.bucket = new Bucket(this, 'Objects', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // SSE-S3: like the table's AWS-managed key, it keeps the registry's S3 actions the
      // complete grant (SSE-KMS would need kms:GenerateDataKey/Decrypt on every step).
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Generations are immutable and PUT with If-None-Match: *, which is the guard
      // against overwriting. Versioning is the backstop for what that guard does not
      // cover (a caller that omits it, a mistaken delete): the previous bytes survive as a
      // noncurrent version an operator can restore.
      versioned: true,
      lifecycleRules: [
        {
          id: 'expire-noncurrent-versions',
          // GC deletes become delete markers: without this, "gone" never frees storage.
          // 30 days is the window to undo an overwrite or a mistaken delete.
          noncurrentVersionExpiration: Duration.days(30),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(7),
        },
      ],
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'objects/',
      removalPolicy,
      autoDeleteObjects: !retained,
    });

    // Retained delivery incidents (INCIDENT_RETAINED). Here, not with the workflows, so the
    // operators' subscriptions survive any redeploy of functions and state machines.
    // Encrypted with a customer-managed key: notices carry invocation ids and routes.
    const incidentKey = new Key(this, 'IncidentTopicKey', {
      description: 'cutpoint: encrypts the delivery incident topic',
      enableKeyRotation: true,
      removalPolicy,
    });
    this.incidentTopic = new Topic(this, 'DeliveryIncidents', {
      displayName: 'cutpoint delivery incidents',
      masterKey: incidentKey,
      enforceSSL: true,
    });

    // Every alarm notifies the operations topic, here for the same reason as the incident
    // topic; this stack's own alarms too (the workflows stack adds the same Aspect).
    this.operationsTopic = new OperationsTopic(this, 'Operations', { removalPolicy }).topic;
    for (const email of alarmEmails) this.operationsTopic.addSubscription(new EmailSubscription(email));
    Aspects.of(this).add(new AlarmActions(this.operationsTopic));

    this.refs = {
      tableName: this.exportValueAs('TableName', this.table.tableName, 'Authority table (CUTPOINT_TABLE_NAME)'),
      tableArn: this.exportValueAs('TableArn', this.table.tableArn, 'Authority table ARN'),
      bucketName: this.exportValueAs('BucketName', this.bucket.bucketName, 'Object bucket (CUTPOINT_BUCKET_NAME)'),
      bucketArn: this.exportValueAs('BucketArn', this.bucket.bucketArn, 'Object bucket ARN'),
      incidentTopicArn: this.exportValueAs(
        'IncidentTopicArn',
        this.incidentTopic.topicArn,
        'Delivery incident topic: subscribe operators here',
      ),
      incidentKeyArn: this.exportValueAs(
        'IncidentTopicKeyArn',
        incidentKey.keyArn,
        'KMS key of the delivery incident topic',
      ),
      operationsTopicArn: this.exportValueAs(
        'OperationsTopicArn',
        this.operationsTopic.topicArn,
        'Operations topic: every alarm notifies it; subscribe operators here',
      ),
    };
  }

  /** An output exported as `<stackName>-<id>`; returns its import for other stacks. */
  private exportValueAs(id: string, value: string, description: string): string {
    const exportName = `${this.stackName}-${id}`;
    new CfnOutput(this, id, { value, description, exportName });
    return Fn.importValue(exportName);
  }
}
