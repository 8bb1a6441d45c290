import { PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ItemKey } from '../src/ports/authority.js';

/**
 * The raw baseline every authority bench compares against: a hand-written conditional
 * UpdateItem walking one item version by version — the idiomatic minimum (no ReturnValues,
 * no outcome classification, no fault port).
 */
export class RawCasItem {
  private current = 1;

  /** The version the item is at, as this walker last wrote it. */
  get version(): number {
    return this.current;
  }

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly key: ItemKey,
  ) {}

  /** Creates the item at version 1 (untimed). */
  async create(): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...this.attributeKey(), version: { N: '1' }, counter: { N: '0' } },
      }),
    );
    this.current = 1;
  }

  /** One conditional write from the current version to the next. */
  async cas(): Promise<void> {
    const version = this.current;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.attributeKey(),
        ConditionExpression: '#version = :expected',
        UpdateExpression: 'SET #version = :next, #counter = :counter',
        ExpressionAttributeNames: { '#version': 'version', '#counter': 'counter' },
        ExpressionAttributeValues: {
          ':expected': { N: String(version) },
          ':next': { N: String(version + 1) },
          ':counter': { N: String(version) },
        },
      }),
    );
    this.current = version + 1;
  }

  private attributeKey() {
    return { pk: { S: this.key.pk }, sk: { S: this.key.sk } };
  }
}
