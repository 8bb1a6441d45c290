import { TransactGetItemsCommand, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { awsPorts } from '../../src/adapters/ports.js';
import { Journal } from '../../src/authority/journal.js';
import { reloadAndCompare, writeExactlyOnce } from '../../src/authority/resolve.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/** The authority primitives against DynamoDB Local: APPLIED, CONFLICT (with the current item), UNKNOWN. */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

const fence = { owner: 'writer-a', session: 's-1', epoch: 4 };

describe('conditional writes', () => {
  it('put-if-absent applies once, then conflicts with the current item', async () => {
    const { authority } = stores.ports;
    const key = { pk: 'lane#1', sk: 'head' };
    const first = await authority.put('test.put', { ...key, end: 0, fence }, 'absent');
    expect(first).toMatchObject({ status: 'APPLIED', item: { version: 1, end: 0 } });
    const second = await authority.put('test.put', { ...key, end: 99 }, 'absent');
    expect(second).toMatchObject({ status: 'CONFLICT', current: { version: 1, end: 0, fence } });
  });

  it('an update names the expected version and fence; a stale epoch conflicts and changes nothing', async () => {
    const { authority } = stores.ports;
    const key = { pk: 'lane#2', sk: 'head' };
    await authority.put('test.put', { ...key, end: 0, fence }, 'absent');
    const ok = await authority.update('test.cas', key, { version: 1, fence }, { end: 10 });
    expect(ok).toMatchObject({ status: 'APPLIED', item: { version: 2, end: 10 } });
    const stale = await authority.update('test.cas', key, { version: 2, fence: { ...fence, epoch: 3 } }, { end: 20 });
    expect(stale).toMatchObject({ status: 'CONFLICT', current: { version: 2, end: 10 } });
    const oldVersion = await authority.update('test.cas', key, { version: 1, fence }, { end: 30 });
    expect(oldVersion).toMatchObject({ status: 'CONFLICT', current: { version: 2 } });
    expect(await authority.get(key)).toMatchObject({ version: 2, end: 10 });
  });

  it('delete is conditional too', async () => {
    const { authority } = stores.ports;
    const key = { pk: 'lane#3', sk: 'x' };
    await authority.put('test.put', { ...key }, 'absent');
    expect((await authority.delete('test.delete', key, { version: 7 })).status).toBe('CONFLICT');
    expect((await authority.delete('test.delete', key, { version: 1 })).status).toBe('APPLIED');
    expect(await authority.get(key)).toBeUndefined();
  });

  it('a two-item transaction moves both or neither, and names the leg that failed', async () => {
    const { authority } = stores.ports;
    const a = { pk: 'tx#1', sk: 'a' };
    const b = { pk: 'tx#1', sk: 'b' };
    await authority.put('test.put', { ...a, n: 1 }, 'absent');
    const refused = await authority.transact('test.tx', [
      { kind: 'update', key: a, expect: { version: 1 }, set: { n: 2 } },
      { kind: 'check', key: b, expect: { version: 3 } },
    ]);
    expect(refused).toMatchObject({ status: 'CONFLICT', conflicts: [{ leg: 1, current: undefined }] });
    expect(await authority.get(a)).toMatchObject({ version: 1, n: 1 });
    const applied = await authority.transact('test.tx', [
      { kind: 'update', key: a, expect: { version: 1 }, set: { n: 2 } },
      { kind: 'put', item: { ...b, n: 1 }, expect: 'absent' },
    ]);
    expect(applied.status).toBe('APPLIED');
    expect(await authority.get(a)).toMatchObject({ version: 2, n: 2 });
    expect(await authority.get(b)).toMatchObject({ version: 1, n: 1 });
  });

  it('two legs on one item are refused before any request (DynamoDB and DynamoDB Local answer them differently)', async () => {
    const { authority } = stores.ports;
    const a = { pk: 'tx#2', sk: 'a' };
    const before = stores.meter.snapshot();
    await expect(
      authority.transact('test.tx', [
        { kind: 'put', item: { ...a, n: 1 }, expect: 'absent' },
        { kind: 'check', key: a, expect: 'absent' },
      ]),
    ).rejects.toMatchObject({ name: 'Cutpoint.ValidationError', code: 'authority.transaction_item_repeated' });
    expect(stores.meter.snapshot()).toEqual(before);
    expect(await authority.get(a)).toBeUndefined();
  });

  it('a lost response is UNKNOWN, and only an exact reload resolves it', async () => {
    const { authority } = stores.ports;
    const key = { pk: 'lane#4', sk: 'head' };
    stores.faults.arm('test.cas:lose-response');
    const outcome = await authority.put('test.cas', { ...key, attempt: 'att-1' }, 'absent');
    stores.faults.disarm();
    expect(outcome.status).toBe('UNKNOWN');
    expect(await reloadAndCompare(authority, key, (i) => i.attempt === 'att-1')).toMatchObject({ status: 'APPLIED' });
    // "A similar item exists" is not evidence: another attempt's identity does not match.
    expect(await reloadAndCompare(authority, key, (i) => i.attempt === 'att-2')).toMatchObject({
      status: 'NOT_APPLIED',
    });
  });

  it('writeExactlyOnce turns a lost response or a crash-after into APPLIED, and a foreign item into CONFLICT', async () => {
    const { authority } = stores.ports;
    for (const kind of ['lose-response', 'crash-after'] as const) {
      const key = { pk: `once#${kind}`, sk: 'x' };
      stores.faults.arm(`test.once:${kind}`);
      const write = () => authority.put('test.once', { ...key, who: 'me' }, 'absent');
      const result = await (kind === 'crash-after'
        ? write().catch(() => writeExactlyOnce(authority, 'test.once', key, write, (i) => i.who === 'me'))
        : writeExactlyOnce(authority, 'test.once', key, write, (i) => i.who === 'me'));
      stores.faults.disarm();
      expect(result).toMatchObject({ status: 'APPLIED', item: { who: 'me', version: 1 } });
    }
    const key = { pk: 'once#foreign', sk: 'x' };
    await authority.put('test.put', { ...key, who: 'someone-else' }, 'absent');
    const result = await writeExactlyOnce(
      authority,
      'test.once',
      key,
      () => authority.put('test.once', { ...key, who: 'me' }, 'absent'),
      (i) => i.who === 'me',
    );
    expect(result).toMatchObject({ status: 'CONFLICT', current: { who: 'someone-else' } });
  });

  it('a definite failure throws and applies nothing', async () => {
    const { authority } = stores.ports;
    const key = { pk: 'lane#5', sk: 'head' };
    stores.faults.arm('test.fail:fail');
    await expect(authority.put('test.fail', { ...key }, 'absent')).rejects.toMatchObject({
      name: 'Cutpoint.EffectFailed',
    });
    stores.faults.disarm();
    expect(await authority.get(key)).toBeUndefined();
  });
});

describe('snapshot reads', () => {
  it('getTogether returns the items in key order, undefined for an absent one', async () => {
    const { authority } = stores.ports;
    await authority.put('test.put', { pk: 'snap#1', sk: 'a', n: 1 }, 'absent');
    await authority.put('test.put', { pk: 'snap#1', sk: 'c', n: 3 }, 'absent');
    const items = await authority.getTogether([
      { pk: 'snap#1', sk: 'c' },
      { pk: 'snap#1', sk: 'b' },
      { pk: 'snap#1', sk: 'a' },
    ]);
    expect(items).toEqual([
      expect.objectContaining({ n: 3, version: 1 }),
      undefined,
      expect.objectContaining({ n: 1, version: 1 }),
    ]);
  });

  it('two items a transaction moves together are never seen apart, while transactions run on them', async () => {
    // Separate strongly consistent reads can straddle a transaction; a snapshot cannot. A
    // snapshot that a write transaction cancels (TransactionConflict) is read again.
    const { authority } = stores.ports;
    const keys = [
      { pk: 'snap#2', sk: 'record' },
      { pk: 'snap#2', sk: 'head' },
    ];
    for (const key of keys) await authority.put('test.put', { ...key, step: 0 }, 'absent');
    const STEPS = 60;
    const writer = (async () => {
      for (let step = 1; step <= STEPS; step++) {
        const legs = keys.map((key) => ({ kind: 'update' as const, key, expect: { version: step }, set: { step } }));
        expect(await authority.transact('test.move', legs)).toEqual({ status: 'APPLIED' });
      }
    })();
    const seen: number[][] = [];
    const reader = async () => {
      for (let i = 0; i < STEPS; i++)
        seen.push((await authority.getTogether(keys)).map((item) => item!.step as number));
    };
    await Promise.all([writer, reader(), reader()]);
    expect(seen).toHaveLength(2 * STEPS);
    expect(seen.filter(([record, head]) => record !== head)).toEqual([]);
    expect(new Set(seen.map(([step]) => step)).size).toBeGreaterThan(1);
  });

  it('a snapshot a write transaction cancels is read again; one that stays cancelled fails Cutpoint.EffectFailed', async () => {
    // DynamoDB cancels a TransactGetItems while a write transaction holds one of its items
    // (TransactionConflict). DynamoDB Local serializes the two instead, so the cancellation
    // is injected at the reader client; every other request reaches DynamoDB Local.
    let cancels = 0;
    let sent = 0;
    const instrument = <C extends object>(client: C): C => {
      const c = client as unknown as { send: (command: unknown) => Promise<unknown> };
      const send = c.send.bind(c);
      c.send = async (command) => {
        if (command instanceof TransactGetItemsCommand) {
          sent++;
          if (cancels > 0) {
            cancels--;
            throw new TransactionCanceledException({
              message: 'Transaction cancelled',
              $metadata: {},
              CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
            });
          }
        }
        return send(command);
      };
      return client;
    };
    const { authority } = awsPorts(stores.config, stores.faults, undefined, { instrument });
    const keys = [
      { pk: 'snap#3', sk: 'record' },
      { pk: 'snap#3', sk: 'head' },
    ];
    for (const key of keys) await authority.put('test.put', { ...key, step: 7 }, 'absent');

    cancels = 2;
    expect((await authority.getTogether(keys)).map((item) => item?.step)).toEqual([7, 7]);
    expect(sent).toBe(3);

    cancels = 100;
    sent = 0;
    const failure = await authority.getTogether(keys).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'Cutpoint.EffectFailed', code: 'cutpoint.effect_failed' });
    expect(sent).toBe(6);
  });
});

describe('journal', () => {
  it('appends with a gap-free monotonic sequence and never journals a transition twice', async () => {
    const journal = new Journal(stores.ports.authority, 'journal#route-a/inv-1', 'test.journal.append');
    const at = '2026-11-29T00:00:00.000Z';
    const e1 = await journal.append('t1', 'EMPTY_STAGING', {}, at);
    stores.faults.arm('test.journal.append:lose-response');
    const e2 = await journal.append('t2', 'WRITING_UNKNOWN', { chunk: 1 }, at);
    stores.faults.arm('test.journal.append:crash-after');
    await expect(journal.append('t3', 'VERIFIED_EOF', {}, at)).rejects.toMatchObject({
      name: 'Cutpoint.WorkerCrashed',
    });
    stores.faults.disarm();
    const e3 = await journal.append('t3', 'VERIFIED_EOF', {}, at);
    const again = await journal.append('t2', 'WRITING_UNKNOWN', { chunk: 1 }, at);
    expect([e1.seq, e2.seq, e3.seq, again.seq]).toEqual([1, 2, 3, 2]);
    const entries = await journal.read();
    expect(entries.map((e) => [e.seq, e.transitionId, e.type])).toEqual([
      [1, 't1', 'EMPTY_STAGING'],
      [2, 't2', 'WRITING_UNKNOWN'],
      [3, 't3', 'VERIFIED_EOF'],
    ]);
  });

  it('concurrent appenders interleave without gaps or duplicates', async () => {
    const journal = new Journal(stores.ports.authority, 'journal#route-b/inv-1', 'test.journal.append');
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id) => journal.append(id, 'STEP', {}, 'now', 30)));
    const entries = await journal.read();
    expect(entries.map((e) => e.seq)).toEqual(ids.map((_, i) => i + 1));
    expect(new Set(entries.map((e) => e.transitionId))).toEqual(new Set(ids));
  });
});

describe('authority binding (docs/rules.md#authority-binding: a replaced authority is not the one a replay proved against)', () => {
  it('DescribeTable names the table; deleting and re-creating it under the same name changes the binding', async () => {
    const own = await freshStores();
    const before = await own.ports.authority.describeBinding();
    expect(before.tableArn).toContain(own.config.tableName);
    expect(Number.isNaN(Date.parse(before.creationDateTime))).toBe(false);
    // DynamoDB Local reports no TableId and the same ARN after a re-create; the creation time differs.
    const { DynamoDBClient, DeleteTableCommand } = await import('@aws-sdk/client-dynamodb');
    const client = new DynamoDBClient({
      region: own.config.region,
      endpoint: own.config.endpoints?.dynamodb,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(new DeleteTableCommand({ TableName: own.config.tableName }));
    client.destroy();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { provisionLocal } = await import('../../src/adapters/provision.js');
    await provisionLocal(own.config);
    const after = await own.ports.authority.describeBinding();
    expect(after.tableArn).toBe(before.tableArn);
    expect(after.creationDateTime).not.toBe(before.creationDateTime);
  });
});
