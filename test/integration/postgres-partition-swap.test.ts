import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget, type PostgresTarget } from '../../src/adapters/postgres/target.js';
import { publicationDigest } from '../../src/domain/delivery/target-rules.js';
import { publishedMarker, windowPartitionNameOf } from '../../src/domain/delivery/window-partition.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { PublishRequest, TableRef, TargetRow, TimeWindow } from '../../src/domain/delivery/target-types.js';
import { chunkOf } from '../contract/target-contract.js';

/**
 * Publication by partition swap on real PostgreSQL (the embedded server; PGlite where it
 * cannot run): a replace_window into a target partitioned by RANGE on its time column
 * makes the stage the window's partition (same object id), in the publication transaction.
 */

const DAY1: TimeWindow = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-11-02T00:00:00Z') };
const DAY2: TimeWindow = { start: new Date('2026-11-02T00:00:00Z'), end: new Date('2026-11-03T00:00:00Z') };
const COLUMNS = ['id', 'ts', 'body'];

let server: EmbeddedPostgres;
let admin: pg.Client;
let target: PostgresTarget;

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  admin = new pg.Client(server.connectionString);
  admin.on('error', () => undefined);
  await admin.connect();
  target = openPostgresTarget({ connectionString: server.connectionString, faults: new FaultSwitch() });
});

afterAll(async () => {
  await target?.close();
  await admin?.end();
  await server?.stop();
});

const at = (window: TimeWindow, minutes: number) => new Date(window.start.getTime() + minutes * 60_000);
const rowsIn = (window: TimeWindow, ids: number[], body = 'new'): TargetRow[] =>
  ids.map((id) => ({ id, ts: at(window, id), body: `${body} ${id}` }));

/** A fresh schema with `events` partitioned by day on ts (a primary key, a CHECK, a plain index), partitions as given. */
async function partitionedTarget(partitions: Array<{ name: string; bounds: string }>, extra = ''): Promise<TableRef> {
  const schema = `cp_swap_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.events (id integer NOT NULL, ts timestamptz NOT NULL, body text, PRIMARY KEY (id, ts), CONSTRAINT id_positive CHECK (id > 0)${extra}) PARTITION BY RANGE (ts)`,
  );
  await admin.query(`CREATE INDEX events_body ON ${schema}.events (body)`);
  for (const p of partitions)
    await admin.query(`CREATE TABLE ${schema}.${p.name} PARTITION OF ${schema}.events ${p.bounds}`);
  return { schema, table: 'events' };
}

const dayBounds = (w: TimeWindow) => `FOR VALUES FROM ('${w.start.toISOString()}') TO ('${w.end.toISOString()}')`;

async function insert(table: TableRef, rows: TargetRow[]): Promise<void> {
  for (const r of rows)
    await admin.query(`INSERT INTO ${table.schema}.${table.table} (id, ts, body) VALUES ($1, $2, $3)`, [
      r.id,
      r.ts,
      r.body,
    ]);
}

/** A stage of `rows` for `window` (one chunk), and the publish request for it. */
async function staged(
  table: TableRef,
  window: TimeWindow,
  rows: TargetRow[],
  mode: PublishRequest['mode'] = 'replace_window',
): Promise<PublishRequest> {
  const invocationId = `inv-${randomUUID()}`;
  const stage = await target.createStaging({
    invocationId,
    staging: { schema: table.schema, table: `cutpoint_stg_${randomUUID().replace(/-/g, '').slice(0, 20)}` },
    likeTable: table,
    ownerBinding: 'owner-1',
  });
  const receipt = await target.loadChunk({ staging: stage, seq: 0, ...chunkOf(rows, COLUMNS) });
  return {
    invocationId,
    target: table,
    window,
    mode,
    keyColumns: ['id', 'ts'],
    timeColumn: 'ts',
    staging: stage,
    rows: receipt.rows,
    digest: publicationDigest([receipt]),
  };
}

async function contents(table: TableRef): Promise<Array<{ id: number; body: string }>> {
  return (
    await admin.query<{ id: number; body: string }>(
      `SELECT id, body FROM ${table.schema}.${table.table} ORDER BY ts, id`,
    )
  ).rows;
}

async function partitionsOf(table: TableRef): Promise<Array<{ oid: string; name: string; comment: string | null }>> {
  const result = await admin.query<{ oid: string; name: string; comment: string | null }>(
    `SELECT c.oid::text AS oid, c.relname AS name, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
    [`${table.schema}.${table.table}`],
  );
  return result.rows;
}

describe('PostgreSQL publication by partition swap', () => {
  it('replaces the window partition by the stage itself (same object id, stable name, published marker, no row copy) in the receipt transaction', async () => {
    const table = await partitionedTarget([
      { name: 'events_day1', bounds: dayBounds(DAY1) },
      { name: 'events_day2', bounds: dayBounds(DAY2) },
    ]);
    await insert(table, [...rowsIn(DAY1, [1, 2, 3], 'old'), ...rowsIn(DAY2, [1, 2], 'other')]);
    const request = await staged(table, DAY1, rowsIn(DAY1, [4, 5]));

    const result = await target.publish(request);
    expect(result).toMatchObject({
      applied: true,
      receipt: { method: 'partition_swap', rows: 2, stagingObjectId: request.staging.objectId },
    });
    expect(result.swapDeclined).toBeUndefined();
    expect(await contents(table)).toEqual([
      { id: 4, body: 'new 4' },
      { id: 5, body: 'new 5' },
      { id: 1, body: 'other 1' },
      { id: 2, body: 'other 2' },
    ]);
    const name = windowPartitionNameOf(table, DAY1);
    expect(name).toBe('events_p20261101000000_20261102000000');
    expect(await partitionsOf(table)).toEqual([
      { oid: expect.any(String), name: 'events_day2', comment: null },
      { oid: request.staging.objectId, name, comment: publishedMarker(request.invocationId) },
    ]);
    // The old partition is gone, the stage's name is free, the chunk column dropped, the target's indexes attached (not rebuilt by ATTACH).
    const left = await admin.query(
      `SELECT relname FROM pg_class WHERE relname IN ('events_day1', $1) AND relnamespace = $2::regnamespace`,
      [request.staging.table.table, table.schema],
    );
    expect(left.rowCount).toBe(0);
    const columns = await admin.query<{ attname: string }>(
      `SELECT attname FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [request.staging.objectId],
    );
    expect(columns.rows.map((c) => c.attname)).toEqual(COLUMNS);
    const attached = await admin.query(
      `SELECT 1 FROM pg_index i JOIN pg_inherits h ON h.inhrelid = i.indexrelid WHERE i.indrelid = $1::oid`,
      [request.staging.objectId],
    );
    expect(attached.rowCount).toBe(2);

    // Receipt first: publishing again finds the receipt and publishes nothing.
    const again = await target.publish(request);
    expect(again).toMatchObject({
      applied: false,
      receipt: { method: 'partition_swap', publishedAt: result.receipt.publishedAt },
    });
    expect(await target.probeReceipt(request.invocationId)).toEqual(result.receipt);
  });

  it('publishes a window with no partition yet as a new partition, and the next replace of that window finds it by its bounds and replaces it', async () => {
    const table = await partitionedTarget([{ name: 'events_day2', bounds: dayBounds(DAY2) }]);
    const first = await staged(table, DAY1, rowsIn(DAY1, [1, 2]));
    expect((await target.publish(first)).receipt.method).toBe('partition_swap');
    const second = await staged(table, DAY1, rowsIn(DAY1, [7], 'newer'));
    expect((await target.publish(second)).receipt.method).toBe('partition_swap');
    expect(await contents(table)).toEqual([{ id: 7, body: 'newer 7' }]);
    const name = windowPartitionNameOf(table, DAY1);
    expect((await partitionsOf(table)).map((p) => [p.oid, p.name])).toEqual([
      [expect.any(String), 'events_day2'],
      [second.staging.objectId, name],
    ]);

    // The first stage became a partition the second publication replaced: now it is really gone.
    expect(await target.dropStaging(first.staging)).toEqual({ status: 'ABSENT_PROVED', dropped: false });
    // The second stage is the window's partition: ATTACHED, never dropped; a retirement's drop says PUBLISHED.
    expect(await target.dropStaging(second.staging)).toEqual({
      status: 'ATTACHED',
      dropped: false,
      partition: { schema: table.schema, table: name },
    });
    expect(await target.dropStaging(second.staging, { unlessPublished: true })).toMatchObject({
      status: 'PUBLISHED',
      dropped: false,
    });
    expect(await contents(table)).toEqual([{ id: 7, body: 'newer 7' }]);
  });

  it('falls back to the set-based path where a swap cannot apply, and says why', async () => {
    const twoDays = { start: DAY1.start, end: DAY2.end };
    const cases: Array<{
      what: string;
      partitions: Array<{ name: string; bounds: string }>;
      window: TimeWindow;
      mode?: PublishRequest['mode'];
      declined: RegExp;
    }> = [
      {
        what: 'window over two partitions',
        partitions: [
          { name: 'd1', bounds: dayBounds(DAY1) },
          { name: 'd2', bounds: dayBounds(DAY2) },
        ],
        window: twoDays,
        declined: /overlaps partition .*\.d1, .*\.d2/,
      },
      {
        what: 'window inside a wider partition',
        partitions: [{ name: 'both', bounds: dayBounds(twoDays) }],
        window: DAY1,
        declined: /overlaps partition .*\.both/,
      },
      {
        what: 'merge',
        partitions: [{ name: 'd1', bounds: dayBounds(DAY1) }],
        window: DAY1,
        mode: 'merge',
        declined: /merge publishes set-based/,
      },
    ];
    for (const c of cases) {
      const table = await partitionedTarget(c.partitions);
      await insert(table, rowsIn(DAY1, [1], 'old'));
      const request = await staged(table, c.window, rowsIn(DAY1, [2]), c.mode);
      const result = await target.publish(request);
      expect(result, c.what).toMatchObject({ applied: true, receipt: { method: 'set_based' } });
      expect(result.swapDeclined, c.what).toMatch(c.declined);
      expect(await contents(table), c.what).toEqual(
        c.mode === 'merge'
          ? [
              { id: 1, body: 'old 1' },
              { id: 2, body: 'new 2' },
            ]
          : [{ id: 2, body: 'new 2' }],
      );
      expect(await target.dropStaging(request.staging), c.what).toEqual({ status: 'ABSENT_PROVED', dropped: true });
    }
  });

  it('a default partition: holding rows of the window it falls back (ATTACH would refuse them) and replaces them; holding none it swaps', async () => {
    const table = await partitionedTarget([{ name: 'rest', bounds: 'DEFAULT' }]);
    await insert(table, [...rowsIn(DAY1, [1], 'old'), ...rowsIn(DAY2, [9], 'other')]);
    const first = await staged(table, DAY1, rowsIn(DAY1, [2]));
    const fell = await target.publish(first);
    expect(fell).toMatchObject({
      receipt: { method: 'set_based' },
      swapDeclined: 'the default partition holds rows of the window',
    });
    expect(await contents(table)).toEqual([
      { id: 2, body: 'new 2' },
      { id: 9, body: 'other 9' },
    ]);

    await admin.query(`DELETE FROM ${table.schema}.events WHERE ts < $1`, [DAY2.start]);
    const second = await staged(table, DAY1, rowsIn(DAY1, [3]));
    expect((await target.publish(second)).receipt.method).toBe('partition_swap');
    expect(await contents(table)).toEqual([
      { id: 3, body: 'new 3' },
      { id: 9, body: 'other 9' },
    ]);
  });

  it('falls back where the target itself forbids a swap: the stable name taken by another table, a foreign key', async () => {
    const taken = await partitionedTarget([{ name: 'events_day1', bounds: dayBounds(DAY1) }]);
    await admin.query(`CREATE TABLE ${taken.schema}.${windowPartitionNameOf(taken, DAY1)} (x integer)`);
    const first = await target.publish(await staged(taken, DAY1, rowsIn(DAY1, [1])));
    expect(first).toMatchObject({
      receipt: { method: 'set_based' },
      swapDeclined: `the partition name ${windowPartitionNameOf(taken, DAY1)} is taken by another table`,
    });

    const schema = `cp_swap_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await admin.query(
      `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.bodies (body text PRIMARY KEY); INSERT INTO ${schema}.bodies VALUES ('new 1')`,
    );
    const fk = await partitionedTarget(
      [{ name: 'd1', bounds: dayBounds(DAY1) }],
      `, CONSTRAINT body_known FOREIGN KEY (body) REFERENCES ${schema}.bodies (body)`,
    );
    const second = await target.publish(await staged(fk, DAY1, rowsIn(DAY1, [1])));
    expect(second).toMatchObject({ receipt: { method: 'set_based' }, swapDeclined: 'the target has foreign keys' });
    expect(await contents(fk)).toEqual([{ id: 1, body: 'new 1' }]);
  });

  it('a timestamp (without time zone) key: the window is UTC wall time, and the swap applies', async () => {
    const schema = `cp_swap_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await admin.query(
      `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.events (id integer, ts timestamp(3) NOT NULL, body text) PARTITION BY RANGE (ts)`,
    );
    await admin.query(
      `CREATE TABLE ${schema}.d1 PARTITION OF ${schema}.events FOR VALUES FROM ('2026-11-01 00:00:00') TO ('2026-11-02 00:00:00')`,
    );
    const table = { schema, table: 'events' };
    const request = await staged(table, DAY1, rowsIn(DAY1, [1, 2]));
    expect(await target.publish(request)).toMatchObject({ receipt: { method: 'partition_swap' } });
    expect((await partitionsOf(table)).map((p) => p.oid)).toEqual([request.staging.objectId]);
    const rows = await admin.query<{ ts: string }>(`SELECT ts::text AS ts FROM ${schema}.events ORDER BY ts`);
    expect(rows.rows.map((r) => r.ts)).toEqual(['2026-11-01 00:01:00', '2026-11-01 00:02:00']);
  });

  it('a target that is not partitioned publishes set-based with nothing declined', async () => {
    const schema = `cp_swap_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
    await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.events (id integer, ts timestamptz, body text)`);
    const table = { schema, table: 'events' };
    const result = await target.publish(await staged(table, DAY1, rowsIn(DAY1, [1])));
    expect(result).toMatchObject({ applied: true, receipt: { method: 'set_based' } });
    expect(result).not.toHaveProperty('swapDeclined');
  });

  it('refuses precisely and changes nothing: rows outside the window, NULL where the target forbids it, a count the journal did not prove', async () => {
    const table = await partitionedTarget([{ name: 'events_day1', bounds: dayBounds(DAY1) }]);
    await insert(table, rowsIn(DAY1, [1], 'old'));
    const outside = await staged(table, DAY1, [...rowsIn(DAY1, [2]), ...rowsIn(DAY2, [3])]);
    await expect(target.publish(outside)).rejects.toMatchObject({
      name: 'Cutpoint.PublicationRefused',
      message: 'publication refused: 1 staged rows fall outside the window',
    });
    const nulls = await staged(table, DAY1, [{ id: null, ts: at(DAY1, 5), body: 'x' }]);
    await expect(target.publish(nulls)).rejects.toMatchObject({
      message: 'publication refused: 1 staged rows hold NULL in columns the target requires (id, ts)',
    });
    const counted = await staged(table, DAY1, rowsIn(DAY1, [4]));
    await expect(target.publish({ ...counted, rows: 2 })).rejects.toMatchObject({
      message: 'publication refused: stage holds 1 rows, the journal proved 2',
    });

    expect(await contents(table)).toEqual([{ id: 1, body: 'old 1' }]);
    expect((await partitionsOf(table)).map((p) => p.name)).toEqual(['events_day1']);
    // Each stage is still the stage, observable by chunk, with no receipt.
    for (const r of [outside, nulls, counted]) {
      expect(await target.probeReceipt(r.invocationId)).toBeUndefined();
      expect((await target.observeChunks(r.staging)).length).toBe(1);
      expect(await target.dropStaging(r.staging)).toEqual({ status: 'ABSENT_PROVED', dropped: true });
    }
  });

  it('a receipt table created before receipts recorded their method still reads, and the next publication adds the column once', async () => {
    const receipts = { schema: `cp_legacy_${randomUUID().replace(/-/g, '').slice(0, 10)}`, table: 'cutpoint_receipts' };
    await admin.query(`CREATE SCHEMA ${receipts.schema}`);
    await admin.query(`CREATE TABLE ${receipts.schema}.cutpoint_receipts (
      invocation_id text PRIMARY KEY, target_schema text NOT NULL, target_table text NOT NULL, mode text NOT NULL,
      window_start timestamptz NOT NULL, window_end timestamptz NOT NULL, rows bigint NOT NULL, digest text NOT NULL,
      staging_object_id text NOT NULL, published_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await admin.query(
      `INSERT INTO ${receipts.schema}.cutpoint_receipts VALUES ('inv-old', 's', 't', 'replace_window', $1, $2, 3, 'd', '42', now())`,
      [DAY1.start, DAY1.end],
    );
    const legacy = openPostgresTarget({
      connectionString: server.connectionString,
      faults: new FaultSwitch(),
      receiptTable: receipts,
    });
    try {
      expect(await legacy.probeReceipt('inv-old')).toMatchObject({ invocationId: 'inv-old', rows: 3 });
      const table = await partitionedTarget([{ name: 'events_day1', bounds: dayBounds(DAY1) }]);
      const request = await staged(table, DAY1, rowsIn(DAY1, [1]));
      expect((await legacy.publish(request)).receipt.method).toBe('partition_swap');
      expect(await legacy.probeReceipt(request.invocationId)).toMatchObject({ method: 'partition_swap' });
    } finally {
      await legacy.close();
    }
  });
});
