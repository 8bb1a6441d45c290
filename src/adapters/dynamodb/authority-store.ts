import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { CutpointError, EffectFailedError, OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import type {
  AuthorityBinding,
  AuthorityItem,
  AuthorityStore,
  Expectation,
  ItemKey,
  NewItem,
  TransactionLeg,
  TransactionOutcome,
  WriteOutcome,
} from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { RequestMeter } from '../request-meter.js';
import { contentionBackoff, rerunTransient } from '../../engine/rerun.js';
import { classifyDynamoFailure } from './outcome.js';
import { conditionFor, updateFor } from './conditions.js';
import { MARSHALL, nonEmpty, transactItemOf } from './transact-items.js';

export interface DynamoAuthorityOptions {
  tableName: string;
  /** Client for conditional writes: built with SDK retries off, so UNKNOWN stays visible. */
  writer: DynamoDBClient;
  /** Client for consistent reads: SDK retries on. */
  reader: DynamoDBClient;
  faults: FaultInjector;
  meter?: RequestMeter;
}

/** The snapshot read is no cut point (it changes nothing); this names it in a failure. */
const SNAPSHOT = 'authority.snapshot';
const SNAPSHOT_ATTEMPTS = 6;

/**
 * The authority over DynamoDB. Every mutation is one conditional write (or one
 * TransactWriteItems) run at a named cut point, and ends APPLIED, CONFLICT (with the
 * current item from ReturnValuesOnConditionCheckFailure) or UNKNOWN.
 */
export class DynamoAuthorityStore implements AuthorityStore {
  constructor(private readonly options: DynamoAuthorityOptions) {}

  async describeBinding(): Promise<AuthorityBinding> {
    this.options.meter?.count('dynamodb', 'DescribeTable');
    const out = await this.options.reader.send(new DescribeTableCommand({ TableName: this.options.tableName }));
    const table = out.Table;
    if (!table?.TableArn || !table.CreationDateTime) {
      throw new CutpointError(
        'Cutpoint.AuthorityUndescribed',
        'authority.binding_unavailable',
        'DescribeTable of the authority table returned no ARN or creation time',
      );
    }
    return {
      tableArn: table.TableArn,
      tableId: table.TableId ?? null,
      creationDateTime: table.CreationDateTime.toISOString(),
    };
  }

  async get(key: ItemKey): Promise<AuthorityItem | undefined> {
    this.options.meter?.count('dynamodb', 'GetItem');
    const out = await this.options.reader.send(
      new GetItemCommand({ TableName: this.options.tableName, Key: marshall(key), ConsistentRead: true }),
    );
    return out.Item ? toItem(out.Item) : undefined;
  }

  async getTogether(keys: ItemKey[]): Promise<Array<AuthorityItem | undefined>> {
    const TransactItems = keys.map((key) => ({ Get: { TableName: this.options.tableName, Key: marshall(key) } }));
    // A write transaction in flight on one of the items cancels the read (TransactionConflict):
    // it read nothing, so it is read again after a short random wait.
    const attempt = async (n: number) => {
      if (n > 1) await contentionBackoff(n - 1);
      this.options.meter?.count('dynamodb', 'TransactGetItems');
      try {
        const out = await this.options.reader.send(new TransactGetItemsCommand({ TransactItems }));
        return (out.Responses ?? []).map((r) => (r.Item ? toItem(r.Item) : undefined));
      } catch (error) {
        if ((error as Error).name === 'TransactionCanceledException') {
          throw new EffectFailedError(
            SNAPSHOT,
            `${SNAPSHOT}: a write transaction kept cancelling the read of ${keys.length} items`,
            { cause: error },
          );
        }
        throw error;
      }
    };
    return rerunTransient(attempt, ['Cutpoint.EffectFailed'], SNAPSHOT_ATTEMPTS);
  }

  async query(
    pk: string,
    skPrefix: string,
    options: { limit?: number; startAfterSk?: string } = {},
  ): Promise<AuthorityItem[]> {
    const items: AuthorityItem[] = [];
    let exclusiveStartKey: Record<string, AttributeValue> | undefined =
      options.startAfterSk === undefined ? undefined : marshall({ pk, sk: options.startAfterSk });
    do {
      this.options.meter?.count('dynamodb', 'Query');
      const out = await this.options.reader.send(
        new QueryCommand({
          TableName: this.options.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          ExpressionAttributeValues: marshall({ ':pk': pk, ':prefix': skPrefix }),
          ConsistentRead: true,
          ExclusiveStartKey: exclusiveStartKey,
          Limit: options.limit === undefined ? undefined : options.limit - items.length,
        }),
      );
      for (const raw of out.Items ?? []) items.push(toItem(raw));
      exclusiveStartKey = out.LastEvaluatedKey;
    } while (exclusiveStartKey && (options.limit === undefined || items.length < options.limit));
    return items;
  }

  async put(cutPoint: string, item: NewItem, expect: Expectation): Promise<WriteOutcome> {
    const stored = { ...item, version: expect === 'absent' ? 1 : expect.version + 1 } as AuthorityItem;
    const condition = conditionFor(expect);
    return this.write(cutPoint, 'PutItem', () =>
      this.options.writer
        .send(
          new PutItemCommand({
            TableName: this.options.tableName,
            Item: marshall(stored, MARSHALL),
            ConditionExpression: condition.expression,
            ExpressionAttributeNames: condition.names,
            ExpressionAttributeValues: nonEmpty(condition.values),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        )
        .then(() => stored),
    );
  }

  async update(
    cutPoint: string,
    key: ItemKey,
    expect: { version: number; fence?: Fence },
    set: Record<string, unknown>,
  ): Promise<WriteOutcome> {
    const condition = conditionFor(expect);
    const update = updateFor(expect.version + 1, set);
    return this.write(cutPoint, 'UpdateItem', async () => {
      const out = await this.options.writer.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: marshall(key),
          ConditionExpression: condition.expression,
          UpdateExpression: update.expression,
          ExpressionAttributeNames: { ...condition.names, ...update.names },
          ExpressionAttributeValues: { ...condition.values, ...update.values },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return toItem(out.Attributes ?? {});
    });
  }

  async delete(cutPoint: string, key: ItemKey, expect: { version: number; fence?: Fence }): Promise<WriteOutcome> {
    const condition = conditionFor(expect);
    return this.write(cutPoint, 'DeleteItem', async () => {
      const out = await this.options.writer.send(
        new DeleteItemCommand({
          TableName: this.options.tableName,
          Key: marshall(key),
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: nonEmpty(condition.values),
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return toItem(out.Attributes ?? {});
    });
  }

  async transact(cutPoint: string, legs: TransactionLeg[]): Promise<TransactionOutcome> {
    assertDistinctItems(legs);
    const items = legs.map((leg) => transactItemOf(this.options.tableName, leg));
    this.options.meter?.count('dynamodb', 'TransactWriteItems');
    try {
      await this.options.faults.at(cutPoint, () =>
        this.options.writer.send(new TransactWriteItemsCommand({ TransactItems: items })),
      );
      return { status: 'APPLIED' };
    } catch (error) {
      if (error instanceof OutcomeUnknownError) return { status: 'UNKNOWN', reason: error.message };
      // Injected crashes and definite failures pass through untouched.
      if (error instanceof CutpointError) throw error;
      const failure = classifyDynamoFailure(error);
      if (failure === 'unknown') return { status: 'UNKNOWN', reason: describe(error) };
      if (failure === 'definite') throw definite(cutPoint, error);
      if (error instanceof Error && error.name !== 'TransactionCanceledException') throw error;
      const reasons =
        (error as { CancellationReasons?: Array<{ Code?: string; Item?: Record<string, AttributeValue> }> })
          .CancellationReasons ?? [];
      // A cancellation for any reason other than a failed condition (a concurrent
      // transaction on the same item, throttling) applied nothing: a definite failure.
      if (!reasons.some((r) => r.Code === 'ConditionalCheckFailed')) throw definite(cutPoint, error);
      const conflicts = reasons.flatMap((reason, leg) =>
        reason.Code === 'ConditionalCheckFailed'
          ? [{ leg, current: reason.Item ? toItem(reason.Item) : undefined }]
          : [],
      );
      return { status: 'CONFLICT', conflicts };
    }
  }

  private async write(cutPoint: string, operation: string, send: () => Promise<AuthorityItem>): Promise<WriteOutcome> {
    this.options.meter?.count('dynamodb', operation);
    try {
      const item = await this.options.faults.at(cutPoint, send);
      return { status: 'APPLIED', item };
    } catch (error) {
      if (error instanceof OutcomeUnknownError) return { status: 'UNKNOWN', reason: error.message };
      // Injected crashes and definite failures pass through untouched.
      if (error instanceof CutpointError) throw error;
      const failure = classifyDynamoFailure(error);
      if (failure === 'conflict') {
        const old = (error as { Item?: Record<string, AttributeValue> }).Item;
        return { status: 'CONFLICT', current: old ? toItem(old) : undefined };
      }
      if (failure === 'unknown') return { status: 'UNKNOWN', reason: describe(error) };
      throw definite(cutPoint, error);
    }
  }
}

function toItem(raw: Record<string, AttributeValue>): AuthorityItem {
  return unmarshall(raw) as AuthorityItem;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function definite(cutPoint: string, error: unknown): Error {
  if (error instanceof EffectFailedError) return error;
  return new EffectFailedError(cutPoint, `${cutPoint}: ${describe(error)}`, { cause: error });
}

/**
 * One item per leg: DynamoDB refuses a transaction naming an item twice (ValidationException;
 * DynamoDB Local cancels it instead: test/conformance/dynamodb-cases.ts), so it is refused
 * here first, the same way on both, before any request.
 */
function assertDistinctItems(legs: readonly TransactionLeg[]): void {
  const keys = legs.map((leg) => {
    const { pk, sk } = leg.kind === 'put' ? leg.item : leg.key;
    return `${pk}\u0000${sk}`;
  });
  if (new Set(keys).size !== keys.length)
    throw new ValidationError(
      'authority.transaction_item_repeated',
      'a transaction names one item in two legs: every leg must be a different item',
    );
}
