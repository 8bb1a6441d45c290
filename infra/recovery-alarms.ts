import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import {
  ALARMING_RECOVERY_OUTCOMES,
  DIMENSIONS,
  METRIC_NAMESPACE,
  METRICS,
  type RecoveryOutcome,
} from '../src/telemetry/metric-names.js';
import { PERIOD } from './cutpoint-metrics.js';

/** What an alarming recovery outcome means and the first thing to do. */
const FIRST_ACTION: Record<RecoveryOutcome, string> = {
  resolved: 'a recovery resolved the invocation (no action).',
  escalated:
    'a recovery could not decide alone and escalated to an operator (a refusal, custody held elsewhere, or an action that stopped short). Run `npx cutpoint delivery inspect <invocation-id> --format json` (the id is in the execution output) and take the one action permitted_actions names (docs/delivery.md "Delivery recovery: the five commands and the flows behind them").',
  failed:
    'a recovery action failed (an effect ended unknown or failed, a target was unavailable, a defect). Open the failed execution (error name and cause), then `npx cutpoint delivery inspect <invocation-id> --format json`; a recovery is safe to repeat once the cause is fixed.',
  'incident-retained':
    'custody was retained as an incident (INCIDENT_RETAINED); the invocation\'s projection is on the DeliveryIncidents topic. Run `npx cutpoint delivery inspect <invocation-id> --format json` and follow its diagnostic_code (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"); nothing is dropped or published until an operator acts.',
  'target-pending':
    'a quality observation is TARGET_PENDING (the target could not be observed yet). Run `npx cutpoint quality inspect <invocation-id> --format json`, then `npx cutpoint quality observe <invocation-id> --manifest <route> --yes` once the target is reachable.',
};

/** The Metrics Insights query summing one recovery outcome over every flow that reports it. */
export function recoveryOutcomeQuery(outcome: RecoveryOutcome): string {
  return `SELECT SUM(${METRICS.recoveryOutcome}) FROM "${METRIC_NAMESPACE}" WHERE ${DIMENSIONS.outcome} = '${outcome}'`;
}

/**
 * One alarm per ALARMING_RECOVERY_OUTCOMES, over every flow at once: a Metrics Insights
 * query (`SELECT SUM(RecoveryOutcome) … WHERE Outcome = '…'`), not one alarm per flow, so
 * the alarm does not depend on which flows the telemetry reports recovery outcomes for
 * (today delivery-reconcile, -resume, -retire) and a flow that starts reporting them later
 * is covered without a change here. The flow is on the dashboard (Recovery outcomes by
 * flow); the operator's first action (inspect the invocation) does not depend on it.
 */
export class RecoveryOutcomeAlarms extends Construct {
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, { namePrefix }: { namePrefix: string }) {
    super(scope, id);
    this.alarms = ALARMING_RECOVERY_OUTCOMES.map(
      (outcome) =>
        new Alarm(this, outcome, {
          alarmName: `${namePrefix}-recovery-${outcome}`,
          alarmDescription: `recovery: ${FIRST_ACTION[outcome]}`,
          metric: new MathExpression({
            expression: recoveryOutcomeQuery(outcome),
            period: PERIOD,
            label: `RecoveryOutcome ${outcome}`,
          }),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        }),
    );
  }
}
