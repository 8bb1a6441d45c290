import type { AttributeValue, TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { TransactionLeg } from '../../ports/authority.js';
import { conditionFor, updateFor } from './conditions.js';

export const MARSHALL = { removeUndefinedValues: true, convertClassInstanceToMap: true } as const;

/** One leg of a transaction as its TransactWriteItems entry: the store assigns the version, the condition names the expected one. */
export function transactItemOf(TableName: string, leg: TransactionLeg): TransactWriteItem {
  if (leg.kind === 'forget') return { Delete: { TableName, Key: marshall(leg.key) } };
  const condition = conditionFor(leg.expect);
  const common = {
    TableName,
    ConditionExpression: condition.expression,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  switch (leg.kind) {
    case 'put': {
      const stored = { ...leg.item, version: leg.expect === 'absent' ? 1 : leg.expect.version + 1 };
      return {
        Put: {
          ...common,
          Item: marshall(stored, MARSHALL),
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: nonEmpty(condition.values),
        },
      };
    }
    case 'update': {
      const update = updateFor(leg.expect.version + 1, leg.set);
      return {
        Update: {
          ...common,
          Key: marshall(leg.key),
          UpdateExpression: update.expression,
          ExpressionAttributeNames: { ...condition.names, ...update.names },
          ExpressionAttributeValues: { ...condition.values, ...update.values },
        },
      };
    }
    case 'delete':
      return {
        Delete: {
          ...common,
          Key: marshall(leg.key),
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: nonEmpty(condition.values),
        },
      };
    case 'check':
      return {
        ConditionCheck: {
          ...common,
          Key: marshall(leg.key),
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: nonEmpty(condition.values),
        },
      };
  }
}

export function nonEmpty(values: Record<string, AttributeValue>): Record<string, AttributeValue> | undefined {
  return Object.keys(values).length ? values : undefined;
}
