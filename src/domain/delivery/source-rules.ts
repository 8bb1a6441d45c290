import type {
  CountBucketsRequest,
  CountWindowRequest,
  JsonValue,
  SourceKey,
  SourceRelationRequest,
  StreamWindowRequest,
} from './source-types.js';
import type { TargetRow } from './target-types.js';
import { canonicalJson } from '../digest.js';
import { ValidationError } from '../errors.js';
import { isSqlIdentifier } from './identifiers.js';
import { MAX_CHUNK_ROWS } from './manifest-types.js';
import { validateSealedWindow, type SealedWindow } from './window.js';

/**
 * The pure parts of the delivery source's contract (src/ports/source.ts) that every adapter
 * shares: request checks before any I/O, the order columns and a row's source key. No I/O.
 */

/**
 * Validates a relation request before any I/O: table parts, time and key columns are SQL
 * identifiers, key columns are distinct (case-insensitively), a query is a non-empty
 * string. Throws `ValidationError` (`delivery.source_invalid`); messages never echo SQL
 * text and truncate names.
 */
export function assertSourceRelation(request: SourceRelationRequest): void {
  const { from, timeColumn, keyColumns } = request ?? ({} as SourceRelationRequest);
  if (!from || typeof from !== 'object') throw invalid('source relation is required');
  if (from.kind === 'table') {
    if (!from.table || !isSqlIdentifier(from.table.schema) || !isSqlIdentifier(from.table.name)) {
      throw invalid(`source table must be database.table, each part an SQL identifier: ${describeName(from.table)}`);
    }
  } else if (from.kind === 'query') {
    if (typeof from.sql !== 'string' || from.sql.trim() === '')
      throw invalid('source query must be a non-empty SELECT');
  } else {
    throw invalid('source relation kind must be table or query');
  }
  if (!isSqlIdentifier(timeColumn)) throw invalid(`time column must be an SQL identifier: ${shortText(timeColumn)}`);
  if (!Array.isArray(keyColumns) || keyColumns.length === 0) throw invalid('at least one key column is required');
  const seen = new Set<string>();
  for (const c of keyColumns) {
    if (!isSqlIdentifier(c)) throw invalid(`key column must be an SQL identifier: ${shortText(c)}`);
    if (seen.has(c.toLowerCase())) throw invalid(`key column ${c} is listed twice`);
    seen.add(c.toLowerCase());
  }
}

/** Relation checks plus the sealed window (canonical UTC, start < end). */
export function assertCountWindowRequest(request: CountWindowRequest): SealedWindow {
  assertSourceRelation(request);
  return validateSealedWindow(request.window, 'delivery.source_invalid');
}

/** The most buckets one `countBuckets` call counts. */
export const MAX_COUNT_BUCKETS = 4096;

/** Count checks plus `buckets` in [1, MAX_COUNT_BUCKETS]. */
export function assertCountBucketsRequest(request: CountBucketsRequest): SealedWindow {
  const window = assertCountWindowRequest(request);
  const n = request.buckets;
  if (!Number.isInteger(n) || n < 1 || n > MAX_COUNT_BUCKETS)
    throw invalid(`buckets must be an integer in [1, ${MAX_COUNT_BUCKETS}]`);
  return window;
}

/**
 * Count checks plus `chunkRows` in [1, MAX_CHUNK_ROWS], `firstSeq` a non-negative safe
 * integer, and a well-formed `resumeAfter`: `lastKey` holds one value per order column
 * (`orderColumnsOf`), `rowsAtLastKey` >= 1, `nextSeq` a non-negative safe integer. (Whether
 * each key value fits its column's type is checked by the adapter, after DESCRIBE and
 * before reading rows.)
 */
export function assertStreamWindowRequest(request: StreamWindowRequest): SealedWindow {
  const window = assertCountWindowRequest(request);
  const n = request.chunkRows;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CHUNK_ROWS)
    throw invalid(`chunkRows must be an integer in [1, ${MAX_CHUNK_ROWS}]`);
  if (request.chunkText !== undefined && !(Number.isSafeInteger(request.chunkText) && request.chunkText >= 1))
    throw invalid('chunkText must be a positive integer');
  if (request.firstSeq !== undefined && !isSeq(request.firstSeq))
    throw invalid('firstSeq must be a non-negative safe integer');
  const resume = request.resumeAfter;
  if (resume !== undefined) {
    if (!resume || typeof resume !== 'object') throw invalid('resumeAfter must be { lastKey, rowsAtLastKey, nextSeq }');
    const width = orderColumnsOf(request.timeColumn, request.keyColumns).length;
    if (!Array.isArray(resume.lastKey) || resume.lastKey.length !== width) {
      throw invalid(`resumeAfter.lastKey must hold ${width} values: the time column, then each key column`);
    }
    if (!Number.isSafeInteger(resume.rowsAtLastKey) || resume.rowsAtLastKey < 1)
      throw invalid('resumeAfter.rowsAtLastKey must be an integer >= 1');
    if (!isSeq(resume.nextSeq)) throw invalid('resumeAfter.nextSeq must be a non-negative safe integer');
  }
  return window;
}

function isSeq(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/**
 * The columns that order rows: the time column, then the key columns, each once (a key
 * column that is the time column is not repeated).
 */
export function orderColumnsOf(timeColumn: string, keyColumns: readonly string[]): string[] {
  return [timeColumn, ...keyColumns.filter((c) => c !== timeColumn)];
}

/** A row's source key: its order-column values, `[time, ...keys]`. */
export function sourceKeyOf(row: TargetRow, timeColumn: string, keyColumns: readonly string[]): SourceKey {
  return orderColumnsOf(timeColumn, keyColumns).map((c) => (row[c] ?? null) as JsonValue);
}

/** Canonical text of a source key, for equality tests. */
export function sourceKeyText(key: SourceKey): string {
  return canonicalJson(key);
}

function invalid(message: string): ValidationError {
  return new ValidationError('delivery.source_invalid', message);
}

function shortText(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

function describeName(table: unknown): string {
  if (!table || typeof table !== 'object') return '(missing)';
  const t = table as { schema?: unknown; name?: unknown };
  return `${shortText(t.schema)}.${shortText(t.name)}`;
}
