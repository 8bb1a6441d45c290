import { Duration, Validations } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { LaneRef } from '../src/domain/stream.js';
import { TargetDeadLetterQueue } from './recovery-dispatch-queue.js';
import { SWEEP_RATE } from './retained-alarms.js';

/**
 * The retained-items sweep's schedule: EventBridge invokes the registry step
 * operations/sweep-retained every SWEEP_RATE with `{retainedAfterMinutes, lanes}` (the lanes:
 * the stage's maintenanceLanes, whose heads it reads for a suspension). An invocation
 * EventBridge could not deliver lands in a dead-letter queue (with its depth alarm, as every
 * target); either way a sweep that did not run leaves no RetainedItems data, which the
 * retained alarms read as breaching (infra/retained-alarms.ts).
 */
export class RetainedSweep extends Construct {
  readonly rule: Rule;

  constructor(
    scope: Construct,
    id: string,
    { fn, retainedAfterMinutes, lanes }: { fn: IFunction; retainedAfterMinutes: number; lanes: readonly LaneRef[] },
  ) {
    super(scope, id);
    const deadLetters = new TargetDeadLetterQueue(this, 'DeadLetters', {
      purpose: 'scheduled retained-items sweeps EventBridge could not invoke',
    });
    Validations.of(deadLetters.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue IS a dead-letter queue (of the schedule's EventBridge target); cdk-nag recognizes a queue named in a redrive policy or a Lambda DeadLetterConfig, not in an EventBridge target's.",
    });
    this.rule = new Rule(this, 'Rule', {
      description: `Every ${SWEEP_RATE.toMinutes()} minutes: count retained custody, governance and suspended lanes by state (RetainedItems)`,
      schedule: Schedule.rate(SWEEP_RATE),
      targets: [
        new LambdaFunction(fn, {
          event: RuleTargetInput.fromObject({ retainedAfterMinutes, lanes }),
          retryAttempts: 2,
          maxEventAge: Duration.minutes(5),
          deadLetterQueue: deadLetters.queue,
        }),
      ],
    });
  }
}
