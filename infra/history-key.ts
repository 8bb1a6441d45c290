import { ArnFormat, Aws, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';

/** The prefix AWS recommends for Step Functions log groups (their history is encrypted with this key). */
export const FLOW_LOG_GROUP_PREFIX = '/aws/vendedlogs/states/';

/**
 * What ends every flow log group name of one stack: `-<stack name>-<first group of the stack
 * id>`. The stack id's group tells two stages apart even where one stack name begins the
 * other's (`CutpointWorkflows`, `CutpointWorkflows-staging`).
 */
export function flowLogGroupSuffix(stackName: string): string {
  const stackIdGroup = Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))));
  return Fn.join('', [`-${stackName}-`, stackIdGroup]);
}

/**
 * The customer-managed key of every flow's execution history (StateMachine
 * encryptionConfiguration; AWS: "Data at rest encryption in Step Functions") and of the
 * state machines' log groups. Rotation on; retained, since a deleted key leaves that
 * history unreadable. Flow (CDK) grants each state machine role kms:Decrypt and
 * kms:GenerateDataKey limited by the state machine's encryption context, kms:GenerateDataKey
 * for log delivery, and log delivery kms:Decrypt in the key policy; here CloudWatch Logs
 * may use the key for this stack's state machine log groups only (AWS: "Encrypt log data in
 * CloudWatch Logs using AWS KMS", the aws:logs:arn encryption context). The Lambda
 * functions the flows invoke need nothing; an operator who reads execution details
 * (DescribeExecution, GetExecutionHistory) needs kms:Decrypt on it (docs/deploy.md "Deploy and run on AWS").
 */
export function executionHistoryKey(scope: Construct, id: string): Key {
  const key = new Key(scope, id, {
    description: 'cutpoint: Step Functions execution history and state machine logs',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const stack = Stack.of(scope);
  key.addToResourcePolicy(
    new PolicyStatement({
      sid: 'StateMachineLogGroups',
      principals: [new ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
            service: 'logs',
            resource: 'log-group',
            // This stack's flow log groups only (flow.ts flowLogGroupName), not another stage's.
            resourceName: Fn.join('', [`${FLOW_LOG_GROUP_PREFIX}cutpoint-*`, flowLogGroupSuffix(stack.stackName)]),
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      },
    }),
  );
  return key;
}

/**
 * What a caller of StartExecution (kms:GenerateDataKey, kms:Decrypt) or of
 * DescribeExecution / StopExecution (kms:Decrypt) on a state machine under the history key
 * needs besides the states: action, limited to those state machines by the encryption
 * context Step Functions sends (`aws:states:stateMachineArn`). The flows' own roles get this
 * from CDK for their own state machine; the dispatcher, the maintenance schedule and a flow
 * that starts child flows get it here for the state machines they start or read.
 */
export function grantHistoryKey(
  grantee: IGrantable,
  key: IKey,
  stateMachineArns: readonly string[],
  use: 'start' | 'read',
): void {
  if (stateMachineArns.length === 0) return;
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: use === 'start' ? ['kms:GenerateDataKey', 'kms:Decrypt'] : ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:EncryptionContext:aws:states:stateMachineArn': [...stateMachineArns] } },
    }),
  );
}
