import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { FlowEntry } from '../functions/registry.js';
import { loadFlowDefinition } from './asl.js';
import { acknowledgeWildcardResource } from './nag.js';

export interface FlowProps {
  flow: FlowEntry;
  /** Every registry step's function, by placeholder. */
  functions: ReadonlyMap<string, IFunction>;
  logRetention: RetentionDays;
}

/**
 * One state machine from statemachines/<name>.asl.json, the same file the local runner
 * executes. Placeholders become function ARNs through definitionSubstitutions, and the
 * role may invoke exactly the functions the ASL names.
 */
export class Flow extends Construct {
  readonly stateMachine: StateMachine;
  readonly failedAlarm: Alarm;

  constructor(scope: Construct, id: string, { flow, functions, logRetention }: FlowProps) {
    super(scope, id);

    const definition = loadFlowDefinition(flow.name);
    const invoked = definition.steps.map((step) => {
      const fn = functions.get(step.placeholder);
      if (!fn) throw new Error(`${definition.file}: no function was built for \${${step.placeholder}}`);
      return { placeholder: step.placeholder, fn };
    });

    const logGroup = new LogGroup(this, 'Logs', { retention: logRetention, removalPolicy: RemovalPolicy.RETAIN });

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      // Inline (fromString) rather than fromFile: fromFile uploads the ASL as an S3 asset
      // and the template only carries its location, so `cdk diff` could not show a flow
      // change. Inline, the reviewed template holds the exact definition.
      definitionBody: DefinitionBody.fromString(definition.body),
      definitionSubstitutions: Object.fromEntries(invoked.map(({ placeholder, fn }) => [placeholder, fn.functionArn])),
      stateMachineType: flow.type === 'STANDARD' ? StateMachineType.STANDARD : StateMachineType.EXPRESS,
      // Execution data stays out of the logs: step inputs and outputs may carry
      // privileged journal content and fencing tokens; event history keeps it, under IAM.
      logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });

    // Exactly the unqualified ARNs the ASL invokes (no `:*` versions or aliases, which
    // fn.grantInvoke would add and which nothing here uses).
    this.stateMachine.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: invoked.map(({ fn }) => fn.functionArn) }),
    );
    acknowledgeWildcardResource(
      this.stateMachine.role,
      '*',
      'Added by Step Functions logging and tracing: the CloudWatch Logs vended-delivery actions (logs:CreateLogDelivery, GetLogDelivery, UpdateLogDelivery, DeleteLogDelivery, ListLogDeliveries, PutResourcePolicy, DescribeResourcePolicies, DescribeLogGroups) and X-Ray PutTraceSegments/PutTelemetryRecords/GetSamplingRules/GetSamplingTargets do not support resource-level permissions.',
    );

    this.failedAlarm = new Alarm(this, 'ExecutionsFailed', {
      alarmDescription: `${flow.name}: an execution failed. A STANDARD flow starts one automatic recovery execution; if that fails too (e.g. Generation.RecoveryExhausted) an operator must act.`,
      metric: this.stateMachine.metricFailed({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
