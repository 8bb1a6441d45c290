import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/**
 * The dead-letter queue of an EventBridge target (and of the Lambda it invokes): what
 * could not be delivered after every retry lands here instead of vanishing, SSE-SQS
 * encrypted, TLS only, kept 14 days, with an alarm on the first message. A message is the
 * event (or the target's input) as it was: an operator inspects it and redrives it.
 */
export class TargetDeadLetterQueue extends Construct {
  readonly queue: Queue;
  readonly depthAlarm: Alarm;

  constructor(scope: Construct, id: string, { purpose }: { purpose: string }) {
    super(scope, id);
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.depthAlarm = new Alarm(this, 'Depth', {
      alarmDescription: `Dead letters: ${purpose}. Inspect the messages, fix the cause, redrive them.`,
      metric: this.queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
