import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { grantHistoryKey } from './history-key.js';
import { TargetDeadLetterQueue } from './recovery-dispatch-queue.js';

export interface FlowScheduleProps {
  /** The flow the schedule starts. */
  stateMachine: IStateMachine;
  /** Its execution history key: EventBridge's role needs it to start an execution. */
  historyKey: IKey;
  /** The constant execution input (EventBridge caps it at 8192 characters). */
  input: Record<string, unknown>;
  rate: Duration;
  /** The rule's description: what a run does. */
  description: string;
  /** The flow's name, in the dead-letter queue's and the alarm's texts. */
  flow: string;
}

/**
 * Starts a flow at a fixed rate with a constant input. Executions get names chosen by Step
 * Functions; the scheduled flows are idempotent, so two overlapping runs are safe, only
 * wasteful: choose a rate longer than a run. A start EventBridge could not make within its
 * retries lands in a dead-letter queue with a depth alarm, and the rule's failed
 * invocations have an alarm of their own.
 */
export class FlowSchedule extends Construct {
  readonly rule: Rule;
  readonly deadLetters: TargetDeadLetterQueue;

  constructor(scope: Construct, id: string, props: FlowScheduleProps) {
    super(scope, id);
    const { stateMachine, historyKey, flow } = props;
    this.deadLetters = new TargetDeadLetterQueue(this, 'DeadLetters', {
      purpose: `scheduled ${flow} starts EventBridge could not make`,
    });
    Validations.of(this.deadLetters.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue IS a dead-letter queue (of the schedule's EventBridge target); cdk-nag recognizes a queue named in a redrive policy or a Lambda DeadLetterConfig, not in an EventBridge target's.",
    });
    // The role EventBridge starts the flow with (states:StartExecution is added by the target).
    const role = new Role(this, 'StartRole', {
      assumedBy: new ServicePrincipal('events.amazonaws.com'),
      description: `cutpoint: a schedule starts ${flow}`,
    });
    grantHistoryKey(role, historyKey, [stateMachine.stateMachineArn], 'start');
    this.rule = new Rule(this, 'Rule', {
      description: props.description,
      schedule: Schedule.rate(props.rate),
      targets: [
        new SfnStateMachine(stateMachine, {
          input: RuleTargetInput.fromObject(props.input),
          retryAttempts: 8,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: this.deadLetters.queue,
          role,
        }),
      ],
    });
    // A schedule that could not start its flow is otherwise silent.
    new Alarm(this, 'FailedInvocations', {
      alarmDescription: `${flow}: EventBridge failed to start a scheduled execution`,
      metric: new Metric({
        namespace: 'AWS/Events',
        metricName: 'FailedInvocations',
        dimensionsMap: { RuleName: this.rule.ruleName },
        period: Duration.minutes(5),
        statistic: 'Sum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
