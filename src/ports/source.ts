import { canonicalJson } from '../domain/digest.js';
import { CutpointError, ValidationError } from '../domain/errors.js';
import { isSqlIdentifier } from '../domain/delivery/identifiers.js';
import { MAX_CHUNK_ROWS, type SourceRelation } from '../domain/delivery/manifest-types.js';
import { validateSealedWindow, type SealedWindow } from '../domain/delivery/window.js';
import type { TargetRow } from './target.js';

/**
 * The delivery source (issue 4): one sealed window of a ClickHouse relation, read as a
 * stream of chunks. Production talks HTTP to a ClickHouse server; locally the same
 * adapter runs on embedded chdb (see src/adapters/clickhouse/source.ts).
 *
 * Contract every adapter keeps:
 * - Rows are exactly those whose `timeColumn` lies in the half-open window
 *   [start, end), bound as query parameters (never interpolated).
 * - Rows come in ONE deterministic order: by (timeColumn, ...keyColumns), and rows that
 *   tie on that whole key by their canonical JSONL line. A re-extraction of the same
 *   (unchanged) window therefore yields the same chunks, byte for byte, under the same
 *   seqs — which is what lets recovery and audits compare SHA-256 digests.
 * - Chunks are cut as rows arrive: every chunk but the last holds exactly `chunkRows`
 *   rows, seqs are contiguous from `firstSeq` (default 0), and at most one chunk (plus one group of rows
 *   tied on the whole key) is held in memory. An empty window yields no chunks.
 * - Values are JSON values, normalised so they survive a JSONL round trip unchanged (so
 *   `chunkDigest` of the extracted rows equals `chunkDigest` of the rows re-read from the
 *   chunk object):
 *     - DateTime / DateTime64 → ISO-8601 UTC text with `Z`, with the column's own
 *       precision: `2026-11-01T10:00:00Z` (DateTime), `2026-11-01T10:00:00.123Z`
 *       (DateTime64(3)), `…00.123456Z` (DateTime64(6)). A column declared in another
 *       time zone is converted to UTC. Date / Date32 → `YYYY-MM-DD`.
 *     - 64-bit and wider integers and all Decimals → decimal text (`"18446744073709551615"`,
 *       `"12.5"`): exact, never a lossy JS number. Smaller integers and floats → JSON
 *       numbers; float NaN/±Inf → `"nan"`, `"inf"`, `"-inf"`.
 *     - Strings, UUID, IP, Enum → strings; Bool → true/false; NULL → null; Array → array;
 *       Tuple → object (named) or array; Map → object.
 *   Strings stay strings: nothing is re-parsed into a Date, BigInt or Buffer.
 * - Every identifier (database, table, time and key columns) is validated before any
 *   query, and quoted by the adapter. A `query` relation (one SELECT/WITH, checked by the
 *   manifest) is wrapped as a subquery and bounded outside it.
 */

/** A JSON value: what a source row's values are. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A row's position in the source order: `[time, ...keyColumns]` values, as in the row. */
export type SourceKey = JsonValue[];

export interface SourceColumn {
  name: string;
  /** The engine's own spelling of the type, e.g. `DateTime64(3, 'UTC')`, `Nullable(String)`. */
  type: string;
}

export interface SourceRelationRequest {
  from: SourceRelation;
  /** UTC time column; the window bounds it, half-open. An SQL identifier. */
  timeColumn: string;
  /** The business key; with the time column it orders rows. At least one SQL identifier. */
  keyColumns: string[];
}

export interface CountWindowRequest extends SourceRelationRequest {
  window: SealedWindow;
  signal?: AbortSignal;
}

export interface StreamWindowRequest extends CountWindowRequest {
  /** Rows per chunk: 1..MAX_CHUNK_ROWS. */
  chunkRows: number;
  /**
   * Resume a part after its last journaled chunk instead of from its first row: rows up to
   * and including position `lastKey` (the `sourceKeyOf` of the last row already chunked)
   * are skipped server-side (a keyset `(time, keys) >= lastKey`, never OFFSET), then the
   * first `rowsAtLastKey` rows tied on exactly `lastKey` are skipped too, and the first
   * chunk emitted carries seq `nextSeq`. Without it, seqs start at `firstSeq` (default 0).
   */
  resumeAfter?: ResumePosition;
  /** Seq of the first chunk when not resuming (a part's seqs start at `chunkSeqOf(part, 0)`). */
  firstSeq?: number;
}

/**
 * Where a resumed stream starts. The read must find at least `rowsAtLastKey` rows tied on
 * `lastKey` (they are in the sealed window, which never changes); fewer means the source
 * changed under the window: `delivery.source_resume_mismatch` (ValidationError).
 */
export interface ResumePosition {
  lastKey: SourceKey;
  /** Rows whose whole order key equals `lastKey` that were already chunked (>= 1). */
  rowsAtLastKey: number;
  nextSeq: number;
}

export interface CountBucketsRequest extends CountWindowRequest {
  /** The window [start, end) is cut into this many equal time buckets (1..4096, the last one ends at `end`). */
  buckets: number;
}

/** Rows per time bucket, every bucket listed (zero counts too), in time order. */
export interface BucketCount {
  /** Canonical ISO UTC instants, half-open [start, end). */
  start: string;
  end: string;
  rows: number;
}

export interface SourceChunk {
  /** Contiguous from the request's `firstSeq` (default 0) or `resumeAfter.nextSeq`. */
  seq: number;
  /** The relation's columns in output order; every row has exactly these keys, in this order. */
  columns: string[];
  /** 1..chunkRows rows, in source order. */
  rows: TargetRow[];
  /** `sourceKeyOf` the first and the last row. */
  firstKey: SourceKey;
  lastKey: SourceKey;
}

export interface SourcePort {
  /** Output columns of the relation, in order, without reading rows. */
  describe(request: SourceRelationRequest): Promise<SourceColumn[]>;
  /**
   * The window's rows as chunks (see the contract above). Validation errors are thrown
   * before any query; the query itself starts on the first `next()`. Breaking out of the
   * iteration cancels the query.
   */
  streamWindow(request: StreamWindowRequest): AsyncIterable<SourceChunk>;
  /** Rows in the window, for the quality probes and the bench. */
  countWindow(request: CountWindowRequest): Promise<number>;
  /**
   * Rows per equal time bucket of the window (one GROUP BY, read-only): what begin sizes
   * the window's parts from (src/domain/delivery/parts.ts `planParts`).
   */
  countBuckets(request: CountBucketsRequest): Promise<BucketCount[]>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------
// Errors with stable names and codes

/** A source call while the fence is armed: recovery must never open ClickHouse. */
export class SourceForbiddenError extends CutpointError {
  readonly method: string;
  constructor(method: string) {
    super('Delivery.SourceForbidden', 'delivery.source_forbidden', `source ${method} refused: recovery never reads the source`);
    this.method = method;
  }
}

/** The source could not be reached, refused the query, or broke off mid-stream. */
export class SourceUnavailableError extends CutpointError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('Delivery.SourceUnavailable', 'delivery.source_unavailable', detail, options);
  }
}

// ---------------------------------------------------------------------------------------
// Pure parts of the contract shared by every adapter

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
    if (typeof from.sql !== 'string' || from.sql.trim() === '') throw invalid('source query must be a non-empty SELECT');
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
  if (!Number.isInteger(n) || n < 1 || n > MAX_COUNT_BUCKETS) throw invalid(`buckets must be an integer in [1, ${MAX_COUNT_BUCKETS}]`);
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
  if (!Number.isInteger(n) || n < 1 || n > MAX_CHUNK_ROWS) throw invalid(`chunkRows must be an integer in [1, ${MAX_CHUNK_ROWS}]`);
  if (request.firstSeq !== undefined && !isSeq(request.firstSeq)) throw invalid('firstSeq must be a non-negative safe integer');
  const resume = request.resumeAfter;
  if (resume !== undefined) {
    if (!resume || typeof resume !== 'object') throw invalid('resumeAfter must be { lastKey, rowsAtLastKey, nextSeq }');
    const width = orderColumnsOf(request.timeColumn, request.keyColumns).length;
    if (!Array.isArray(resume.lastKey) || resume.lastKey.length !== width) {
      throw invalid(`resumeAfter.lastKey must hold ${width} values: the time column, then each key column`);
    }
    if (!Number.isSafeInteger(resume.rowsAtLastKey) || resume.rowsAtLastKey < 1) throw invalid('resumeAfter.rowsAtLastKey must be an integer >= 1');
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

// ---------------------------------------------------------------------------------------
// The recovery fence

export type SourceMethod = 'describe' | 'streamWindow' | 'countWindow' | 'countBuckets';

export interface SourceAttempt {
  method: SourceMethod;
  /** True when the fence refused the call (it was armed). */
  refused: boolean;
}

/** A source behind a fence, with a record of every call made through it. */
export interface GuardedSource extends SourcePort {
  /** Every describe/streamWindow/countWindow/countBuckets call (and every iteration step refused), in order. */
  readonly attempts: readonly SourceAttempt[];
  /** Number of refused calls: a recovery test asserts this and `attempts.length` are 0. */
  readonly refusals: number;
}

/**
 * Wraps a source so that, while `armed()` is true, every call throws
 * `SourceForbiddenError` (`Delivery.SourceForbidden`, code `delivery.source_forbidden`)
 * without reaching the source. Recovery flows wrap their source armed: they restore the
 * sealed window and contiguous receipts from the journal and must never query ClickHouse.
 *
 * `streamWindow` is checked when called (it throws at once rather than returning an
 * iterable) and again before every step of an iteration, so an iterable obtained earlier
 * cannot be drained while the fence is armed. `close()` always passes through: closing
 * opens nothing.
 */
export function guardedSource(source: SourcePort, armed: () => boolean): GuardedSource {
  const attempts: SourceAttempt[] = [];
  let refusals = 0;
  const enter = (method: SourceMethod): void => {
    const refused = armed();
    attempts.push({ method, refused });
    if (refused) {
      refusals++;
      throw new SourceForbiddenError(method);
    }
  };
  return {
    get attempts() {
      return attempts;
    },
    get refusals() {
      return refusals;
    },
    async describe(request) {
      enter('describe');
      return source.describe(request);
    },
    async countWindow(request) {
      enter('countWindow');
      return source.countWindow(request);
    },
    async countBuckets(request) {
      enter('countBuckets');
      return source.countBuckets(request);
    },
    streamWindow(request) {
      enter('streamWindow');
      const inner = source.streamWindow(request);
      return {
        [Symbol.asyncIterator](): AsyncIterator<SourceChunk> {
          let iterator: AsyncIterator<SourceChunk> | undefined;
          return {
            async next() {
              if (armed()) {
                attempts.push({ method: 'streamWindow', refused: true });
                refusals++;
                // Stop the inner iteration (and its query) if one was started.
                await iterator?.return?.();
                throw new SourceForbiddenError('streamWindow');
              }
              iterator ??= inner[Symbol.asyncIterator]();
              return iterator.next();
            },
            async return(value?: unknown) {
              await iterator?.return?.();
              return { done: true, value: value as SourceChunk };
            },
          };
        },
      };
    },
    close() {
      return source.close();
    },
  };
}

/** A source for flows that hold no source at all (recovery): every call is refused. */
export function forbiddenSource(): GuardedSource {
  const never = (): never => {
    throw new SourceForbiddenError('call');
  };
  return guardedSource(
    { describe: never, streamWindow: never, countWindow: never, countBuckets: never, close: async () => {} },
    () => true,
  );
}
