import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { grantHistoryKey } from './history-key.js';
import { validateLane, type LaneRef } from '../src/domain/stream.js';
import { TargetDeadLetterQueue } from './recovery-dispatch-queue.js';

/** Which lanes the schedule maintains and how often (CDK context cutpoint:maintenanceLanes / cutpoint:maintenanceRateMinutes). */
export interface MaintenanceConfig {
  lanes: LaneRef[];
  rate: Duration;
}

/** EventBridge caps a target's constant input at 8192 characters. */
const MAX_INPUT = 8192;
/** stream-maintain's bound (its CheckLanes state): two worst-case waves of 4 lanes fit its 24 h timeout. */
export const MAX_MAINTENANCE_LANES = 8;
export const DEFAULT_MAINTENANCE_RATE_MINUTES = 60;

/**
 * A stage's `maintenanceLanes` ["logs:0", "logs:1"] and `maintenanceRateMinutes` (cutpoint.config.json):
 * the lanes (stream:partition) the schedule maintains; unset, there is no schedule. Fails
 * the synth on a malformed lane, a bad rate or a list too long for one rule's input.
 */
export function maintenanceConfigOf(lanesValue: unknown, rateValue: unknown): MaintenanceConfig | undefined {
  if (lanesValue === undefined || lanesValue === '') {
    if (rateValue !== undefined)
      throw new Error(
        'cutpoint:maintenanceRateMinutes needs cutpoint:maintenanceLanes (stream:partition, comma-separated)',
      );
    return undefined;
  }
  const items = Array.isArray(lanesValue) ? lanesValue.map(String) : String(lanesValue).split(',');
  const lanes = items.map((item) => {
    const match = /^(.+):(\d+)$/.exec(item.trim());
    if (!match) throw new Error(`cutpoint:maintenanceLanes: ${JSON.stringify(item)} is not stream:partition`);
    return validateLane({ stream: match[1], partition: Number(match[2]) });
  });
  const keys = lanes.map((l) => `${l.stream}:${l.partition}`);
  if (new Set(keys).size !== keys.length) throw new Error('cutpoint:maintenanceLanes lists a lane twice');
  if (lanes.length > MAX_MAINTENANCE_LANES)
    throw new Error(
      `cutpoint:maintenanceLanes lists ${lanes.length} lanes; one schedule maintains at most ${MAX_MAINTENANCE_LANES}`,
    );
  if (JSON.stringify({ lanes }).length > MAX_INPUT)
    throw new Error(`cutpoint:maintenanceLanes is too long for one schedule's input (${MAX_INPUT} characters)`);
  const minutes = rateValue === undefined ? DEFAULT_MAINTENANCE_RATE_MINUTES : Number(rateValue);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 7 * 24 * 60)
    throw new Error('cutpoint:maintenanceRateMinutes must be a whole number of minutes from 1 to 10080');
  return { lanes, rate: Duration.minutes(minutes) };
}

export interface MaintenanceScheduleProps extends MaintenanceConfig {
  /** The stream-maintain state machine. */
  stateMachine: IStateMachine;
  /** Its execution history key: EventBridge's role needs it to start an execution. */
  historyKey: IKey;
}

/**
 * Starts stream-maintain at a fixed rate with the configured lanes as its constant input
 * (per lane: stream-materialize, then stream-compact, then stream-gc). Executions get
 * names chosen by Step Functions; two overlapping runs are safe (every child is idempotent
 * by exact identity), only wasteful: choose a rate longer than a run. A start EventBridge
 * could not make within its retries lands in a dead-letter queue with a depth alarm.
 */
export class MaintenanceSchedule extends Construct {
  readonly rule: Rule;
  readonly deadLetters: TargetDeadLetterQueue;

  constructor(scope: Construct, id: string, { stateMachine, lanes, rate, historyKey }: MaintenanceScheduleProps) {
    super(scope, id);
    this.deadLetters = new TargetDeadLetterQueue(this, 'DeadLetters', {
      purpose: 'scheduled stream-maintain starts EventBridge could not make',
    });
    Validations.of(this.deadLetters.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue IS a dead-letter queue (of the schedule's EventBridge target); cdk-nag recognizes a queue named in a redrive policy or a Lambda DeadLetterConfig, not in an EventBridge target's.",
    });
    // The role EventBridge starts stream-maintain with (states:StartExecution is added by the target).
    const role = new Role(this, 'StartRole', {
      assumedBy: new ServicePrincipal('events.amazonaws.com'),
      description: 'cutpoint: the stream maintenance schedule starts stream-maintain',
    });
    grantHistoryKey(role, historyKey, [stateMachine.stateMachineArn], 'start');
    this.rule = new Rule(this, 'Rule', {
      description: `Maintain ${lanes.length} stream lane(s) every ${rate.toMinutes()} minute(s): stream-materialize, stream-compact, stream-gc`,
      schedule: Schedule.rate(rate),
      targets: [
        new SfnStateMachine(stateMachine, {
          input: RuleTargetInput.fromObject({ lanes }),
          retryAttempts: 8,
          maxEventAge: Duration.hours(1),
          deadLetterQueue: this.deadLetters.queue,
          role,
        }),
      ],
    });
    // A schedule that could not start its flow is otherwise silent.
    new Alarm(this, 'FailedInvocations', {
      alarmDescription: 'stream-maintain: EventBridge failed to start a scheduled maintenance execution',
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
