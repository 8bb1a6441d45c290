import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { chunkJsonArrayBytes } from '../../domain/delivery/chunk-json.js';
import { LoadCountMismatchError } from '../../domain/delivery/target-errors.js';
import { CHUNK_COLUMN } from '../../domain/delivery/target-rules.js';
import { PUBLICATION_CUT_POINTS } from '../../domain/publication/cut-points.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { LoadChunkRequest } from '../../ports/target.js';
import type { ChunkReceipt } from '../../domain/delivery/target-types.js';
import { effectFailure, quoteClickHouseTable, runCommand, selectRows, settingsClause } from './publication-sql.js';

/**
 * Loading one chunk into a ClickHouse stage, idempotently without transactions
 * (docs/rules.md#exchange-loading). The stage's bookkeeping: `_cutpoint_seq UInt32` (the
 * chunk seq) and `_cutpoint_chunk String` (the chunk's SHA-256), so a seq that holds rows
 * of another chunk is recognised exactly, not by a count.
 *
 * Measured on chdb 26.7.2.1:
 * - a MergeTree created with `non_replicated_deduplication_window` drops a repeated INSERT
 *   carrying the same `insert_deduplication_token` (the rows are there once);
 * - JSONEachRow reads ISO-8601 times with `date_time_input_format = 'best_effort'` and
 *   64-bit integers given as JSON strings; `input_format_skip_unknown_fields = 0` refuses
 *   an unknown key (Code 117); `input_format_null_as_default = 0` does NOT refuse a null
 *   for a non-Nullable column (it is stored as the default), which is why every stage
 *   column is Nullable (`stageColumnType`);
 * - the deduplication log outlives a DELETE of the rows: the same token after a DELETE is
 *   dropped again, so the load checks what landed and inserts once more without
 *   deduplication when an identical earlier load was deleted.
 */

export const CHUNK_DIGEST_COLUMN = '_cutpoint_chunk';
/** How many recent insert tokens a stage remembers (its MergeTree setting). */
export const STAGE_DEDUPLICATION_WINDOW = 100_000;

/** The stage's type for a target column: Nullable wherever ClickHouse allows it, so a null arrives as a null. */
export function stageColumnType(type: string): string {
  if (type.startsWith('Nullable(')) return type;
  if (type.startsWith('LowCardinality(')) {
    const inner = type.slice('LowCardinality('.length, -1);
    return inner.startsWith('Nullable(') ? type : `LowCardinality(Nullable(${inner}))`;
  }
  if (/^(Array|Map|Tuple|Nested|Object|JSON|Variant|Dynamic|AggregateFunction|SimpleAggregateFunction)\b/.test(type))
    return type;
  return `Nullable(${type})`;
}

/**
 * The chunk's canonical JSONL with the bookkeeping keys added to every line (bytes
 * spliced, no row decoded): each line is a JSON object ending in `}\n`, so
 * `,"_cutpoint_seq":N,"_cutpoint_chunk":"<sha>"` goes before its last `}`. Verified first
 * (`chunkJsonArrayBytes`: digest, UTF-8, final newline, line count).
 */
export function stageLines(request: LoadChunkRequest): Buffer {
  chunkJsonArrayBytes(request);
  const suffix = Buffer.from(`,"${CHUNK_COLUMN}":${request.seq},"${CHUNK_DIGEST_COLUMN}":"${request.sha256}"}\n`);
  const source = Buffer.from(request.jsonl.buffer, request.jsonl.byteOffset, request.jsonl.byteLength);
  const parts: Buffer[] = [];
  let start = 0;
  for (let at = source.indexOf(0x0a); at !== -1; at = source.indexOf(0x0a, at + 1)) {
    if (at === start || source[at - 1] !== 0x7d) throw new LoadCountMismatchError(request.seq, request.rows, -1);
    parts.push(source.subarray(start, at - 1), suffix);
    start = at + 1;
  }
  return Buffer.concat(parts);
}

interface SeqGroup {
  _cutpoint_chunk: string;
  _cutpoint_rows: string | number;
}

export async function loadStageChunk(
  client: ClickHouseClient,
  faults: FaultInjector,
  stage: { database: string; table: string },
  request: LoadChunkRequest,
  invocationId: string,
): Promise<ChunkReceipt> {
  const lines = stageLines(request);
  const table = quoteClickHouseTable(stage.database, stage.table);
  const cutPoint = PUBLICATION_CUT_POINTS.loadInsert;
  const groups = () =>
    selectRows<SeqGroup>(
      client,
      `SELECT ${CHUNK_DIGEST_COLUMN}, count() AS _cutpoint_rows FROM ${table} WHERE ${CHUNK_COLUMN} = {seq:UInt32} GROUP BY ${CHUNK_DIGEST_COLUMN}`,
      { seq: String(request.seq) },
    );
  const ours = (found: SeqGroup[]) => found.find((g) => g._cutpoint_chunk === request.sha256);
  const exact = (found: SeqGroup[]) =>
    found.length === (request.rows === 0 ? 0 : 1) && Number(ours(found)?._cutpoint_rows ?? 0) === request.rows;
  const receipt = { seq: request.seq, rows: request.rows, digest: request.sha256 };

  const before = await groups();
  if (exact(before)) return receipt;
  // Re-loading a seq replaces its rows: rows of another chunk (or a partial load) go first.
  const deleteSeq = `DELETE FROM ${table} WHERE ${CHUNK_COLUMN} = ${request.seq} ${settingsClause({ mutations_sync: 2, lightweight_deletes_sync: 2 })}`;
  if (before.length > 0) await effect(faults, cutPoint, () => runCommand(client, deleteSeq));
  if (request.rows === 0) return receipt;
  const insert = (deduplicate: boolean) => {
    const settings = settingsClause({
      ...(deduplicate
        ? { insert_deduplication_token: `${invocationId}:${request.seq}:${request.sha256}` }
        : { insert_deduplicate: 0 }),
      date_time_input_format: 'best_effort',
      input_format_skip_unknown_fields: 0,
      input_format_null_as_default: 0,
    });
    return effect(faults, cutPoint, async () => {
      const result = await client.exec({
        query: `INSERT INTO ${table} ${settings} FORMAT JSONEachRow`,
        values: Readable.from([lines]),
      });
      // Read to its end (the INSERT answers nothing): a destroyed response makes the client
      // log a socket warning on every load.
      await finished(result.stream.resume());
    });
  };
  await insert(true);
  let after = await groups();
  // Dropped as a repeat of an identical load whose rows were deleted since: load once more.
  if (after.length === 0) {
    await insert(false);
    after = await groups();
  }
  if (!exact(after)) {
    const counted = Number(ours(after)?._cutpoint_rows ?? 0);
    await effect(faults, cutPoint, () => runCommand(client, deleteSeq));
    throw new LoadCountMismatchError(request.seq, request.rows, counted);
  }
  return receipt;
}

async function effect(faults: FaultInjector, cutPoint: string, body: () => Promise<void>): Promise<void> {
  try {
    await faults.at(cutPoint, body);
  } catch (error) {
    throw effectFailure(cutPoint, error);
  }
}
