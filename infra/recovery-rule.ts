import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { EventField, Rule, RuleTargetInput } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

export interface RecoveryRuleProps {
  flowName: string;
  stateMachine: IStateMachine;
  /** The flow that recovers it: itself (a re-run by exact identity) or a recovery flow. */
  recoveredBy: IStateMachine;
  recoveryFlowName: string;
  on: ReadonlyArray<'FAILED' | 'TIMED_OUT' | 'ABORTED'>;
}

/**
 * Starts the recovering flow when an execution of a STANDARD flow ends in one of `on`,
 * with input `{recoveryOf, originalInput}`, which the recovering ASL unwraps. A re-run
 * (commit-generation, stream-resolve-append) reloads exact identity, so it finishes the
 * durable task or proves its abort; those leave ABORTED out (an operator's Stop
 * Execution is a decision). deliver-window is recovered by delivery-reconcile, which only
 * observes, so an aborted delivery is reconciled too: a stop can land between any steps.
 */
export class RecoveryRule extends Construct {
  readonly rule: Rule;

  constructor(scope: Construct, id: string, { flowName, stateMachine, recoveredBy, recoveryFlowName, on }: RecoveryRuleProps) {
    super(scope, id);

    this.rule = new Rule(this, 'Rule', {
      description: `Start ${recoveryFlowName} when a ${flowName} execution ends ${on.join(', ')} (one automatic attempt each)`,
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: [...on],
          stateMachineArn: [stateMachine.stateMachineArn],
          // A recovery's own input starts with {"recoveryOf" (the target input below
          // names it first): its failure must not start a recovery of a recovery. The
          // ASL's IsNestedRecovery is the second guard.
          input: [{ 'anything-but': { prefix: '{"recoveryOf"' } }],
        },
      },
      targets: [
        new SfnStateMachine(recoveredBy, {
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
      alarmDescription: `${flowName}: EventBridge failed to start a ${recoveryFlowName} execution`,
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
