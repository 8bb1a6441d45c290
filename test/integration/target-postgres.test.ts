import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { openPostgresTarget } from '../../src/adapters/postgres/target.js';
import { LOCAL_POSTGRES_ENV, startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { TableRef, TargetRow } from '../../src/domain/delivery/target-types.js';
import { HoldingFaults } from '../support/held-effect.js';
import {
  chunkOf,
  targetContract,
  type ContractColumnType,
  type ContractHandle,
  type TargetAdmin,
  type TypedKind,
} from '../contract/target-contract.js';

/**
 * The target contract on PostgreSQL, on both local engines, each started here on a free
 * loopback port and stopped at the end: the embedded server (the real PostgreSQL binaries;
 * PGlite where they cannot run) and PGlite over the wire; also against a server of your
 * own when CUTPOINT_POSTGRES_URL is set. Each run works in its own fresh schema, with a
 * fresh role that has no privilege on it as the restricted principal.
 */
const TYPES: Record<ContractColumnType, string> = { int: 'integer', text: 'text', timestamp: 'timestamptz' };
const TYPED: Record<TypedKind, string> = {
  int: 'integer',
  bigint: 'bigint',
  decimal: 'numeric',
  double: 'double precision',
  boolean: 'boolean',
  text: 'text',
  date: 'date',
  timestamp: 'timestamp(6)',
  timestamptz: 'timestamptz(6)',
  json: 'json',
  jsonb: 'jsonb',
};
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
        await client.query(
          `INSERT INTO ${qt(table)} (${names.map(q).join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
          values,
        );
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
      const statement = await client.query<{ s: string }>(
        `SELECT format('COMMENT ON TABLE %I.%I IS %L', $1::text, $2::text, $3::text) AS s`,
        [table.schema, table.table, marker],
      );
      await client.query(statement.rows[0]!.s);
    },
    async restricted() {
      const restrictedTarget = openPostgresTarget({
        connectionString,
        faults: new FaultSwitch(),
        receiptTable,
        role: restrictedRole,
      });
      return { target: restrictedTarget, close: () => restrictedTarget.close() };
    },
    typed: {
      types: TYPED,
      async createTable(table, columns) {
        const ref = { schema, table };
        await client.query(`CREATE TABLE ${qt(ref)} (${columns.map((c) => `${q(c.name)} ${c.type}`).join(', ')})`);
        return ref;
      },
      async textRows(table, columns, orderBy) {
        const result = await client.query<Record<string, string | null>>(
          `SELECT ${columns.map((c) => `${q(c)}::text AS ${q(c)}`).join(', ')} FROM ${qt(table)} ORDER BY ${orderBy.map(q).join(', ')}`,
        );
        return result.rows;
      },
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

const started: EmbeddedPostgres[] = [];

async function openEmbedded(engine?: 'pglite'): Promise<ContractHandle> {
  const server = await startEmbeddedPostgres(engine ? { engine } : {});
  started.push(server);
  return openPostgresContract(server.connectionString);
}

targetContract('PostgreSQL (embedded server; PGlite where it cannot run)', () => openEmbedded(), { typedValues: true });
targetContract('PostgreSQL (PGlite over the wire)', () => openEmbedded('pglite'), { typedValues: true });

const realUrl = process.env.CUTPOINT_POSTGRES_URL;
if (realUrl)
  targetContract('PostgreSQL (CUTPOINT_POSTGRES_URL)', () => openPostgresContract(realUrl), { typedValues: true });

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

async function serverSettings(connectionString: string): Promise<Record<string, string>> {
  const client = new pg.Client(connectionString);
  client.on('error', () => undefined);
  await client.connect();
  try {
    const result = await client.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'listen_addresses', 'unix_socket_directories', 'server_encoding', 'data_directory', 'TimeZone')`,
    );
    return Object.fromEntries(result.rows.map((r) => [r.name, r.setting]));
  } finally {
    await client.end();
  }
}

/** Whether this machine has the server binaries (else startEmbeddedPostgres falls back, and the server tests are not registered). */
function serverBinariesInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve(`@embedded-postgres/${platform()}-${arch()}`);
    return true;
  } catch {
    return false;
  }
}

describe('embedded PostgreSQL', () => {
  if (serverBinariesInstalled()) {
    it('the real server: loopback TCP only, a password required, UTF-8, several connections at once; stop() removes its data directory', async () => {
      const server = await startEmbeddedPostgres({ engine: 'postgres' });
      try {
        expect(server.engine).toBe('postgres');
        const url = new URL(server.connectionString);
        expect(url.hostname).toBe('127.0.0.1');
        expect(url.password).toMatch(/^[0-9a-f]{48}$/);
        expect(Number(url.port)).toBe(server.port);
        const settings = await serverSettings(server.connectionString);
        expect(settings).toMatchObject({
          listen_addresses: '127.0.0.1',
          unix_socket_directories: '',
          server_encoding: 'UTF8',
        });
        expect(settings.server_version).toMatch(/^18\./);
        expect(existsSync(settings.data_directory!)).toBe(true);
        url.password = 'wrong';
        const intruder = new pg.Client(url.toString());
        intruder.on('error', () => undefined);
        await expect(intruder.connect()).rejects.toMatchObject({ code: '28P01' });
        const clients = [1, 2, 3].map(() => new pg.Client(server.connectionString));
        for (const c of clients) c.on('error', () => undefined);
        try {
          await Promise.all(clients.map((c) => c.connect()));
          // Three sessions holding transactions open at once: a real server, not one multiplexed backend.
          await Promise.all(clients.map((c) => c.query('BEGIN')));
          const pids = await Promise.all(
            clients.map((c) => c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid').then((r) => r.rows[0]!.pid)),
          );
          expect(new Set(pids).size).toBe(3);
        } finally {
          await Promise.all(clients.map((c) => c.end()));
        }
        await server.stop();
        expect(existsSync(settings.data_directory!)).toBe(false);
        await server.stop();
      } finally {
        await server.stop();
      }
    });
  }

  if (serverBinariesInstalled()) {
    it('the real server loads chunks of different seqs of one stage in parallel, and two loads of one seq one after the other', async () => {
      const server = await startEmbeddedPostgres({ engine: 'postgres' });
      const faults = new HoldingFaults();
      const target = openPostgresTarget({ connectionString: server.connectionString, faults, pool: { max: 6 } });
      const client = new pg.Client(server.connectionString);
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('CREATE TABLE public.events (id integer, body text)');
        const s = await target.createStaging({
          invocationId: 'inv-parallel',
          staging: { schema: 'public', table: 'stg_parallel' },
          likeTable: { schema: 'public', table: 'events' },
          ownerBinding: 'owner',
        });
        const chunk = (ids: number[]) =>
          chunkOf(
            ids.map((id) => ({ id, body: `row ${id}` })),
            ['id', 'body'],
          );
        const finished: string[] = [];
        const load = (name: string, seq: number, ids: number[]) =>
          target.loadChunk({ staging: s, seq, ...chunk(ids) }).then((r) => {
            finished.push(name);
            return r;
          });
        // The first load holds its transaction (and its locks) open before COMMIT until seq 1 has loaded beside it.
        const held = faults.hold('delivery.target.load-chunk');
        const slow = load('slow seq 0', 0, [1, 2]);
        await held.reached;
        const other = load('seq 1', 1, [3]);
        const same = load('seq 0 again', 0, [4, 5, 6]);
        await other;
        held.release();
        await Promise.all([slow, same]);
        expect(finished).toEqual(['seq 1', 'slow seq 0', 'seq 0 again']);
        expect(await target.observeChunks(s)).toEqual([
          { seq: 0, rows: 3 },
          { seq: 1, rows: 1 },
        ]);
      } finally {
        await client.end();
        await target.close();
        await server.stop();
      }
    });
  }

  it('CUTPOINT_LOCAL_POSTGRES=pglite forces PGlite over the wire (password-free, loopback); another value is refused', async () => {
    const before = process.env[LOCAL_POSTGRES_ENV];
    try {
      process.env[LOCAL_POSTGRES_ENV] = 'sqlite';
      await expect(startEmbeddedPostgres()).rejects.toMatchObject({
        name: 'LocalRuntimeError',
        code: 'local.invalid_setting',
      });
      process.env[LOCAL_POSTGRES_ENV] = 'pglite';
      const server = await startEmbeddedPostgres();
      try {
        expect(server.engine).toBe('pglite');
        const url = new URL(server.connectionString);
        expect(url.hostname).toBe('127.0.0.1');
        expect(url.password).toBe('');
        expect((await serverSettings(server.connectionString)).server_version).toMatch(/^18\./);
      } finally {
        await server.stop();
      }
    } finally {
      if (before === undefined) delete process.env[LOCAL_POSTGRES_ENV];
      else process.env[LOCAL_POSTGRES_ENV] = before;
    }
  });

  it('a COMMIT whose connection is lost is classified unknown, an answered error definite', async () => {
    const { classifyPgCommitFailure } = await import('../../src/adapters/postgres/outcome.js');
    expect(classifyPgCommitFailure(Object.assign(new Error('Connection terminated unexpectedly'), {}))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(
      'unknown',
    );
    expect(classifyPgCommitFailure(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(
      'unknown',
    );
    expect(classifyPgCommitFailure(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe('unknown');
    expect(classifyPgCommitFailure(Object.assign(new Error('could not serialize'), { code: '40001' }))).toBe(
      'definite',
    );
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
