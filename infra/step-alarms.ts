import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { STEPS } from '../src/registry/index.js';
import { PERIOD, stepName } from './cutpoint-metrics.js';

/** A function that ran this close to its Lambda timeout was (or nearly was) killed by it. */
export const TIMEOUT_RATIO = 0.98;

/**
 * One alarm per registry step on what its handler cannot report itself: the Lambda was
 * killed at its timeout (no UnexpectedError, no StepError is emitted then; Step Functions
 * sees Sandbox.Timedout). AWS/Lambda Duration Maximum ≥ TIMEOUT_RATIO × the registry's
 * timeout, one plain metric per alarm (no math). Per function rather than per flow: a
 * function serves several flows (Begin, NotifyIncident), and the alarm names the step.
 */
export class StepTimeoutAlarms extends Construct {
  readonly alarms: Alarm[];

  constructor(
    scope: Construct,
    id: string,
    { functions, namePrefix }: { functions: ReadonlyMap<string, IFunction>; namePrefix: string },
  ) {
    super(scope, id);
    this.alarms = STEPS.map((step) => {
      const fn = functions.get(step.placeholder);
      if (!fn) throw new Error(`no function was built for \${${step.placeholder}}`);
      const name = stepName(step);
      return new Alarm(this, name, {
        alarmName: `${namePrefix}-step-${name}-timeout`,
        alarmDescription: `step ${name}: its Lambda ran to within ${Math.round((1 - TIMEOUT_RATIO) * 100)}% of its ${step.timeoutSeconds} s timeout, so it was (or nearly was) killed, which its handler cannot report. The Task retried or failed the execution (Sandbox.Timedout). Check the step's p99 on the operations dashboard and its log group; work that grows with the input must be split or resumed, not given a longer timeout.`,
        metric: fn.metricDuration({ period: PERIOD, statistic: 'Maximum' }),
        threshold: Math.floor(step.timeoutSeconds * 1000 * TIMEOUT_RATIO),
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    });
  }
}
