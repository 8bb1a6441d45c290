import { Alarm, ComparisonOperator, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { Operation } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { STEPS, type TableAction } from '../src/registry/index.js';
import { PERIOD, sumOf } from './cutpoint-metrics.js';

/**
 * The DynamoDB requests the authority adapter sends for each registry action. A
 * ConditionCheckItem exists only inside TransactWriteItems (two items that move together);
 * GetItem also covers TransactGetItems (a snapshot of a few items, which IAM authorizes as
 * one GetItem per item); DescribeTable is a control-plane call with no per-operation metric.
 */
const OPERATIONS_OF: Record<TableAction, Operation[]> = {
  'dynamodb:GetItem': [Operation.GET_ITEM, Operation.TRANSACT_GET_ITEMS],
  'dynamodb:Query': [Operation.QUERY],
  'dynamodb:PutItem': [Operation.PUT_ITEM],
  'dynamodb:UpdateItem': [Operation.UPDATE_ITEM],
  'dynamodb:DeleteItem': [Operation.DELETE_ITEM],
  'dynamodb:ConditionCheckItem': [Operation.TRANSACT_WRITE_ITEMS],
  'dynamodb:DescribeTable': [],
};

/** The operations the registry's steps send to the authority table, in a stable order. */
export function registryTableOperations(): Operation[] {
  const used = new Set(STEPS.flatMap((s) => s.table).flatMap((a) => OPERATIONS_OF[a]));
  return Object.values(Operation).filter((o) => used.has(o));
}

/**
 * Throttled requests and system errors (AWS/DynamoDB ThrottledRequests and SystemErrors,
 * dims TableName and Operation) of the authority table, summed over the operations the
 * registry uses (cutpoint-metrics.ts sumOf: FILLed, unlike Table.metric*ForOperations,
 * so an operation without data does not blank the sum). UserErrors is account-wide (no TableName), so it says nothing about this
 * table and is left out. Here rather than in the stateful stack: the operations come from
 * the registry, which is deployed with the workflows.
 */
export class TableAlarms extends Construct {
  readonly alarms: Alarm[];

  constructor(scope: Construct, id: string, { tableName, namePrefix }: { tableName: string; namePrefix: string }) {
    super(scope, id);
    const operations = registryTableOperations();
    const sum = (metricName: string): IMetric =>
      sumOf(
        operations.map(
          (Operation) =>
            new Metric({
              namespace: 'AWS/DynamoDB',
              metricName,
              dimensionsMap: { TableName: tableName, Operation },
              statistic: 'Sum',
              period: PERIOD,
            }),
        ),
        `authority table ${metricName}`,
      );
    const common = {
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    };
    this.alarms = [
      new Alarm(this, 'Throttled', {
        ...common,
        alarmName: `${namePrefix}-authority-table-throttled`,
        alarmDescription: `authority table: DynamoDB throttled requests (${operations.join(', ')}). The adapters retry reads; a throttled conditional write ends UNKNOWN and is resolved by exact reload, so the flows stay correct but slow down or fail. Check the table's on-demand peak and hot partition keys (CloudWatch Contributor Insights), then the flows' Failed alarms.`,
        metric: sum('ThrottledRequests'),
      }),
      new Alarm(this, 'SystemErrors', {
        ...common,
        alarmName: `${namePrefix}-authority-table-system-errors`,
        alarmDescription: `authority table: DynamoDB returned internal server errors (${operations.join(', ')}). A write that met one ends UNKNOWN and is resolved by exact reload. Check the AWS Health Dashboard for DynamoDB in this region; the flows' Failed alarms show whether executions failed.`,
        metric: sum('SystemErrors'),
      }),
    ];
  }
}
