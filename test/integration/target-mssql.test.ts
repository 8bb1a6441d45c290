import { randomUUID } from 'node:crypto';
import sql from 'mssql';
import { describe, expect, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { parseMssqlConnection } from '../../src/adapters/mssql/connection.js';
import { openMssqlTarget } from '../../src/adapters/mssql/target.js';
import { encodeChunk } from '../../src/delivery/chunk-codec.js';
import { sha256Hex } from '../../src/domain/digest.js';
import type { TableRef, TargetRow } from '../../src/domain/delivery/target-types.js';
import {
  targetContract,
  type ContractColumnType,
  type ContractHandle,
  type TargetAdmin,
} from '../contract/target-contract.js';

/**
 * SQL Server cannot run on these machines. When CUTPOINT_MSSQL_URL names a server (a
 * `mssql://user:password@host:1433/database?trustServerCertificate=true` URL or an ADO.NET
 * connection string; the login needs CREATE SCHEMA and CREATE TABLE in that database, whose
 * compatibility level must be 130 or higher for OPENJSON), the
 * same target contract PostgreSQL passes runs against it, in a fresh schema dropped at the
 * end. CUTPOINT_MSSQL_RESTRICTED_URL may name a second login without VIEW DEFINITION on
 * that schema to exercise ABSENCE_UNPROVABLE live. Without a server, the offline tests
 * below run (the T-SQL itself is checked offline in test/unit/mssql-statements.test.ts,
 * mssql-load.test.ts and, by a T-SQL grammar, mssql-grammar.test.ts).
 */
const TYPES: Record<ContractColumnType, string> = { int: 'int', text: 'nvarchar(max)', timestamp: 'datetime2(3)' };
const b = (name: string): string => `[${name.replace(/]/g, ']]')}]`;
const bt = (ref: TableRef): string => `${b(ref.schema)}.${b(ref.table)}`;

async function openMssqlContract(url: string, restrictedUrl: string | undefined): Promise<ContractHandle> {
  const schema = `cp_contract_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const pool = new sql.ConnectionPool({ ...parseMssqlConnection(url).config });
  pool.on('error', () => undefined);
  await pool.connect();
  await pool.request().batch(`CREATE SCHEMA ${b(schema)}`);
  const faults = new FaultSwitch();
  const receiptTable = { schema, table: 'cutpoint_receipts' };
  const target = openMssqlTarget({ connection: url, faults, receiptTable });

  const admin: TargetAdmin = {
    schema,
    async createTable(table, columns, primaryKey) {
      const ref = { schema, table };
      const defs = columns.map(
        (c) => `${b(c.name)} ${TYPES[c.type]}${primaryKey?.includes(c.name) ? ' NOT NULL' : ''}`,
      );
      if (primaryKey?.length) defs.push(`PRIMARY KEY (${primaryKey.map(b).join(', ')})`);
      await pool.request().batch(`CREATE TABLE ${bt(ref)} (${defs.join(', ')})`);
      return ref;
    },
    async insert(table, rows) {
      for (const row of rows) {
        const names = Object.keys(row);
        const request = pool.request();
        names.forEach((n, i) => {
          const value = row[n];
          if (value instanceof Date) request.input(`p${i}`, sql.DateTime2(3), value);
          else request.input(`p${i}`, value);
        });
        await request.query(
          `INSERT INTO ${bt(table)} (${names.map(b).join(', ')}) VALUES (${names.map((_, i) => `@p${i}`).join(', ')})`,
        );
      }
    },
    async rows(table, orderBy) {
      const result = await pool
        .request()
        .query<TargetRow>(`SELECT * FROM ${bt(table)} ORDER BY ${orderBy.map(b).join(', ')}`);
      return [...result.recordset];
    },
    async exists(table) {
      const result = await pool
        .request()
        .input('name', sql.NVarChar(400), bt(table))
        .query(`SELECT OBJECT_ID(@name, N'U') AS id`);
      return result.recordset[0]?.id !== null;
    },
    async setMarker(table, marker) {
      await pool
        .request()
        .input('value', sql.NVarChar(4000), marker)
        .input('schema', sql.NVarChar(128), table.schema)
        .input('table', sql.NVarChar(128), table.table)
        .query(
          `EXEC sys.sp_updateextendedproperty @name = N'cutpoint.owner', @value = @value, @level0type = N'SCHEMA', @level0name = @schema, @level1type = N'TABLE', @level1name = @table`,
        );
    },
    ...(restrictedUrl
      ? {
          async restricted() {
            const restrictedTarget = openMssqlTarget({
              connection: restrictedUrl,
              faults: new FaultSwitch(),
              receiptTable,
            });
            return { target: restrictedTarget, close: () => restrictedTarget.close() };
          },
        }
      : {}),
  };

  return {
    target,
    admin,
    faults,
    async close() {
      await target.close();
      const tables = await pool
        .request()
        .input('schema', sql.NVarChar(128), schema)
        .query<{ name: string }>('SELECT t.name FROM sys.tables AS t WHERE t.schema_id = SCHEMA_ID(@schema)');
      for (const { name } of tables.recordset) await pool.request().batch(`DROP TABLE ${bt({ schema, table: name })}`);
      await pool.request().batch(`DROP SCHEMA ${b(schema)}`);
      await pool.close();
    },
  };
}

const url = process.env.CUTPOINT_MSSQL_URL;
const restrictedUrl = process.env.CUTPOINT_MSSQL_RESTRICTED_URL;
if (url)
  targetContract('SQL Server (CUTPOINT_MSSQL_URL)', () => openMssqlContract(url, restrictedUrl), {
    restrictedPrincipal: !!restrictedUrl,
  });

describe('SQL Server adapter without a server', () => {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  const secret = `pw-${randomUUID()}`;
  const unreachable = [
    `mssql://deliverer:${secret}@127.0.0.1:1/warehouse?trustServerCertificate=true`,
    `Server=127.0.0.1,1;Database=warehouse;User Id=deliverer;Password=${secret};Encrypt=false;Connect Timeout=5`,
  ];

  for (const [i, connection] of unreachable.entries()) {
    it(`reports an unreachable server without any part of the connection (${i === 0 ? 'URL' : 'ADO.NET string'})`, async () => {
      const target = openMssqlTarget({ connection, faults: new FaultSwitch() });
      try {
        const error = (await target.probeReceipt('inv-1').catch((e: unknown) => e)) as Error & { code?: string };
        expect(error).toMatchObject({ name: 'Cutpoint.TargetUnavailable', code: 'delivery.target_unavailable' });
        const text = `${error.message} ${JSON.stringify(error)} ${String(error.stack)}`;
        expect(text).not.toContain(secret);
        expect(text).not.toContain('deliverer');
        expect(text).not.toContain('mssql://');
        expect(text).not.toContain('Password');
      } finally {
        await target.close();
      }
    });
  }

  it('validates identifiers, chunk bytes, seq ranges, windows and digests before it opens a connection', async () => {
    const target = openMssqlTarget({ connection: unreachable[0]!, faults: new FaultSwitch() });
    const staging = { table: { schema: 'dbo', table: 'stg' }, objectId: '42', invocationId: 'inv', owner: 'o' };
    try {
      await expect(
        target.createStaging({
          invocationId: 'inv',
          staging: { schema: 'dbo', table: 'x]; DROP TABLE y; --' },
          likeTable: staging.table,
          ownerBinding: 'o',
        }),
      ).rejects.toMatchObject({ code: 'delivery.invalid_identifier' });
      const empty = new Uint8Array();
      const chunk = { staging, seq: 0, columns: ['a'], jsonl: empty, sha256: sha256Hex(empty), rows: 0 };
      await expect(target.loadChunk({ ...chunk, columns: ['a b'] })).rejects.toMatchObject({
        code: 'delivery.invalid_identifier',
      });
      const jsonl = encodeChunk([{ a: 1 }, { a: 2 }], ['a']);
      await expect(target.loadChunk({ ...chunk, jsonl, sha256: sha256Hex(empty), rows: 2 })).rejects.toMatchObject({
        code: 'delivery.chunk_digest_mismatch',
      });
      await expect(target.loadChunk({ ...chunk, jsonl, sha256: sha256Hex(jsonl), rows: 3 })).rejects.toMatchObject({
        code: 'delivery.load_count_mismatch',
      });
      await expect(target.loadChunk({ ...chunk, seq: 2 ** 31 })).rejects.toMatchObject({
        code: 'delivery.invalid_request',
      });
      await expect(target.observeChunks(staging, { from: 5, to: 4 })).rejects.toMatchObject({
        code: 'delivery.invalid_request',
      });
      await expect(target.observeChunks(staging, { from: -1, to: 4 })).rejects.toMatchObject({
        code: 'delivery.invalid_request',
      });
      const window = { start: new Date('2024-03-01T11:00:00Z'), end: new Date('2024-03-01T10:00:00Z') };
      const request = {
        invocationId: 'inv',
        target: staging.table,
        window,
        mode: 'merge' as const,
        keyColumns: ['id'],
        timeColumn: 'ts',
        staging,
        rows: 1,
        digest: 'f'.repeat(64),
      };
      await expect(target.publish(request)).rejects.toMatchObject({ code: 'delivery.invalid_window' });
      await expect(
        target.publish({ ...request, window: { start: window.end, end: window.start }, digest: "'; DROP" }),
      ).rejects.toMatchObject({
        code: 'delivery.invalid_request',
      });
      await expect(target.dropStaging({ ...staging, objectId: '42; DROP' })).rejects.toMatchObject({
        code: 'delivery.invalid_request',
      });
    } finally {
      await target.close();
    }
  });

  it('refuses an unparseable connection without echoing it', () => {
    const bad = `mssql://deliverer:${secret}@127.0.0.1:1/db?encrypt=perhaps`;
    let error: unknown;
    try {
      openMssqlTarget({ connection: bad, faults: new FaultSwitch() });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ name: 'Cutpoint.ConfigError', code: 'delivery.mssql_connection_invalid' });
    expect(String((error as Error).message)).not.toContain(secret);
  });
});
