import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { copyIngest, loadChunkBody } from '../../src/adapters/postgres/chunk-load.js';
import { openPostgresTarget, type PostgresTarget } from '../../src/adapters/postgres/target.js';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { verifyChunkBytes } from '../../src/domain/delivery/chunk-json.js';
import { chunkCopyText } from '../../src/domain/delivery/chunk-copy-text.js';
import type { TargetRow } from '../../src/domain/delivery/target-types.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { StagingCreated } from '../../src/ports/target.js';

/**
 * A chunk load on a real PostgreSQL server goes in by COPY text (src/adapters/postgres/
 * chunk-load.ts) and lands exactly what `json_populate_recordset` makes of the same bytes:
 * each chunk is loaded both ways and the tables compared as text, over the types whose
 * spelling differs between the two (json and jsonb scalars, a domain over jsonb, text with
 * every escape, numbers as JSON numbers into text). A value COPY text cannot carry (a JSON
 * array into an int[] column) goes in by json_populate_recordset.
 */
let server: EmbeddedPostgres;
let admin: pg.Client;
let pool: pg.Pool;
let target: PostgresTarget;
const schema = `cp_copy_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
const COLUMNS = ['id', 'label', 'amount', 'flag', 'doc', 'docb', 'typed_doc', 'tags'];

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  admin = new pg.Client({ connectionString: server.connectionString });
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE DOMAIN ${schema}.doc AS jsonb`);
  await admin.query(`CREATE DOMAIN ${schema}.doc2 AS ${schema}.doc`);
  await admin.query(
    `CREATE TABLE ${schema}.events (id bigint, label text, amount numeric, flag boolean, doc json, docb jsonb, typed_doc ${schema}.doc2, tags integer[])`,
  );
  pool = new pg.Pool({ connectionString: server.connectionString, max: 2 });
  pool.on('error', () => undefined);
  target = openPostgresTarget({
    connectionString: server.connectionString,
    faults: inertFaults,
    receiptTable: { schema, table: 'cutpoint_receipts' },
  });
}, 120_000);

afterAll(async () => {
  await target?.close();
  await pool?.end();
  await admin?.end();
  await server?.stop();
});

const chunkOf = (rows: TargetRow[]) => {
  const jsonl = encodeChunk(rows, COLUMNS);
  return { columns: COLUMNS, jsonl, sha256: sha256Hex(jsonl), rows: rows.length };
};

async function stage(): Promise<StagingCreated> {
  return target.createStaging({
    invocationId: `inv-${randomUUID()}`,
    staging: { schema, table: `stg_${randomUUID().replace(/-/g, '').slice(0, 10)}` },
    likeTable: { schema, table: 'events' },
    ownerBinding: `owner-${randomUUID()}`,
  });
}

/** The rows json_populate_recordset makes of the same bytes, as text, in id order. */
async function reference(jsonl: Uint8Array): Promise<string[]> {
  const array = `[${Buffer.from(jsonl).toString('utf8').trimEnd().split('\n').join(',')}]`;
  const result = await admin.query<{ row: string }>(
    `SELECT r::text AS row FROM pg_catalog.json_populate_recordset(NULL::${schema}.events, $1::json) r ORDER BY id`,
    [array],
  );
  return result.rows.map((r) => r.row);
}

async function staged(s: StagingCreated): Promise<string[]> {
  const cols = COLUMNS.map((c) => `s.${c}`).join(', ');
  const result = await admin.query<{ row: string }>(
    `SELECT ROW(${cols})::${schema}.events::text AS row FROM ${schema}.${s.table.table} s ORDER BY id`,
  );
  return result.rows.map((r) => r.row);
}

const scalarRows: TargetRow[] = [
  {
    id: '9223372036854775807',
    label: 'tab\there, new\nline, cr\r, back\\slash, "quote", slash /, é 数据 🚀, \u0001\b\f',
    amount: '123456789012345678901234567890.123456789',
    flag: true,
    doc: 'a plain string',
    docb: 42.5,
    typed_doc: { b: [1, 'x\\"y'], a: null },
    tags: '{1,2,3}',
  },
  {
    id: 2,
    label: 17,
    amount: -0.0001,
    flag: 'false',
    doc: { k: 'v\n' },
    docb: 'text "q"',
    typed_doc: true,
    tags: null,
  },
  { id: 3, label: '', amount: null, flag: null, doc: null, docb: null, typed_doc: null, tags: null },
  { id: 4, label: '\\.', amount: 1e21, flag: 'yes', doc: [1, 'two'], docb: [], typed_doc: 'é', tags: '{}' },
];

describe('a chunk load by COPY text on a real PostgreSQL server', () => {
  it('lands what json_populate_recordset makes of the same bytes, as COPY on a server that takes it', async () => {
    const s = await stage();
    const chunk = chunkOf(scalarRows);
    const receipt = await target.loadChunk({ staging: s, seq: 0, ...chunk });
    expect(receipt).toEqual({ seq: 0, rows: scalarRows.length, digest: chunk.sha256 });
    expect(await staged(s)).toEqual(await reference(chunk.jsonl));
    // Re-loading the seq replaces its rows, as the json route does.
    await target.loadChunk({ staging: s, seq: 0, ...chunk });
    expect(await staged(s)).toHaveLength(scalarRows.length);
  });

  it('a chunk whose text spans many CopyData messages (1 MiB each) lands whole, multi-byte characters cut across them included', async () => {
    const s = await stage();
    const rows = Array.from({ length: 12_000 }, (_, i) => ({
      ...scalarRows[0]!,
      id: i + 1,
      label: `${'é数据🚀'.repeat(20 + (i % 7))} \\ "${i}"\t`,
      docb: { i, s: 'ü'.repeat(i % 5) },
    }));
    const chunk = chunkOf(rows);
    expect(chunk.jsonl.byteLength).toBeGreaterThan(2 * 1024 * 1024);
    // The text as the adapter sends it: some 1 MiB boundary falls inside a character.
    const text = chunkCopyText(verifyChunkBytes({ seq: 0, ...chunk }), {
      columns: COLUMNS,
      jsonColumns: COLUMNS.map((c) => c.startsWith('doc') || c === 'typed_doc'),
    })!;
    const cuts = [1, 2, 3, 4].map((k) => text[k * 1024 * 1024]! & 0xc0);
    expect(cuts).toContain(0x80);
    await target.loadChunk({ staging: s, seq: 0, ...chunk });
    expect(await staged(s)).toEqual(await reference(chunk.jsonl));
  });

  it('a value the column refuses fails the COPY definitely: nothing of the chunk lands, the connection stays usable', async () => {
    const s = await stage();
    const bad = chunkOf([{ ...scalarRows[2]!, id: 'not a number' }]);
    await expect(target.loadChunk({ staging: s, seq: 0, ...bad })).rejects.toMatchObject({
      name: 'Cutpoint.EffectFailed',
    });
    expect(await staged(s)).toEqual([]);
    for (let i = 0; i < 5; i++) {
      const good = chunkOf(scalarRows);
      await target.loadChunk({ staging: s, seq: i, ...good });
    }
    expect(await staged(s)).toHaveLength(5 * scalarRows.length);
  });

  it('takes COPY on the embedded server and json_populate_recordset where COPY text cannot say the same', async () => {
    const s = await stage();
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const ingest = { copy: await copyIngest(client) };
      // The real binaries take COPY; PGlite (the fallback where they cannot run) does not.
      expect(ingest.copy).toBe(server.engine === 'postgres');
      const load = (seq: number, chunk: ReturnType<typeof chunkOf>) =>
        loadChunkBody(client, { staging: s, seq, ...chunk }, COLUMNS, verifyChunkBytes({ seq, ...chunk }), ingest);
      const copied = await load(1, chunkOf(scalarRows));
      expect(copied).toEqual({ rows: scalarRows.length, method: ingest.copy ? 'copy' : 'json_populate_recordset' });
      const nested = chunkOf([
        { id: 9, label: 'x', amount: 1, flag: true, doc: null, docb: null, typed_doc: null, tags: [4, 5] },
      ]);
      const populated = await load(2, nested);
      expect(populated).toEqual({ rows: 1, method: 'json_populate_recordset' });
      const tags = await client.query(`SELECT tags::text FROM ${schema}.${s.table.table} WHERE id = 9`);
      expect(tags.rows).toEqual([{ tags: '{4,5}' }]);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
