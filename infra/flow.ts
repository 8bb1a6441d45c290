import { ArnFormat, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  CustomerManagedEncryptionConfiguration,
  DefinitionBody,
  LogLevel,
  StateMachine,
  StateMachineType,
} from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry } from '../src/registry/index.js';
import { flowPlaceholder } from '../src/local/asl.js';
import { loadFlowDefinition } from './asl.js';
import { FLOW_LOG_GROUP_PREFIX, flowLogGroupSuffix, grantHistoryKey } from './history-key.js';
import { acknowledgeWildcardResource } from './nag.js';

export interface FlowProps {
  flow: FlowEntry;
  /** Every registry step's function, by placeholder. */
  functions: ReadonlyMap<string, IFunction>;
  logRetention: RetentionDays;
  /** The object bucket: a Distributed Map reads its items from it and writes its results to it. */
  bucketArn: string;
  /** The state machines built so far, by flow name: the flows this one starts as child executions must be among them. */
  stateMachines: ReadonlyMap<string, StateMachine>;
  /** The customer-managed key execution history (inputs, outputs, manifests, fences) is encrypted with. */
  historyKey: IKey;
}

/**
 * One state machine from statemachines/<name>.asl.json, the same file the local runner
 * executes. Placeholders become function ARNs through definitionSubstitutions, and the
 * role may invoke exactly the functions the ASL names. Its alarms: infra/flow-alarms.ts.
 */
export class Flow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(
    scope: Construct,
    id: string,
    { flow, functions, logRetention, bucketArn, stateMachines, historyKey }: FlowProps,
  ) {
    super(scope, id);

    const definition = loadFlowDefinition(flow.name);
    const invoked = definition.steps.map((step) => {
      const fn = functions.get(step.placeholder);
      if (!fn) throw new Error(`${definition.file}: no function was built for \${${step.placeholder}}`);
      return { placeholder: step.placeholder, fn };
    });

    const children = definition.childFlows.map((name) => {
      const stateMachine = stateMachines.get(name);
      if (!stateMachine)
        throw new Error(`${definition.file}: starts ${name}, which must come before it in src/registry/flows.ts FLOWS`);
      return { placeholder: flowPlaceholder(name), stateMachine };
    });

    // Under /aws/vendedlogs/states/ (AWS: keeps the CloudWatch Logs resource policy for vended
    // logs below its size limit), unique per stack: named after the flow, the stack and the
    // first group of the stack's id, so a retained group never blocks a redeployed stack.
    const logGroup = new LogGroup(this, 'Logs', {
      logGroupName: flowLogGroupName(flow.name, Stack.of(this).stackName),
      encryptionKey: historyKey,
      retention: logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Named: the role's key grant is limited to this state machine's ARN (the encryption
    // context), and a Distributed Map's role names its own ARN; a generated name would make
    // both circular.
    const stateMachineName = `${Stack.of(this).stackName}-${flow.name}`;
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      // Inline (fromString) rather than fromFile: fromFile uploads the ASL as an S3 asset
      // and the template only carries its location, so `cdk diff` could not show a flow
      // change. Inline, the reviewed template holds the exact definition.
      definitionBody: DefinitionBody.fromString(definition.body),
      definitionSubstitutions: Object.fromEntries([
        ...invoked.map(({ placeholder, fn }) => [placeholder, fn.functionArn]),
        ...children.map(({ placeholder, stateMachine }) => [placeholder, stateMachine.stateMachineArn]),
      ]),
      stateMachineType: flow.type === 'STANDARD' ? StateMachineType.STANDARD : StateMachineType.EXPRESS,
      // Execution data stays out of the logs: step inputs and outputs may carry
      // privileged journal content and fencing tokens; event history keeps it, under IAM.
      logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
      // Execution history under our own key (AWS: "Data at rest encryption" for Step Functions):
      // CDK grants the role kms:Decrypt/GenerateDataKey for this state machine's encryption
      // context, kms:GenerateDataKey for log delivery, and log delivery kms:Decrypt in the key policy.
      encryptionConfiguration: new CustomerManagedEncryptionConfiguration(historyKey, HISTORY_KEY_REUSE),
    });

    // Exactly the unqualified ARNs the ASL invokes (no `:*` versions or aliases, which
    // fn.grantInvoke would add and which nothing here uses).
    if (invoked.length > 0) {
      this.stateMachine.addToRolePolicy(
        new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: invoked.map(({ fn }) => fn.functionArn) }),
      );
    }
    if (definition.distributedMap) this.grantDistributedMap(stateMachineName, bucketArn);
    if (children.length)
      this.grantChildExecutions(
        children.map((c) => c.stateMachine),
        historyKey,
      );
    acknowledgeWildcardResource(
      this.stateMachine.role,
      '*',
      'Added by Step Functions logging and tracing: the CloudWatch Logs vended-delivery actions (logs:CreateLogDelivery, GetLogDelivery, UpdateLogDelivery, DeleteLogDelivery, ListLogDeliveries, PutResourcePolicy, DescribeResourcePolicies, DescribeLogGroups) and X-Ray PutTraceSegments/PutTelemetryRecords/GetSamplingRules/GetSamplingTargets do not support resource-level permissions.',
    );
  }

  /**
   * What `states:startExecution.sync:2` needs (AWS: "IAM policies for Step Functions
   * integrations"): start exactly the child state machines, describe and stop their
   * executions, and the managed rule through which Step Functions learns they ended.
   */
  private grantChildExecutions(children: StateMachine[], historyKey: IKey): void {
    const stack = Stack.of(this);
    const role = this.stateMachine.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'StartChildFlows',
        actions: ['states:StartExecution'],
        resources: children.map((c) => c.stateMachineArn),
      }),
    );
    const executions = children.map((c) =>
      stack.formatArn({
        service: 'states',
        resource: 'execution',
        resourceName: `${c.stateMachineName}:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ChildFlowExecutions',
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: executions,
      }),
    );
    // The children's history is under the history key too: starting one needs GenerateDataKey and Decrypt for its ARN.
    grantHistoryKey(
      role,
      historyKey,
      children.map((c) => c.stateMachineArn),
      'start',
    );
    const managedRule = stack.formatArn({
      service: 'events',
      resource: 'rule',
      resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule',
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'ChildFlowCompletion',
        actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
        resources: [managedRule],
      }),
    );
    for (const arn of executions) {
      acknowledgeWildcardResource(
        role,
        arn,
        'Child executions get names chosen by Step Functions at run time; the wildcard is limited to executions of one child state machine this flow starts.',
      );
    }
  }

  /**
   * What a Distributed Map needs (AWS: "IAM policies for Distributed Map states"): start,
   * describe and stop its child executions, read the item list (ItemReader) and write the
   * results (ResultWriter) in the object bucket, under the delivery prefix only.
   */
  private grantDistributedMap(stateMachineName: string, bucketArn: string): void {
    const stack = Stack.of(this);
    const own = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const executions = stack.formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${stateMachineName}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const mapRuns = stack.formatArn({
      service: 'states',
      resource: 'mapRun',
      resourceName: `${stateMachineName}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const role = this.stateMachine.role;
    role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'MapRunChildren', actions: ['states:StartExecution'], resources: [own] }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'MapRunChildExecutions',
        actions: ['states:DescribeExecution', 'states:StopExecution'],
        resources: [executions],
      }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'MapRunRedrive', actions: ['states:RedriveExecution'], resources: [mapRuns] }),
    );
    const objects = `${bucketArn}/delivery/*`;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        sid: 'MapRunItemsAndResults',
        actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [objects],
      }),
    );
    acknowledgeWildcardResource(
      role,
      executions,
      'Child executions of a Distributed Map get names chosen by Step Functions at run time; the wildcard is limited to executions of this one state machine.',
    );
    acknowledgeWildcardResource(
      role,
      mapRuns,
      'Map Run ids are chosen by Step Functions at run time; the wildcard is limited to Map Runs of this one state machine.',
    );
    acknowledgeWildcardResource(
      role,
      objects,
      'The part plan (ItemReader) and the Map Run results (ResultWriter) live under keys derived from the invocation at run time; the wildcard is limited to the delivery prefix of the one object bucket.',
    );
  }
}

/** How long Step Functions reuses a data key before asking KMS again (AWS: 1 to 15 minutes). */
const HISTORY_KEY_REUSE = Duration.minutes(5);

/** `/aws/vendedlogs/states/cutpoint-<flow>-<stack>-<first group of the stack id>`. */
export function flowLogGroupName(flowName: string, stackName: string): string {
  return Fn.join('', [`${FLOW_LOG_GROUP_PREFIX}cutpoint-${flowName}`, flowLogGroupSuffix(stackName)]);
}
