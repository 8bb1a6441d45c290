import {
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { refusal, type ConformanceCase } from './case.js';
import type { ConformanceTarget } from './target.js';

/** The DynamoDB behaviours the authority (src/adapters/dynamodb/) is built on. */

const DOCS = 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference';
const S = (s: string) => ({ S: s });
const N = (n: number) => ({ N: String(n) });
const keyOf = (pk: string, sk = 'x') => ({ pk: S(pk), sk: S(sk) });

const put = (t: ConformanceTarget, pk: string, n: number, absent = true) =>
  t.dynamodb.send(
    new PutItemCommand({
      TableName: t.table,
      Item: { ...keyOf(pk), n: N(n) },
      ...(absent ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );

const putLeg = (t: ConformanceTarget, pk: string, sk = 'x'): TransactWriteItem => ({
  Put: { TableName: t.table, Item: { ...keyOf(pk, sk), n: N(1) }, ConditionExpression: 'attribute_not_exists(pk)' },
});

const transact = (t: ConformanceTarget, legs: TransactWriteItem[]) =>
  t.dynamodb.send(new TransactWriteItemsCommand({ TransactItems: legs }));

export const DYNAMODB_CASES: readonly ConformanceCase[] = [
  {
    name: 'dynamodb: a put-if-absent on an existing item is ConditionalCheckFailedException (400)',
    reliedOnBy: 'src/adapters/dynamodb/authority-store.ts put (CONFLICT)',
    documented: `${DOCS}/API_PutItem.html`,
    expect: { name: 'ConditionalCheckFailedException', status: 400 },
    async run(t, key) {
      await put(t, key, 1);
      return refusal(put(t, key, 2));
    },
  },
  {
    name: 'dynamodb: ReturnValuesOnConditionCheckFailure ALL_OLD returns the current item with the refusal',
    reliedOnBy: 'src/adapters/dynamodb/authority-store.ts (CONFLICT carries the current item, no second read)',
    documented: `${DOCS}/API_PutItem.html#DDB-PutItem-request-ReturnValuesOnConditionCheckFailure`,
    expect: { n: '1' },
    async run(t, key) {
      await put(t, key, 1);
      try {
        await put(t, key, 2);
        return 'accepted';
      } catch (error) {
        const item = (error as { Item?: Record<string, { N?: string }> }).Item;
        return item ? { n: item.n?.N } : 'no item';
      }
    },
  },
  {
    name: 'dynamodb: a cancelled transaction names each leg: CancellationReasons in leg order, nothing written',
    reliedOnBy: 'src/adapters/dynamodb/outcome.ts (which leg conflicted)',
    documented: `${DOCS}/API_TransactWriteItems.html`,
    expect: { name: 'TransactionCanceledException', codes: ['None', 'ConditionalCheckFailed'], written: false },
    async run(t, key) {
      try {
        await transact(t, [
          putLeg(t, `${key}/a`),
          {
            ConditionCheck: { TableName: t.table, Key: keyOf(`${key}/b`), ConditionExpression: 'attribute_exists(pk)' },
          },
        ]);
        return 'accepted';
      } catch (error) {
        const e = error as { name: string; CancellationReasons?: Array<{ Code?: string }> };
        const got = await t.dynamodb.send(new GetItemCommand({ TableName: t.table, Key: keyOf(`${key}/a`) }));
        return { name: e.name, codes: e.CancellationReasons?.map((r) => r.Code), written: got.Item !== undefined };
      }
    },
  },
  {
    name: 'dynamodb: a cancelled leg with ReturnValuesOnConditionCheckFailure ALL_OLD carries its item',
    reliedOnBy: 'src/adapters/dynamodb/transact-items.ts (a transaction CONFLICT carries the current item)',
    documented: `${DOCS}/API_CancellationReason.html`,
    expect: { code: 'ConditionalCheckFailed', n: '1' },
    async run(t, key) {
      await put(t, key, 1);
      try {
        await transact(t, [
          {
            ConditionCheck: {
              TableName: t.table,
              Key: keyOf(key),
              ConditionExpression: 'n = :two',
              ExpressionAttributeValues: { ':two': N(2) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ]);
        return 'accepted';
      } catch (error) {
        const [reason] = (error as { CancellationReasons?: Array<{ Code?: string; Item?: { n?: { N?: string } } }> })
          .CancellationReasons ?? [{}];
        return { code: reason?.Code, n: reason?.Item?.n?.N };
      }
    },
  },
  {
    name: 'dynamodb: TransactWriteItems takes 100 actions; 101 are refused (ValidationException)',
    reliedOnBy: 'src/ports/authority.ts transact (the largest transaction a step writes)',
    documented: `${DOCS}/API_TransactWriteItems.html#DDB-TransactWriteItems-request-TransactItems`,
    expect: { hundred: 'accepted', hundredAndOne: { name: 'ValidationException', status: 400 } },
    async run(t, key) {
      const legs = (n: number, at: string) => Array.from({ length: n }, (_, i) => putLeg(t, `${key}/${at}`, String(i)));
      return {
        hundred: await refusal(transact(t, legs(100, 'a'))),
        hundredAndOne: await refusal(transact(t, legs(101, 'b'))),
      };
    },
  },
  {
    name: 'dynamodb: two actions on one item in a transaction are refused (ValidationException)',
    reliedOnBy: 'src/adapters/dynamodb/authority-store.ts transact (refuses such legs itself, before any request)',
    documented: `${DOCS}/API_TransactWriteItems.html`,
    expect: { name: 'ValidationException', status: 400 },
    emulator: {
      observed: { name: 'TransactionCanceledException', status: 400 },
      note: 'DynamoDB Local cancels the transaction instead of refusing the request. The code never reaches either answer: the adapter refuses two legs on one item before sending (authority.transaction_item_repeated).',
    },
    run: (t, key) => refusal(transact(t, [putLeg(t, key), putLeg(t, key)])),
  },
  {
    name: 'dynamodb: TransactGetItems answers in request order, a missing item as an empty entry',
    reliedOnBy: 'src/adapters/dynamodb/authority-store.ts getTogether (one snapshot)',
    documented: `${DOCS}/API_TransactGetItems.html`,
    expect: ['1', null, '3'],
    async run(t, key) {
      await put(t, `${key}/1`, 1);
      await put(t, `${key}/3`, 3);
      const out = await t.dynamodb.send(
        new TransactGetItemsCommand({
          TransactItems: [1, 2, 3].map((i) => ({ Get: { TableName: t.table, Key: keyOf(`${key}/${i}`) } })),
        }),
      );
      return (out.Responses ?? []).map((r) => r.Item?.n?.N ?? null);
    },
  },
  {
    name: 'dynamodb: an item over 400 KB is refused (ValidationException)',
    reliedOnBy:
      'src/stream/ and src/delivery/journal/ (what an item may hold: receipts in batches, records by reference)',
    documented: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items',
    expect: { name: 'ValidationException', status: 400 },
    run: (t, key) =>
      refusal(
        t.dynamodb.send(
          new PutItemCommand({ TableName: t.table, Item: { ...keyOf(key), blob: S('x'.repeat(410 * 1024)) } }),
        ),
      ),
  },
];
