import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { encodeChunk } from '../src/delivery/chunk-codec.js';
import type { TargetRow } from '../src/domain/delivery/target-types.js';

/**
 * Raw PostgreSQL ingest: the fastest bulk load this project can issue, for the bench's
 * "delivery rows/s ÷ raw load rows/s" denominator. The rows go into a FRESH table (the
 * given columns and types, no key, no index: a plain heap, the cheapest thing to fill) on
 * the given server, one chunk per statement, each chunk the rows' canonical JSONL joined
 * into one JSON array and expanded server-side by `json_populate_recordset` — the
 * statement `loadChunk` runs, without its stage recheck, DELETE, digest check or fault
 * point. `concurrency` loaders, each on its own connection, take the next chunk until none
 * is left (a delivery loads `max_concurrency` parts at once). (COPY FROM STDIN would need
 * `pg-copy-streams`, which is not a dependency; `pg` alone has no COPY stream.)
 *
 * Rows are encoded once, before any clock (`ingestChunks`): the chunk bytes exist before
 * any load. Each chunk commits on its own (autocommit), as a chunk load does. Only the
 * loading is timed: connecting, CREATE TABLE and DROP TABLE are not.
 */
export interface IngestChunks {
  columns: ReadonlyArray<{ name: string; type: string }>;
  /** One JSON array text per chunk. */
  arrays: string[];
  rows: number;
}

export interface PostgresIngestOptions {
  /** Never printed. */
  connectionString: string;
  chunks: IngestChunks;
  /** Loaders at once (connections), default 1. */
  concurrency?: number;
  /** Schema of the fresh table (default `public`); the table is dropped afterwards. */
  schema?: string;
  /** Work started with the loaders and awaited inside the timed span (the bench's (a∥b): the raw read beside the load). */
  beside?: () => Promise<unknown>;
}

export interface PostgresIngestResult {
  method: 'json_populate_recordset';
  rows: number;
  chunks: number;
  concurrency: number;
  ms: number;
  rowsPerSec: number;
}

const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * `rows` as the chunks a delivery would load: `chunkRows` rows each, canonical JSONL (the
 * chunk codec), turned into the JSON array text the load statement takes. Values as the
 * source hands them over (src/ports/source.ts): times as ISO text, 64-bit ints as text.
 */
export function ingestChunks(
  columns: ReadonlyArray<{ name: string; type: string }>,
  rows: readonly TargetRow[],
  chunkRows: number,
): IngestChunks {
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new Error('chunkRows must be a positive integer');
  const names = columns.map((c) => c.name);
  const arrays: string[] = [];
  for (let i = 0; i < rows.length; i += chunkRows) {
    const jsonl = Buffer.from(encodeChunk(rows.slice(i, i + chunkRows), names)).toString('utf8');
    arrays.push(`[${jsonl.slice(0, -1).replaceAll('\n', ',')}]`);
  }
  return { columns, arrays, rows: rows.length };
}

export async function measurePostgresIngest(opts: PostgresIngestOptions): Promise<PostgresIngestResult> {
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be a positive integer');
  const { columns, arrays, rows } = opts.chunks;
  const table = `${q(opts.schema ?? 'public')}.${q(`bench_ingest_${randomBytes(6).toString('hex')}`)}`;
  const cols = columns.map((c) => q(c.name)).join(', ');
  const clients: pg.Client[] = [];
  try {
    for (let i = 0; i < concurrency; i++) {
      const client = new pg.Client({ connectionString: opts.connectionString });
      client.on('error', () => undefined);
      clients.push(client);
      await client.connect();
    }
    const [first] = clients as [pg.Client];
    await first.query(`CREATE TABLE ${table} (${columns.map((c) => `${q(c.name)} ${c.type}`).join(', ')})`);
    try {
      const insert = `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM json_populate_recordset(NULL::${table}, $1::json)`;
      let next = 0;
      let loaded = 0;
      const loader = async (client: pg.Client): Promise<void> => {
        while (next < arrays.length) {
          const chunk = arrays[next++] as string;
          const inserted = (await client.query(insert, [chunk])).rowCount ?? 0;
          loaded += inserted; // after the await: `loaded += await …` would read `loaded` before it
        }
      };
      const started = performance.now();
      await Promise.all([Promise.all(clients.map(loader)), opts.beside?.()]);
      const ms = performance.now() - started;
      if (loaded !== rows) throw new Error(`bench bug: loaded ${loaded} of ${rows} rows`);
      return {
        method: 'json_populate_recordset',
        rows: loaded,
        chunks: arrays.length,
        concurrency,
        ms,
        rowsPerSec: ms > 0 ? (loaded * 1000) / ms : 0,
      };
    } finally {
      await first.query(`DROP TABLE IF EXISTS ${table}`);
    }
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}
