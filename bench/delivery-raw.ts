import type { ClickHouseHandle } from '../src/adapters/clickhouse/client.js';
import { windowQuery } from '../src/adapters/clickhouse/source.js';
import type { SealedWindow } from '../src/domain/delivery/window.js';
import type { SourcePort } from '../src/ports/source.js';
import type { SourceRelationRequest } from '../src/domain/delivery/source-types.js';
import type { TargetRow } from '../src/domain/delivery/target-types.js';
import type { SliceFn } from './measure.js';
import { ingestChunks, measurePostgresIngest, type IngestChunks } from './postgres-ingest.js';

/**
 * The two raw sides a delivery is divided by, on the same engines as the delivery:
 *
 * (a) raw source read: the exact statement the source adapter's `streamWindow` issues for
 *     the window (`windowQuery`), streamed through the handle's `streamLines` (the path the
 *     adapter reads; on chdb a real block cursor, not the client's `ResultSet.stream()`,
 *     which materialises the whole result there), and every line JSON.parse'd into a row:
 *     reading a row means having it, not counting a newline.
 * (b) raw bulk load: the same window's rows, as the route's chunk_rows chunks in COPY
 *     text prepared beforehand, loaded into a fresh table on the same PostgreSQL server by
 *     `COPY … FROM STDIN` (postgres-ingest.ts) with `concurrency` loaders (the route's
 *     max_concurrency): the fastest ingest the sink offers, i.e. the sink's own bound.
 */

export function rawReadSlice(
  ch: ClickHouseHandle,
  relation: SourceRelationRequest,
  window: SealedWindow,
  expectedRows: number,
): SliceFn {
  const statement = windowQuery({ ...relation, window });
  return async () => {
    let n = 0;
    for await (const lines of ch.streamLines(statement)) {
      for (const line of lines) {
        JSON.parse(line);
        n++;
      }
    }
    if (n !== expectedRows)
      throw new Error(`bench bug: raw read of the window returned ${n} rows, expected ${expectedRows}`);
    return n;
  };
}

/**
 * The window's rows as the source adapter hands them to a delivery (its normalised
 * values), cut into chunks of `chunkRows` and encoded once: (b)'s input.
 */
export async function rawLoadChunks(
  source: SourcePort,
  relation: SourceRelationRequest,
  window: SealedWindow,
  chunkRows: number,
  columnTypes: Readonly<Record<string, string>>,
): Promise<IngestChunks> {
  const rows: TargetRow[] = [];
  let names: string[] | undefined;
  for await (const chunk of source.streamWindow({ ...relation, window, chunkRows })) {
    names ??= chunk.columns;
    for (const row of chunk.rows) rows.push(row);
  }
  if (!names) throw new Error('bench bug: the raw-load window is empty');
  const columns = names.map((name) => {
    const type = columnTypes[name];
    if (type === undefined) throw new Error(`bench bug: no PostgreSQL type for column ${name}`);
    return { name, type };
  });
  return ingestChunks(columns, rows, chunkRows);
}

/**
 * One bulk load of the prepared chunks per slice, timed by the ingest itself (not its table
 * setup). With `beside` ((a∥b)): the raw read runs at the same time on the same cores, and
 * the slice lasts until both are done — moving the window with no chunk object, digest,
 * journal or custody, the shared-core bound a delivery on this machine is compared with.
 */
export function rawLoadSlice(
  connectionString: string,
  chunks: IngestChunks,
  concurrency: number,
  schema: string,
  beside?: SliceFn,
): SliceFn {
  return async (round, slice) => {
    const result = await measurePostgresIngest({
      connectionString,
      chunks,
      concurrency,
      schema,
      ...(beside && { beside: () => beside(round, slice) }),
    });
    return { units: result.rows, ms: result.ms };
  };
}
