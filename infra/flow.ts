import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry } from '../functions/registry.js';
import { flowPlaceholder } from '../src/local/asl.js';
import { loadFlowDefinition } from './asl.js';
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
}

/**
 * One state machine from statemachines/<name>.asl.json, the same file the local runner
 * executes. Placeholders become function ARNs through definitionSubstitutions, and the
 * role may invoke exactly the functions the ASL names. Its alarms: infra/flow-alarms.ts.
 */
export class Flow extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, { flow, functions, logRetention, bucketArn, stateMachines }: FlowProps) {
    super(scope, id);

    const definition = loadFlowDefinition(flow.name);
    const invoked = definition.steps.map((step) => {
      const fn = functions.get(step.placeholder);
      if (!fn) throw new Error(`${definition.file}: no function was built for \${${step.placeholder}}`);
      return { placeholder: step.placeholder, fn };
    });

    const children = definition.childFlows.map((name) => {
      const stateMachine = stateMachines.get(name);
      if (!stateMachine) throw new Error(`${definition.file}: starts ${name}, which must come before it in functions/registry.ts FLOWS`);
      return { placeholder: flowPlaceholder(name), stateMachine };
    });

    const logGroup = new LogGroup(this, 'Logs', { retention: logRetention, removalPolicy: RemovalPolicy.RETAIN });

    // A Distributed Map starts child executions of this same state machine: its role names
    // its own ARN, which a generated name would make circular, so such a flow is named.
    const stateMachineName = definition.distributedMap ? `${Stack.of(this).stackName}-${flow.name}` : undefined;
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      ...(stateMachineName ? { stateMachineName } : {}),
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
    });

    // Exactly the unqualified ARNs the ASL invokes (no `:*` versions or aliases, which
    // fn.grantInvoke would add and which nothing here uses).
    if (invoked.length > 0) {
      this.stateMachine.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: invoked.map(({ fn }) => fn.functionArn) }));
    }
    if (stateMachineName) this.grantDistributedMap(stateMachineName, bucketArn);
    if (children.length) this.grantChildExecutions(children.map((c) => c.stateMachine));
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
  private grantChildExecutions(children: StateMachine[]): void {
    const stack = Stack.of(this);
    const role = this.stateMachine.role;
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'StartChildFlows', actions: ['states:StartExecution'], resources: children.map((c) => c.stateMachineArn) }));
    const executions = children.map((c) =>
      stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${c.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
    );
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'ChildFlowExecutions', actions: ['states:DescribeExecution', 'states:StopExecution'], resources: executions }));
    const managedRule = stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForStepFunctionsExecutionRule' });
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'ChildFlowCompletion', actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'], resources: [managedRule] }));
    for (const arn of executions) {
      acknowledgeWildcardResource(role, arn, 'Child executions get names chosen by Step Functions at run time; the wildcard is limited to executions of one child state machine this flow starts.');
    }
  }

  /**
   * What a Distributed Map needs (AWS: "IAM policies for Distributed Map states"): start,
   * describe and stop its child executions, read the item list (ItemReader) and write the
   * results (ResultWriter) in the object bucket, under the delivery prefix only.
   */
  private grantDistributedMap(stateMachineName: string, bucketArn: string): void {
    const stack = Stack.of(this);
    const own = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}/*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const mapRuns = stack.formatArn({ service: 'states', resource: 'mapRun', resourceName: `${stateMachineName}/*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const role = this.stateMachine.role;
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'MapRunChildren', actions: ['states:StartExecution'], resources: [own] }));
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'MapRunChildExecutions', actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [executions] }));
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'MapRunRedrive', actions: ['states:RedriveExecution'], resources: [mapRuns] }));
    const objects = `${bucketArn}/delivery/*`;
    role.addToPrincipalPolicy(
      new PolicyStatement({ sid: 'MapRunItemsAndResults', actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'], resources: [objects] }),
    );
    acknowledgeWildcardResource(role, executions, 'Child executions of a Distributed Map get names chosen by Step Functions at run time; the wildcard is limited to executions of this one state machine.');
    acknowledgeWildcardResource(role, mapRuns, 'Map Run ids are chosen by Step Functions at run time; the wildcard is limited to Map Runs of this one state machine.');
    acknowledgeWildcardResource(role, objects, 'The part plan (ItemReader) and the Map Run results (ResultWriter) live under keys derived from the invocation at run time; the wildcard is limited to the delivery prefix of the one object bucket.');
  }
}
