import { Aws, RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

const CLOUDWATCH = new ServicePrincipal('cloudwatch.amazonaws.com');

/**
 * The operations topic: every CloudWatch alarm of the app notifies it (infra/alarm-actions.ts),
 * on ALARM and on OK. It lives in the stateful stack, beside the incident topic, so the
 * operators' subscriptions (`aws sns subscribe`, docs/operate.md "Alarms and dashboards") survive any
 * redeploy of the workflows.
 *
 * Encrypted with a customer-managed key. CloudWatch publishes an alarm notification as the
 * service principal cloudwatch.amazonaws.com, and SNS encrypts it with the topic's key on
 * that principal's behalf: without kms:GenerateDataKey* and kms:Decrypt for CloudWatch in the
 * key policy, SNS drops every notification silently (AWS: "Amazon SNS topic encryption with
 * CloudWatch alarms"). The topic policy names CloudWatch too, for alarms of this account only:
 * enforceSSL replaces SNS's default topic policy with our own statements.
 */
export class OperationsTopic extends Construct {
  readonly topic: Topic;
  readonly key: Key;

  constructor(
    scope: Construct,
    id: string,
    { removalPolicy = RemovalPolicy.RETAIN }: { removalPolicy?: RemovalPolicy } = {},
  ) {
    super(scope, id);

    this.key = new Key(this, 'Key', {
      description: 'cutpoint: encrypts the operations (alarm) topic',
      enableKeyRotation: true,
      removalPolicy,
    });
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmNotifications',
        principals: [CLOUDWATCH],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        // A key policy's resource is always the key itself.
        resources: ['*'],
      }),
    );

    this.topic = new Topic(this, 'Topic', {
      displayName: 'cutpoint operations alarms',
      masterKey: this.key,
      enforceSSL: true,
    });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccount',
        principals: [CLOUDWATCH],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:cloudwatch:${Aws.REGION}:${Aws.ACCOUNT_ID}:alarm:*` },
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
        },
      }),
    );
  }
}
