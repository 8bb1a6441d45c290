import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { encodeChunk } from '../src/delivery/chunk-codec.js';
import { chunkCopyText } from '../src/domain/delivery/chunk-copy-text.js';
import { verifyChunkBytes } from '../src/domain/delivery/chunk-json.js';
import { sha256Hex } from '../src/domain/digest.js';
import type { TargetRow } from '../src/domain/delivery/target-types.js';

/**
 * Raw PostgreSQL ingest: the fastest bulk load the server offers, for the bench's
 * "delivery rows/s ÷ raw load rows/s" denominator. The rows go into a FRESH table (the
 * given columns and types, no key, no index: a plain heap, the cheapest thing to fill) on
 * the given server by `COPY … FROM STDIN` in text format, one COPY per chunk, each
 * chunk's COPY text prepared before any clock — the statement a chunk load runs, without
 * its stage recheck, DELETE, digest check, COPY-text rewrite or fault point. `concurrency`
 * loaders, each on its own connection, take the next chunk until none is left (a delivery
 * loads `max_concurrency` parts at once).
 *
 * Each chunk commits on its own (autocommit), as a chunk load does. Only the loading is
 * timed: connecting, CREATE TABLE and DROP TABLE are not.
 */
export interface IngestChunks {
  columns: ReadonlyArray<{ name: string; type: string }>;
  /** One COPY text per chunk (values tab-separated, one line per row). */
  texts: Buffer[];
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
  method: 'copy';
  rows: number;
  chunks: number;
  concurrency: number;
  ms: number;
  rowsPerSec: number;
}

const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * `rows` as the chunks a delivery would load: `chunkRows` rows each, canonical JSONL (the
 * chunk codec), turned into the COPY text a chunk load sends (the seq column dropped: the
 * raw table has none). Values as the source hands them over (src/ports/source.ts): times
 * as ISO text, 64-bit ints as text.
 */
export function ingestChunks(
  columns: ReadonlyArray<{ name: string; type: string }>,
  rows: readonly TargetRow[],
  chunkRows: number,
): IngestChunks {
  if (!Number.isSafeInteger(chunkRows) || chunkRows < 1) throw new Error('chunkRows must be a positive integer');
  const names = columns.map((c) => c.name);
  const texts: Buffer[] = [];
  for (let i = 0; i < rows.length; i += chunkRows) {
    const slice = rows.slice(i, i + chunkRows);
    const jsonl = encodeChunk(slice, names);
    const verified = verifyChunkBytes({ seq: 0, jsonl, sha256: sha256Hex(jsonl), rows: slice.length });
    const text = chunkCopyText(verified, { columns: names, jsonColumns: names.map(() => false) });
    if (!text) throw new Error('bench bug: the bench rows have no COPY text');
    texts.push(Buffer.from(text.toString('latin1').replaceAll('\t0\n', '\n'), 'latin1'));
  }
  return { columns, texts, rows: rows.length };
}

export async function measurePostgresIngest(opts: PostgresIngestOptions): Promise<PostgresIngestResult> {
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error('concurrency must be a positive integer');
  const { columns, texts, rows } = opts.chunks;
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
      const statement = `COPY ${table} (${cols}) FROM STDIN`;
      let next = 0;
      let loaded = 0;
      const loader = async (client: pg.Client): Promise<void> => {
        while (next < texts.length) {
          const text = texts[next++] as Buffer;
          const copy = client.query(copyFrom(statement));
          await pipeline(Readable.from([text]), copy);
          loaded += copy.rowCount;
        }
      };
      const started = performance.now();
      await Promise.all([Promise.all(clients.map(loader)), opts.beside?.()]);
      const ms = performance.now() - started;
      if (loaded !== rows) throw new Error(`bench bug: loaded ${loaded} of ${rows} rows`);
      return {
        method: 'copy',
        rows: loaded,
        chunks: texts.length,
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
