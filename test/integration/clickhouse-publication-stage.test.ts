import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';
import { createClickHouseExchangeTarget } from '../../src/adapters/clickhouse/publication-target.js';
import { createClickHouseStageTarget } from '../../src/adapters/clickhouse/publication-stage.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { candidateMarkerOf, candidateUuidOf, exchangeNamesOf } from '../../src/domain/publication/candidate.js';
import type { LoadChunkRequest, TargetPort } from '../../src/ports/target.js';
import type { StagingRef, TargetRow } from '../../src/domain/delivery/target-types.js';

/**
 * The stage side of TargetPort for a ClickHouse target, on embedded ClickHouse (chdb):
 * what the delivery steps call (create-staging, loadChunk, observeChunks, stagingFacts,
 * observeStaging, dropStaging, identity, describeTable), idempotent by exact identity and
 * by insert deduplication tokens, with faults at its cut points.
 */
let ch: ClickHouseHandle;
const faults = new FaultSwitch();
let target: TargetPort;

const ID = 'inv-le7t2qsoe354i7c2xbzrvjgola';
const OWNER = 'e'.repeat(64);
const names = exchangeNamesOf(ID, { database: 'dwh', table: 'events' });
const STAGE = { schema: 'dwh', table: names.stage };
const COLUMNS = ['id', 'ts', 'body', 'n', 'tag'];
let staging: StagingRef;

function chunk(seq: number, rows: TargetRow[]): LoadChunkRequest {
  const jsonl = encodeChunk(rows, COLUMNS);
  return { staging, seq, columns: COLUMNS, jsonl, sha256: sha256Hex(jsonl), rows: rows.length };
}
const A = [
  {
    id: '18446744073709551615',
    ts: '2026-11-26T00:00:01.123Z',
    body: 'é "quoted" \\ back',
    n: '-9223372036854775808',
    tag: 'x',
  },
  { id: '2', ts: '2026-11-26T00:00:02.000Z', body: null, n: '5', tag: 'y' },
];
const B = [{ id: '3', ts: '2026-11-26T00:00:03.000Z', body: 'b', n: '6', tag: 'x' }];
const B2 = [{ id: '4', ts: '2026-11-26T00:00:04.000Z', body: 'c', n: '7', tag: 'z' }];

async function rows<T>(query: string): Promise<T[]> {
  return (await ch.client.query({ query, format: 'JSONEachRow' })).json<T>();
}
async function rejection(promise: Promise<unknown>): Promise<{ name: string; code: string; cause?: unknown }> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: { name: string; code: string; cause?: unknown }) => e,
  );
}
async function stageRows(): Promise<unknown[]> {
  return rows(
    `SELECT toString(id) AS id, toString(ts) AS ts, body, toString(n) AS n, tag, _cutpoint_seq AS seq FROM dwh.${names.stage} ORDER BY seq, id`,
  );
}

beforeAll(async () => {
  ch = await openClickHouse({ kind: 'embedded' });
  target = createClickHouseStageTarget(ch, faults);
  await ch.client.command({ query: 'CREATE DATABASE dwh' });
  await ch.client.command({
    query:
      "CREATE TABLE dwh.events (id UInt64, ts DateTime64(3, 'UTC'), body String, n Int64, tag LowCardinality(String), twice UInt64 MATERIALIZED id * 2) ENGINE = ReplacingMergeTree ORDER BY id",
  });
});

afterAll(async () => {
  await target?.close();
});

describe('ClickHouse stage (TargetPort)', () => {
  it('observes its identity and describes the target (insertable columns only)', async () => {
    expect(await target.identity()).toEqual({
      engine: 'clickhouse',
      system: '00000000-0000-0000-0000-000000000000',
      database: 'default',
      principal: 'default',
    });
    const described = await target.describeTable({ schema: 'dwh', table: 'events' });
    expect(described.objectId).toMatch(/^[0-9a-f-]{36}$/);
    expect(described.columns).toEqual([
      { name: 'id', type: 'UInt64', nullable: false },
      { name: 'ts', type: "DateTime64(3, 'UTC')", nullable: false },
      { name: 'body', type: 'String', nullable: false },
      { name: 'n', type: 'Int64', nullable: false },
      { name: 'tag', type: 'LowCardinality(String)', nullable: false },
    ]);
    expect(await rejection(target.describeTable({ schema: 'dwh', table: 'nope' }))).toMatchObject({
      code: 'delivery.target_object_missing',
    });
  });

  it('creates the stage once: Nullable columns + bookkeeping, owner marker, dedup window; a lost response resolves to the same stage', async () => {
    const request = {
      invocationId: ID,
      staging: STAGE,
      likeTable: { schema: 'dwh', table: 'events' },
      ownerBinding: OWNER,
    };
    faults.arm('delivery.target.create-staging:lose-response');
    expect(await rejection(target.createStaging(request))).toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
    faults.disarm();
    const created = await target.createStaging(request);
    expect(created).toMatchObject({ table: STAGE, invocationId: ID, owner: OWNER, created: false });
    staging = { table: STAGE, objectId: created.objectId, invocationId: ID, owner: OWNER };
    expect(await target.createStaging(request)).toEqual(created);
    const [ddl] = await rows<{ engine: string; sorting_key: string; create_table_query: string }>(
      `SELECT engine, sorting_key, create_table_query FROM system.tables WHERE database = 'dwh' AND name = '${names.stage}'`,
    );
    expect(ddl).toMatchObject({ engine: 'MergeTree', sorting_key: '_cutpoint_seq' });
    expect(ddl!.create_table_query).toContain('non_replicated_deduplication_window = 100000');
    expect(
      await rows(
        `SELECT name, type FROM system.columns WHERE database = 'dwh' AND table = '${names.stage}' ORDER BY position`,
      ),
    ).toEqual([
      { name: 'id', type: 'Nullable(UInt64)' },
      { name: 'ts', type: "Nullable(DateTime64(3, 'UTC'))" },
      { name: 'body', type: 'Nullable(String)' },
      { name: 'n', type: 'Nullable(Int64)' },
      { name: 'tag', type: 'LowCardinality(Nullable(String))' },
      { name: '_cutpoint_seq', type: 'UInt32' },
      { name: '_cutpoint_chunk', type: 'String' },
    ]);
    expect(await rejection(target.createStaging({ ...request, ownerBinding: 'f'.repeat(64) }))).toMatchObject({
      name: 'Cutpoint.IdentityConflict',
      code: 'delivery.staging_identity_conflict',
    });
    expect(await target.observeStaging(STAGE, { invocationId: ID, owner: OWNER })).toEqual({
      status: 'OURS',
      objectId: created.objectId,
    });
    expect(await target.observeStaging(STAGE, { invocationId: ID, owner: 'f'.repeat(64) })).toEqual({
      status: 'NOT_OURS',
    });
    expect(
      await target.observeStaging({ schema: 'dwh', table: 'cutpoint_stg_none' }, { invocationId: ID, owner: OWNER }),
    ).toEqual({ status: 'ABSENT', metadataVisible: true });
    expect(
      await target.observeStaging({ schema: 'nodb', table: 'cutpoint_stg_none' }, { invocationId: ID, owner: OWNER }),
    ).toEqual({ status: 'ABSENT', metadataVisible: false });
  });

  it('quotes any owner binding into the COMMENT exactly (quotes, backslashes, semicolons are data, never SQL)', async () => {
    const owner = "x'); DROP TABLE dwh.events; -- \\' \u00e9";
    const table = { schema: 'dwh', table: 'cutpoint_stg_quoted' };
    const created = await target.createStaging({
      invocationId: ID,
      staging: table,
      likeTable: { schema: 'dwh', table: 'events' },
      ownerBinding: owner,
    });
    expect(await target.observeStaging(table, { invocationId: ID, owner })).toEqual({
      status: 'OURS',
      objectId: created.objectId,
    });
    expect(await rows("SELECT name FROM system.tables WHERE database = 'dwh' AND name = 'events'")).toEqual([
      { name: 'events' },
    ]);
    expect(await target.dropStaging({ table, objectId: created.objectId, invocationId: ID, owner })).toEqual({
      status: 'ABSENT_PROVED',
      dropped: true,
    });
  });

  it('loads canonical JSONL exactly (ISO times to the ms, 64-bit ints as text, nulls kept), once per token', async () => {
    expect(await target.loadChunk(chunk(0, A))).toEqual({ seq: 0, rows: 2, digest: chunk(0, A).sha256 });
    expect(await target.loadChunk(chunk(0, A))).toEqual({ seq: 0, rows: 2, digest: chunk(0, A).sha256 });
    faults.arm('publication.load.insert:lose-response');
    expect(await rejection(target.loadChunk(chunk(1, B)))).toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
    faults.disarm();
    expect(await target.loadChunk(chunk(1, B))).toEqual({ seq: 1, rows: 1, digest: chunk(1, B).sha256 });
    expect(await target.loadChunk(chunk(2, []))).toEqual({ seq: 2, rows: 0, digest: chunk(2, []).sha256 });
    expect(await stageRows()).toEqual([
      {
        id: '18446744073709551615',
        ts: '2026-11-26 00:00:01.123',
        body: 'é "quoted" \\ back',
        n: '-9223372036854775808',
        tag: 'x',
        seq: 0,
      },
      { id: '2', ts: '2026-11-26 00:00:02.000', body: null, n: '5', tag: 'y', seq: 0 },
      { id: '3', ts: '2026-11-26 00:00:03.000', body: 'b', n: '6', tag: 'x', seq: 1 },
    ]);
    expect(await target.observeChunks(staging)).toEqual([
      { seq: 0, rows: 2 },
      { seq: 1, rows: 1 },
    ]);
    expect(await target.observeChunks(staging, { from: 1, to: 5 })).toEqual([{ seq: 1, rows: 1 }]);
  });

  it('measured: the stage drops a repeated INSERT with the same token; two racing loads of one seq leave its rows once', async () => {
    const lines =
      '{"id":"50","ts":"2026-11-26T00:00:50Z","body":"t","n":"1","tag":"x","_cutpoint_seq":50,"_cutpoint_chunk":"raw"}\n';
    for (let i = 0; i < 2; i++) {
      await ch.client.command({
        query: `INSERT INTO dwh.${names.stage} SETTINGS insert_deduplication_token = 'raw', date_time_input_format = 'best_effort' FORMAT JSONEachRow\n${lines}`,
      });
    }
    expect(await target.observeChunks(staging, { from: 50, to: 51 })).toEqual([{ seq: 50, rows: 1 }]);
    const c = chunk(6, A);
    expect(await Promise.all([target.loadChunk(c), target.loadChunk(c)])).toEqual([
      { seq: 6, rows: 2, digest: c.sha256 },
      { seq: 6, rows: 2, digest: c.sha256 },
    ]);
    expect(await target.observeChunks(staging, { from: 6, to: 7 })).toEqual([{ seq: 6, rows: 2 }]);
    await ch.client.command({
      query: `DELETE FROM dwh.${names.stage} WHERE _cutpoint_seq IN (6, 50) SETTINGS lightweight_deletes_sync = 2`,
    });
    expect(await target.observeChunks(staging, { from: 6, to: 51 })).toEqual([]);
  });

  it('re-loading a seq replaces rows of another chunk, also back to an earlier chunk whose token the dedup log still holds', async () => {
    await target.loadChunk(chunk(1, B2));
    expect((await stageRows()).filter((r) => (r as { seq: number }).seq === 1)).toEqual([
      { id: '4', ts: '2026-11-26 00:00:04.000', body: 'c', n: '7', tag: 'z', seq: 1 },
    ]);
    await target.loadChunk(chunk(1, B));
    expect((await stageRows()).filter((r) => (r as { seq: number }).seq === 1)).toEqual([
      { id: '3', ts: '2026-11-26 00:00:03.000', body: 'b', n: '6', tag: 'x', seq: 1 },
    ]);
  });

  it('refuses bytes that are not the declared chunk before any I/O, and an unknown key definitely (nothing loaded)', async () => {
    const good = chunk(3, B);
    expect(await rejection(target.loadChunk({ ...good, sha256: 'a'.repeat(64) }))).toMatchObject({
      code: 'delivery.chunk_digest_mismatch',
    });
    expect(await rejection(target.loadChunk({ ...good, rows: 2 }))).toMatchObject({
      code: 'delivery.load_count_mismatch',
    });
    const extra = Buffer.from('{"id":"9","ts":"2026-11-26T00:00:09.000Z","body":"x","n":"1","tag":"x","zz":1}\n');
    const refused = await rejection(
      target.loadChunk({ staging, seq: 3, columns: COLUMNS, jsonl: extra, sha256: sha256Hex(extra), rows: 1 }),
    );
    expect(refused).toMatchObject({ name: 'Cutpoint.EffectFailed', cause: { code: 117 } });
    expect(await target.observeChunks(staging, { from: 3, to: 4 })).toEqual([]);
    const moved = { ...staging, objectId: '00000000-0000-4000-8000-000000000000' };
    expect(await rejection(target.loadChunk({ ...good, staging: moved }))).toMatchObject({
      code: 'delivery.staging_binding_changed',
    });
    expect(await rejection(target.observeChunks(moved))).toMatchObject({ code: 'delivery.staging_binding_changed' });
  });

  it('reports staging facts: rows, nulls, duplicate keys, assertions (read-only, enclosed), per range', async () => {
    await target.loadChunk(chunk(4, [{ id: '3', ts: '2026-11-26T00:00:05.000Z', body: 'dup', n: '1', tag: 'x' }]));
    const facts = await target.stagingFacts(staging, {
      keyColumns: ['id'],
      notNull: ['body', 'n'],
      assertions: [{ name: 'max_id', sql: 'SELECT max(id) FROM {staging}' }],
    });
    expect(facts).toEqual({
      rows: 4,
      duplicateKeys: 1,
      nulls: { body: 1, n: 0 },
      assertions: { max_id: '18446744073709551615' },
    });
    expect(
      await target.stagingFacts(staging, {
        keyColumns: ['id'],
        notNull: ['body'],
        assertions: [],
        range: { from: 0, to: 2 },
      }),
    ).toEqual({ rows: 3, duplicateKeys: 0, nulls: { body: 1 }, assertions: {} });
    expect(
      await rejection(
        target.stagingFacts(staging, {
          keyColumns: [],
          notNull: [],
          assertions: [{ name: 'x', sql: 'SELECT 1) ; DROP TABLE dwh.events; SELECT (1' }],
        }),
      ),
    ).toMatchObject({ code: 'publication.invalid_statement' });
    expect(await rows("SELECT count() AS n FROM system.tables WHERE database = 'dwh' AND name = 'events'")).toEqual([
      { n: 1 },
    ]);
  });

  it('is not published by publish()/probeReceipt(): publication.exchange_mode', async () => {
    expect(await rejection(target.probeReceipt(ID))).toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'publication.exchange_mode',
    });
    expect(await rejection(target.publish({} as never))).toMatchObject({ code: 'publication.exchange_mode' });
  });

  it('feeds the candidate: a null in a non-Nullable target column is refused by the fill (Code 349), never defaulted; a Replacing target gets every stage row', async () => {
    const port = createClickHouseExchangeTarget(ch, faults);
    const uuid = candidateUuidOf(ID);
    const marker = candidateMarkerOf(ID, OWNER);
    expect(await port.createCandidate({ names, uuid, marker })).toEqual({ created: true });
    const refused = await rejection(
      port.fillCandidate({ names, uuid, marker, expectedRows: 4, token: `${ID}:fill:x` }),
    );
    expect(refused, (refused as unknown as Error).message).toMatchObject({
      name: 'Cutpoint.EffectFailed',
      cause: { code: 349 },
    });
    await target.loadChunk(chunk(0, [{ ...A[1]!, body: 'now set' }, A[0]!]));
    const filled = await port.fillCandidate({ names, uuid, marker, expectedRows: 4, token: `${ID}:fill:y` });
    expect(filled).toMatchObject({ rows: 4, filled: true });
    // id 3 twice (seq 1 and seq 4): the ReplacingMergeTree candidate holds both until a merge (optimize_on_insert = 0).
    expect(
      await rows(`SELECT toString(id) AS id, toString(twice) AS twice FROM dwh.${names.candidate} ORDER BY id, body`),
    ).toEqual([
      { id: '18446744073709551615', twice: '18446744073709551614' },
      { id: '2', twice: '4' },
      { id: '3', twice: '6' },
      { id: '3', twice: '6' },
    ]);
  });

  it('drops the exact stage, proves absence by UUID, and leaves a table that is not ours', async () => {
    expect(await target.dropStaging({ ...staging, owner: 'f'.repeat(64) })).toEqual({
      status: 'NOT_OURS',
      dropped: false,
    });
    faults.arm('delivery.target.drop-staging:lose-response');
    expect(await rejection(target.dropStaging(staging))).toMatchObject({ name: 'Cutpoint.OutcomeUnknown' });
    faults.disarm();
    expect(await target.dropStaging(staging)).toEqual({ status: 'ABSENT_PROVED', dropped: false });
    expect(await target.observeStaging(STAGE, { invocationId: ID, owner: OWNER })).toEqual({
      status: 'ABSENT',
      metadataVisible: true,
    });
  });
});
