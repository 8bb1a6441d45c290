import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { encodeChunk } from '../src/delivery/chunk-codec.js';
import type { TargetRow } from '../src/ports/target.js';

/**
 * Raw PostgreSQL ingest: the fastest bulk load this project can issue, for the bench's
 * "delivery rows/s ÷ raw load rows/s" denominator. N given rows go into a fresh table on
 * the given server, one chunk per statement, each chunk the rows' canonical JSONL joined
 * into one JSON array and expanded server-side by `json_populate_recordset` — the
 * statement `loadChunk` runs, without its stage recheck, DELETE, digest check or fault
 * point. (COPY FROM STDIN would need `pg-copy-streams`, which is not a dependency; `pg`
 * alone has no COPY stream.) Rows are encoded before the clock starts: the chunk bytes
 * exist before any load. Each chunk commits on its own (autocommit), as a chunk load does.
 */
export interface PostgresIngestOptions {
  /** Never printed. */
  connectionString: string;
  /** The fresh table's columns, with their PostgreSQL types; every row carries exactly these, in this order. */
  columns: ReadonlyArray<{ name: string; type: string }>;
  /** Values as the source hands them over (src/ports/source.ts): times as ISO text, 64-bit ints as text. */
  rows: readonly TargetRow[];
  /** Rows per statement (a chunk). */
  chunkRows: number;
  /** Schema of the fresh table (default `public`); the table is dropped afterwards. */
  schema?: string;
}

export interface PostgresIngestResult {
  method: 'json_populate_recordset';
  rows: number;
  chunks: number;
  ms: number;
  rowsPerSec: number;
}

const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export async function measurePostgresIngest(opts: PostgresIngestOptions): Promise<PostgresIngestResult> {
  if (!Number.isSafeInteger(opts.chunkRows) || opts.chunkRows < 1) throw new Error('chunkRows must be a positive integer');
  const names = opts.columns.map((c) => c.name);
  const chunks: string[] = [];
  for (let i = 0; i < opts.rows.length; i += opts.chunkRows) {
    const jsonl = Buffer.from(encodeChunk(opts.rows.slice(i, i + opts.chunkRows), names)).toString('utf8');
    chunks.push(`[${jsonl.slice(0, -1).replaceAll('\n', ',')}]`);
  }
  const table = `${q(opts.schema ?? 'public')}.${q(`bench_ingest_${randomBytes(6).toString('hex')}`)}`;
  const cols = names.map(q).join(', ');
  const client = new pg.Client({ connectionString: opts.connectionString });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${table} (${opts.columns.map((c) => `${q(c.name)} ${c.type}`).join(', ')})`);
    try {
      const insert = `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM json_populate_recordset(NULL::${table}, $1::json)`;
      let loaded = 0;
      const started = performance.now();
      for (const chunk of chunks) loaded += (await client.query(insert, [chunk])).rowCount ?? 0;
      const ms = performance.now() - started;
      if (loaded !== opts.rows.length) throw new Error(`bench bug: loaded ${loaded} of ${opts.rows.length} rows`);
      return { method: 'json_populate_recordset', rows: loaded, chunks: chunks.length, ms, rowsPerSec: ms > 0 ? (loaded * 1000) / ms : 0 };
    } finally {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
    }
  } finally {
    await client.end();
  }
}
