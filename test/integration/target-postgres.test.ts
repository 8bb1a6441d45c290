import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget } from '../../src/adapters/postgres/target.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { TableRef, TargetRow } from '../../src/ports/target.js';
import { targetContract, type ContractColumnType, type ContractHandle, type TargetAdmin } from '../contract/target-contract.js';

/**
 * The target contract on PostgreSQL: always against embedded PostgreSQL (PGlite served
 * over the wire, started here on a free loopback port and stopped at the end), and also
 * against a real server when CUTPOINT_POSTGRES_URL is set. Each run works in its own fresh
 * schema, with a fresh role that has no privilege on it as the restricted principal.
 */
const TYPES: Record<ContractColumnType, string> = { int: 'integer', text: 'text', timestamp: 'timestamptz' };
const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const qt = (ref: TableRef): string => `${q(ref.schema)}.${q(ref.table)}`;

async function openPostgresContract(connectionString: string): Promise<ContractHandle> {
  const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
  const schema = `cp_contract_${suffix}`;
  const restrictedRole = `cp_restricted_${suffix}`;
  const client = new pg.Client({ connectionString });
  client.on('error', () => undefined);
  await client.connect();
  await client.query(`CREATE SCHEMA ${q(schema)}`);
  // A role with no privilege at all on the schema: it may read the catalogs, but not use
  // the schema, so it cannot tell an absent table from one it may not see.
  await client.query(`CREATE ROLE ${q(restrictedRole)} NOLOGIN`);
  const faults = new FaultSwitch();
  const receiptTable = { schema, table: 'cutpoint_receipts' };
  const target = openPostgresTarget({ connectionString, faults, receiptTable });

  const admin: TargetAdmin = {
    schema,
    async createTable(table, columns, primaryKey) {
      const ref = { schema, table };
      const defs = columns.map((c) => `${q(c.name)} ${TYPES[c.type]}`);
      if (primaryKey?.length) defs.push(`PRIMARY KEY (${primaryKey.map(q).join(', ')})`);
      await client.query(`CREATE TABLE ${qt(ref)} (${defs.join(', ')})`);
      return ref;
    },
    async insert(table, rows) {
      for (const row of rows) {
        const names = Object.keys(row);
        const values = names.map((n) => (row[n] instanceof Date ? (row[n] as Date).toISOString() : row[n]));
        await client.query(`INSERT INTO ${qt(table)} (${names.map(q).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`, values);
      }
    },
    async rows(table, orderBy) {
      const result = await client.query<TargetRow>(`SELECT * FROM ${qt(table)} ORDER BY ${orderBy.map(q).join(', ')}`);
      return result.rows;
    },
    async exists(table) {
      const result = await client.query(
        `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
        [table.schema, table.table],
      );
      return result.rowCount === 1;
    },
    async setMarker(table, marker) {
      const statement = await client.query<{ s: string }>(`SELECT format('COMMENT ON TABLE %I.%I IS %L', $1::text, $2::text, $3::text) AS s`, [
        table.schema,
        table.table,
        marker,
      ]);
      await client.query(statement.rows[0]!.s);
    },
    async restricted() {
      const restrictedTarget = openPostgresTarget({ connectionString, faults: new FaultSwitch(), receiptTable, role: restrictedRole });
      return { target: restrictedTarget, close: () => restrictedTarget.close() };
    },
  };

  return {
    target,
    admin,
    faults,
    async close() {
      await target.close();
      await client.query(`DROP SCHEMA ${q(schema)} CASCADE`);
      await client.query(`DROP ROLE ${q(restrictedRole)}`);
      await client.end();
    },
  };
}

let embedded: EmbeddedPostgres | undefined;

targetContract('PostgreSQL (embedded PGlite over the wire)', async () => {
  embedded = await startEmbeddedPostgres();
  return openPostgresContract(embedded.connectionString);
});

const realUrl = process.env.CUTPOINT_POSTGRES_URL;
if (realUrl) targetContract('PostgreSQL (CUTPOINT_POSTGRES_URL)', () => openPostgresContract(realUrl));

afterAll(async () => {
  await embedded?.stop();
});

describe('embedded PostgreSQL', () => {
  let server: EmbeddedPostgres;
  beforeAll(async () => {
    server = await startEmbeddedPostgres();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('listens on loopback with a password-free connection string, and takes several connections at once', async () => {
    const url = new URL(server.connectionString);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.password).toBe('');
    expect(Number(url.port)).toBe(server.port);
    const clients = [1, 2, 3].map(() => new pg.Client(server.connectionString));
    for (const c of clients) c.on('error', () => undefined);
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const versions = await Promise.all(
        clients.map((c) => c.query<{ v: string }>("SELECT current_setting('server_version') AS v").then((r) => r.rows[0]!.v)),
      );
      expect(versions.every((v) => /^18\./.test(v))).toBe(true);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('a COMMIT whose connection is lost is classified unknown, an answered error definite', async () => {
    const { classifyPgCommitFailure } = await import('../../src/adapters/postgres/outcome.js');
    expect(classifyPgCommitFailure(Object.assign(new Error('Connection terminated unexpectedly'), {}))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('could not serialize'), { code: '40001' }))).toBe('definite');
    expect(classifyPgCommitFailure(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe('definite');
  });

  it('reports an unreachable server without the connection string or password', async () => {
    const secret = `pw-${randomUUID()}`;
    const dead = openPostgresTarget({
      connectionString: `postgres://deliverer:${secret}@127.0.0.1:1/warehouse`,
      faults: new FaultSwitch(),
      pool: { connectionTimeoutMillis: 2_000 },
    });
    try {
      const error = (await dead.probeReceipt('inv-1').catch((e: unknown) => e)) as Error & { code?: string };
      expect(error).toMatchObject({ name: 'Cutpoint.TargetUnavailable', code: 'delivery.target_unavailable' });
      const text = `${error.message} ${JSON.stringify(error)}`;
      expect(text).not.toContain(secret);
      expect(text).not.toContain('deliverer');
      expect(text).not.toContain('postgres://');
    } finally {
      await dead.close();
    }
  });
});
