import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { chunkCopyText } from '../../domain/delivery/chunk-copy-text.js';
import { chunkJsonArrayBytes, type VerifiedChunk } from '../../domain/delivery/chunk-json.js';
import { LoadCountMismatchError } from '../../domain/delivery/target-errors.js';
import type { LoadChunkRequest } from '../../ports/target.js';
import { advisoryLock, recheckLocked, type Client } from './locks.js';
import { JSON_COLUMNS, loadChunkStatement, QUOTED_CHUNK, quoteColumn, quoteTable } from './sql.js';

/** How a chunk went in: COPY text, or json_populate_recordset where COPY text cannot say the same (chunk-copy-text.ts). */
export type ChunkLoadMethod = 'copy' | 'json_populate_recordset';

/**
 * The body of a chunk load, inside the receipt transaction: the seq's earlier rows
 * deleted and the chunk's rows inserted, committed together (the caller commits at
 * `target.load.chunk`). Returns the rows the server inserted; a count other than
 * `request.rows` refuses the load (Cutpoint.LoadCountMismatch) before the commit.
 *
 * The rows go in by `COPY … FROM STDIN` (text format), PostgreSQL's fastest ingest: the
 * chunk's verified bytes rewritten once as COPY text, no row decoded in JS. The stage's
 * column types decide how a value is spelled (json/jsonb columns take JSON text); the
 * lookup runs under the stage lock, so the types cannot change before the COPY. A chunk
 * COPY text cannot carry with the same meaning goes in by `json_populate_recordset`, and
 * so does every chunk on a server without COPY's sub-protocol (`copyIngest`).
 */
export async function loadChunkBody(
  client: Client,
  request: LoadChunkRequest,
  columns: readonly string[],
  chunk: VerifiedChunk,
  server: { copy: boolean },
): Promise<{ rows: number; method: ChunkLoadMethod }> {
  const { staging, seq } = request;
  // Loads of different seqs run in parallel (a part per worker); two loads of the same
  // seq (a retry racing a stalled attempt) run one after the other, so the second's
  // DELETE sees the first's rows. ROW EXCLUSIVE on the stage: a drop and a publication
  // (SHARE) wait for the loads in flight, and they for them.
  await advisoryLock(client, `cutpoint.load:${staging.table.schema}.${staging.table.table}#${seq}`);
  await recheckLocked(client, staging, 'ROW EXCLUSIVE');
  let text: Buffer | undefined;
  if (server.copy) {
    const json = await client.query<{ name: string }>(JSON_COLUMNS, [staging.objectId, columns]);
    const jsonNames = new Set(json.rows.map((r) => r.name));
    text = chunkCopyText(chunk, { columns, jsonColumns: columns.map((c) => jsonNames.has(c)) });
  }
  let rows: number;
  let method: ChunkLoadMethod;
  if (text) {
    const table = quoteTable(staging.table);
    await client.query(`DELETE FROM ${table} WHERE ${QUOTED_CHUNK} = $1::integer`, [seq]);
    const copy = client.query(
      copyFrom(`COPY ${table} (${[...columns.map(quoteColumn), QUOTED_CHUNK].join(', ')}) FROM STDIN`),
    );
    await pipeline(Readable.from(slices(text)), copy);
    rows = copy.rowCount;
    method = 'copy';
  } else {
    // DELETE of the seq's earlier rows and INSERT of the chunk: one statement.
    const inserted = await client.query(loadChunkStatement(staging.table, columns), [seq, chunkJsonArrayBytes(chunk)]);
    rows = inserted.rowCount ?? -1;
    method = 'json_populate_recordset';
  }
  if (rows !== request.rows) throw new LoadCountMismatchError(seq, request.rows, rows);
  return { rows, method };
}

/**
 * Whether the server takes `COPY … FROM STDIN`: every PostgreSQL does, but PGlite served
 * over the wire (the local fallback engine, src/adapters/postgres/pglite-server.ts) loses
 * protocol synchronisation on it, so there the loads keep to `json_populate_recordset`.
 */
export async function copyIngest(client: Client): Promise<boolean> {
  const result = await client.query<{ pglite: boolean }>(`SELECT pg_catalog.version() LIKE '%(PGlite %' AS pglite`);
  return result.rows[0]?.pglite !== true;
}

/** One CopyData message per MiB: a chunk's text may pass PostgreSQL's 1 GB message limit. */
const COPY_SLICE = 1024 * 1024;

function* slices(text: Buffer): Generator<Buffer> {
  for (let at = 0; at < text.byteLength; at += COPY_SLICE) yield text.subarray(at, at + COPY_SLICE);
}
