import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { INCIDENT_TOPIC_ENV } from '../functions/lib/incident-topic.js';
import type { StepEntry } from '../src/registry/index.js';
import { METRIC_NAMESPACE, SERVICE_NAME, STEP_NAME_ENV } from '../src/telemetry/metric-names.js';
import { stepNameOf } from '../src/telemetry/step-name.js';
import { lambdaBundling } from './bundling.js';
import { acknowledgeWildcardResource } from './nag.js';
import { REPO_ROOT } from '../src/local/asl.js';
import { repoPath } from './repo.js';
import { reachesDatabases, vpcAccessStatement, type VpcAttachment } from './network.js';
import { noQualityDelete, objectArns, secretArnsOf, stepPolicyStatements, type DataArns } from './step-policy.js';

export interface StepFunctionProps {
  step: StepEntry;
  data: DataArns & { tableName: string; bucketName: string };
  logRetention: RetentionDays;
  /** With a VPC configured: where a database-reaching step (reachesDatabases) runs. */
  network?: VpcAttachment;
  /** Deploy-time settings of this step beyond the common ones (e.g. CUTPOINT_GC_GRACE). */
  environment?: Record<string, string>;
}

/**
 * One Lambda for one registry step: bundled locally with esbuild (no Docker), with its own
 * role that may write its own log group and use exactly the registry's table and bucket
 * actions.
 */
export class StepFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, { step, data, logRetention, network, environment }: StepFunctionProps) {
    super(scope, id);

    const logGroup = new LogGroup(this, 'Logs', { retention: logRetention, removalPolicy: RemovalPolicy.RETAIN });

    // An explicit role instead of the default one, which carries the AWS-managed
    // AWSLambdaBasicExecutionRole (logs on every log group in the account).
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `cutpoint step ${step.placeholder}: the registry's actions and its own log group`,
    });
    logGroup.grantWrite(role);
    for (const statement of stepPolicyStatements(step, data)) role.addToPrincipalPolicy(statement);
    if (step.table.length > 0) role.addToPrincipalPolicy(noQualityDelete(data.tableArn));
    const vpc = network && reachesDatabases(step) ? network : undefined;
    if (vpc) role.addToPrincipalPolicy(vpcAccessStatement());

    this.fn = new NodejsFunction(this, 'Function', {
      description: `cutpoint ${step.entry}`,
      entry: repoPath(step.entry),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: repoPath('package-lock.json'),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: step.memoryMB,
      timeout: Duration.seconds(step.timeoutSeconds),
      role,
      logGroup,
      tracing: Tracing.ACTIVE,
      ...(vpc ? { vpc: vpc.vpc, vpcSubnets: { subnets: vpc.subnets }, securityGroups: vpc.securityGroups } : {}),
      environment: {
        CUTPOINT_TABLE_NAME: data.tableName,
        CUTPOINT_BUCKET_NAME: data.bucketName,
        ...environment,
        ...(step.notifies ? { [INCIDENT_TOPIC_ENV]: data.incidentTopicArn } : {}),
        // Stack traces point at the TypeScript source the sourcemap describes.
        NODE_OPTIONS: '--enable-source-maps',
        // Telemetry (functions/lib/telemetry.ts): the step's name is the Step dimension and log key.
        [STEP_NAME_ENV]: stepNameOf(step.placeholder),
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRIC_NAMESPACE,
      },
      bundling: lambdaBundling(),
    });

    // Tracing: ACTIVE adds xray:PutTraceSegments/PutTelemetryRecords on "*"; a VPC function's ENI actions are on "*" too.
    acknowledgeWildcardResource(
      role,
      '*',
      `X-Ray PutTraceSegments and PutTelemetryRecords do not support resource-level permissions; "*" is the only resource they accept (added by tracing: ACTIVE).${
        vpc
          ? ' The ENI actions a function in a VPC needs (ec2:CreateNetworkInterface, DescribeNetworkInterfaces, DescribeSubnets, DeleteNetworkInterface, AssignPrivateIpAddresses, UnassignPrivateIpAddresses, as in AWSLambdaVPCAccessExecutionRole) do not support resource-level permissions either.'
          : ''
      }`,
    );
    for (const arn of secretArnsOf(step, data.deliverySecrets).filter((a) => a.includes('*'))) {
      acknowledgeWildcardResource(
        role,
        arn,
        `A route manifest names its connection secrets (secret_arn) at run time, not at deploy time; ${step.placeholder} may read only secrets under this name prefix (${step.readsSecrets === 'source-and-target' ? 'it opens the source and the target' : 'it opens the target only'}), and only GetSecretValue (override with the CDK context values cutpoint:deliverySourceSecretArns / cutpoint:deliveryTargetSecretArns).`,
      );
    }
    if (step.bucket.some((a) => a !== 's3:ListBucket')) {
      for (const resource of objectArns(step, data.bucketArn)) {
        acknowledgeWildcardResource(
          role,
          resource,
          `Object keys are derived from task identity at run time (root, generation, task id) and cannot be enumerated at deploy time; the wildcard is limited to this one bucket${step.objectPrefixes ? ` under ${step.objectPrefixes.join(', ')}` : ''} and to the registry's object actions for ${step.placeholder} (${step.bucket.join(', ')}).`,
        );
      }
    }
  }
}
