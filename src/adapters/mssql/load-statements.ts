import type { SeqRange, StagingRef } from '../../domain/delivery/target-types.js';
import { assertColumns, CHUNK_COLUMN } from '../../domain/delivery/target-rules.js';
import { StagingBindingChangedError } from '../../domain/delivery/target-errors.js';
import { openJsonColumnOf, type StageColumn } from './bulk-types.js';
import { BRACKETED_CHUNK, column, ownedCheck, PROLOGUE, qualified, stagingParams, type Statement } from './sql-text.js';

/** The SQL Server adapter's chunk loads and stage reads. */

/** A chunk ready for the load batch (chunk-json.ts builds it from the verified JSONL bytes). */
export interface ChunkJson {
  seq: number;
  columns: readonly string[];
  /** The JSONL lines as one JSON array: `[line1,line2,…]`. */
  json: string;
  rows: number;
}

/**
 * First request of a chunk load's transaction: recheck the exact stage, lock it
 * (TABLOCKX: loads of one stage run one at a time and a drop waits), recheck again under
 * the lock, and return the stage's columns (system types, aliases resolved) for the
 * OPENJSON mapping. Nothing is written: an unloadable column is refused before the load.
 */
export function prepareLoadBatch(staging: StagingRef): Statement {
  return {
    text: `${PROLOGUE}
${ownedCheck()}
DECLARE @locked int;
SELECT @locked = COUNT(*) FROM (SELECT TOP (1) 1 AS one FROM ${qualified(staging.table)} WITH (TABLOCKX, HOLDLOCK)) AS l;
${ownedCheck()}
SELECT c.name, TYPE_NAME(c.system_type_id) AS type_name, c.max_length, c.precision, c.scale, c.collation_name
  FROM sys.columns AS c
 WHERE c.object_id = @staging_object_id
 ORDER BY c.column_id;`,
    params: stagingParams(staging),
  };
}

/**
 * Second request, same transaction, the stage still locked: delete the seq's rows and
 * insert the chunk in ONE set-based statement, `@json` being the chunk's JSONL lines as one
 * JSON array, read by OPENJSON with each stage column's type (bulk-types.ts). It returns
 * the rows inserted; the adapter commits only when they equal the chunk's lines and rolls
 * the transaction back otherwise (`delivery.load_count_mismatch`, the delete undone too).
 */
export function loadChunkBatch(staging: StagingRef, chunk: ChunkJson, stageColumns: readonly StageColumn[]): Statement {
  const stage = qualified(staging.table);
  const names = assertColumns(chunk.columns);
  const byName = new Map(stageColumns.map((c) => [c.name, c]));
  if (!byName.has(CHUNK_COLUMN)) throw new StagingBindingChangedError(`the stage has no ${CHUNK_COLUMN} column`);
  const mapped = names.map((name, i) => {
    const col = byName.get(name);
    if (!col) throw new StagingBindingChangedError(`the stage has no column ${name}`);
    return openJsonColumnOf(col, i);
  });
  return {
    text: `${PROLOGUE}
DELETE FROM ${stage} WHERE ${BRACKETED_CHUNK} = @seq;
INSERT INTO ${stage} (${[...names.map(column), BRACKETED_CHUNK].join(', ')})
SELECT ${[...mapped.map((m) => m.select), '@seq'].join(', ')}
  FROM OPENJSON(@json) WITH (
    ${mapped.flatMap((m) => m.with).join(',\n    ')}
  ) AS j;
SELECT ROWCOUNT_BIG() AS inserted;`,
    params: [
      { name: 'seq', type: 'int', value: chunk.seq },
      { name: 'json', type: 'nvarchar', value: chunk.json },
    ],
  };
}

/** Committed rows per chunk seq of the exact stage; with `range`, only seqs in [from, to) (an index range seek). */
export function observeChunksBatch(staging: StagingRef, range?: SeqRange): Statement {
  const where = range ? ` WHERE ${BRACKETED_CHUNK} >= @seq_from AND ${BRACKETED_CHUNK} < @seq_to` : '';
  return {
    text: `${PROLOGUE}
${ownedCheck()}
SELECT ${BRACKETED_CHUNK} AS seq, COUNT_BIG(*) AS row_count FROM ${qualified(staging.table)} WITH (HOLDLOCK)${where} GROUP BY ${BRACKETED_CHUNK} ORDER BY ${BRACKETED_CHUNK};`,
    params: [...stagingParams(staging), ...seqRangeParams(range)],
  };
}

function seqRangeParams(range: SeqRange | undefined): Statement['params'] {
  return range
    ? [
        { name: 'seq_from', type: 'bigint' as const, value: range.from },
        { name: 'seq_to', type: 'bigint' as const, value: range.to },
      ]
    : [];
}

/** Counts for the quality probes; the adapter runs it in a transaction it rolls back. */
export function stagingFactsBatch(
  staging: StagingRef,
  keyColumns: readonly string[],
  notNull: readonly string[],
  range?: SeqRange,
): Statement {
  const stage = qualified(staging.table);
  const where = range ? ` WHERE ${BRACKETED_CHUNK} >= @seq_from AND ${BRACKETED_CHUNK} < @seq_to` : '';
  const nulls = notNull.map((c, i) => `, SUM(CASE WHEN ${column(c)} IS NULL THEN 1 ELSE 0 END) AS n${i}`).join('');
  const duplicates =
    keyColumns.length > 0
      ? `(SELECT COUNT_BIG(*) FROM (SELECT 1 AS one FROM ${stage}${where} GROUP BY ${keyColumns.map(column).join(', ')} HAVING COUNT_BIG(*) > 1) AS d)`
      : 'CAST(0 AS bigint)';
  return {
    text: `${PROLOGUE}
${ownedCheck()}
SELECT COUNT_BIG(*) AS row_count, ${duplicates} AS duplicate_keys${nulls} FROM ${stage} WITH (HOLDLOCK)${where};`,
    params: [...stagingParams(staging), ...seqRangeParams(range)],
  };
}
