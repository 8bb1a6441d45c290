import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

export interface RecoveryRuleProps {
  flowName: string;
  stateMachine: IStateMachine;
}

/**
 * Starts a STANDARD flow again when one of its executions ends FAILED or TIMED_OUT,
 * with input `{recoveryOf, originalInput}`, which the ASL's IsRecovery and
 * UnwrapRecovery states unwrap. Every step reloads exact identity, so the re-run either
 * finishes the durable task or proves its abort. ABORTED is left out on purpose: an
 * operator's Stop Execution is a decision, not a failure to recover from.
 */
export class RecoveryRule extends Construct {
  readonly rule: Rule;

  constructor(scope: Construct, id: string, { flowName, stateMachine }: RecoveryRuleProps) {
    super(scope, id);

    this.rule = new Rule(this, 'Rule', {
      description: `Recover failed ${flowName} executions (one automatic attempt each)`,
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: ['FAILED', 'TIMED_OUT'],
          stateMachineArn: [stateMachine.stateMachineArn],
          // A recovery's own input starts with {"recoveryOf" (the target input below
          // names it first): its failure must not start a recovery of a recovery. The
          // ASL's IsNestedRecovery is the second guard.
          input: [{ 'anything-but': { prefix: '{"recoveryOf"' } }],
        },
      },
      targets: [
        new SfnStateMachine(stateMachine, {
          // Key order matters: recoveryOf first, so the filter above sees it as a prefix.
          input: RuleTargetInput.fromObject({
            recoveryOf: EventField.fromPath('$.detail.executionArn'),
            originalInput: EventField.fromPath('$.detail.input'),
          }),
          retryAttempts: 8,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });

    // A recovery that EventBridge could not start is otherwise silent.
    new Alarm(this, 'FailedInvocations', {
      alarmDescription: `${flowName}: EventBridge failed to start a recovery execution`,
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
