import type { ClickHouseClient, ResultSet } from '@clickhouse/client';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import { isSqlIdentifier } from '../../domain/delivery/identifiers.js';
import type { BucketCount, SourceChunk, SourceColumn, SourcePort } from '../../ports/source.js';
import type {
  CountBucketsRequest,
  CountWindowRequest,
  SourceRelationRequest,
  StreamWindowRequest,
} from '../../domain/delivery/source-types.js';
import { SourceUnavailableError } from '../../domain/delivery/source-errors.js';
import { assertSourceRelation, assertStreamWindowRequest, orderColumnsOf } from '../../domain/delivery/source-rules.js';
import type { ClickHouseHandle } from './client.js';
import { chunksOf } from './source-chunks.js';
import {
  bucketQuery,
  countQuery,
  describeQuery,
  KeyValueError,
  keysetBound,
  unwrapType,
  windowParams,
  windowQuery,
  type KeysetBound,
  type WindowQuery,
} from './source-sql.js';

export { MIN_TIED_ROWS_LIMIT } from './source-chunks.js';
export { bucketQuery, countQuery, windowQuery, type WindowQuery } from './source-sql.js';

/**
 * The delivery source on ClickHouse, through the official `@clickhouse/client` (HTTP in
 * production, embedded chdb locally — see client.ts). The contract is in
 * src/ports/source.ts; how this adapter keeps it:
 *
 * - SQL (source-sql.ts): identifiers validated and quoted, every value a typed query
 *   parameter; output as JSONEachRow under a query-level SETTINGS clause (applies to that
 *   one query, also on a shared embedded session) that pins every format choice the value
 *   representation depends on: ISO UTC times, quoted 64-bit integers and decimals, quoted
 *   NaN/Inf, validated UTF-8.
 * - Schema first: `DESCRIBE` of the bounded relation gives the output columns without
 *   reading rows; the time column must be Date/DateTime-typed, the key columns must
 *   exist, and every column must be an SQL identifier (the target copies the names).
 * - Streaming: the window read goes through the handle's `streamLines` (HTTP:
 *   `ResultSet.stream()`; embedded: chdb's own block cursor), and rows are cut into chunks
 *   as they arrive (source-chunks.ts). Memory is one chunk of parsed rows, one tie group
 *   and one engine block, never the window.
 * - Resume: the read starts server-side at the keyset `(time, keys) >= lastKey`
 *   (`keysetBound`, parameters typed like the columns), then drops the rows tied on
 *   `lastKey` that were already chunked.
 * - Buckets: one GROUP BY over the window computes each row's bucket server-side
 *   (`bucketQuery`); every bucket of `bucketsOf` is returned, zeros included.
 */

export interface ClickHouseSourceOptions {
  /** Close the ClickHouse handle when the source closes. Default true. */
  closeHandle?: boolean;
}

export function createClickHouseSource(handle: ClickHouseHandle, options: ClickHouseSourceOptions = {}): SourcePort {
  return new ClickHouseSource(handle, options.closeHandle ?? true);
}

const TIME_TYPE = /^(?:Date|Date32|DateTime|DateTime64)(?:\(.*\))?$/;

class ClickHouseSource implements SourcePort {
  private readonly client: ClickHouseClient;

  constructor(
    private readonly handle: ClickHouseHandle,
    private readonly closeHandle: boolean,
  ) {
    this.client = handle.client;
  }

  async describe(request: SourceRelationRequest): Promise<SourceColumn[]> {
    assertSourceRelation(request);
    // Any window will do: the parameters only have to be bound for a query that uses them.
    return this.describeChecked(
      request,
      windowParams({ start: '1970-01-01T00:00:00.000Z', end: '1970-01-01T00:00:00.001Z' }),
      undefined,
    );
  }

  async countWindow(request: CountWindowRequest): Promise<number> {
    const statement = countQuery(request);
    await this.describeChecked(request, statement.query_params, request.signal);
    const rows = await this.run(statement, request.signal, 'count', (rs) => rs.json<{ n: string | number }>());
    const n = Number(rows[0]?.n);
    if (rows.length !== 1 || !Number.isSafeInteger(n) || n < 0)
      throw new SourceUnavailableError('source count returned no usable number');
    return n;
  }

  async countBuckets(request: CountBucketsRequest): Promise<BucketCount[]> {
    const statement = bucketQuery(request);
    await this.describeChecked(request, statement.query_params, request.signal);
    const rows = await this.run(statement, request.signal, 'bucket count', (rs) =>
      rs.json<{ bucket: string | number; n: string | number }>(),
    );
    const counts = statement.buckets.map((b) => ({ start: b.start, end: b.end, rows: 0 }));
    for (const row of rows) {
      const i = Number(row.bucket);
      const n = Number(row.n);
      const bucket = counts[i];
      if (!Number.isSafeInteger(i) || !bucket || bucket.rows !== 0 || !Number.isSafeInteger(n) || n < 1) {
        throw new SourceUnavailableError('source bucket count returned an unusable row');
      }
      bucket.rows = n;
    }
    return counts;
  }

  streamWindow(request: StreamWindowRequest): AsyncIterable<SourceChunk> {
    // Everything that can be refused without the schema is refused here, before any query.
    assertStreamWindowRequest(request);
    // A snapshot: the iteration starts later and must read what was validated.
    const resume = request.resumeAfter;
    const frozen: StreamWindowRequest = {
      from:
        request.from.kind === 'table'
          ? { kind: 'table', table: { ...request.from.table } }
          : { kind: 'query', sql: request.from.sql },
      timeColumn: request.timeColumn,
      keyColumns: [...request.keyColumns],
      window: { start: request.window.start, end: request.window.end },
      chunkRows: request.chunkRows,
      ...(request.chunkText !== undefined ? { chunkText: request.chunkText } : {}),
      ...(request.firstSeq !== undefined ? { firstSeq: request.firstSeq } : {}),
      ...(resume
        ? {
            resumeAfter: {
              lastKey: structuredClone(resume.lastKey),
              rowsAtLastKey: resume.rowsAtLastKey,
              nextSeq: resume.nextSeq,
            },
          }
        : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    };
    return this.chunks(frozen);
  }

  async close(): Promise<void> {
    if (this.closeHandle) await this.handle.close();
  }

  private async *chunks(request: StreamWindowRequest): AsyncGenerator<SourceChunk> {
    const described = await this.describeChecked(request, windowQuery(request).query_params, request.signal);
    const resume = request.resumeAfter;
    let after: KeysetBound | undefined;
    if (resume) {
      try {
        after = keysetBound(described, orderColumnsOf(request.timeColumn, request.keyColumns), resume.lastKey);
      } catch (error) {
        if (!(error instanceof KeyValueError)) throw error;
        throw new ValidationError('delivery.source_invalid', `resumeAfter.lastKey: ${error.message}`);
      }
    }
    const statement = windowQuery(request, after);
    try {
      yield* chunksOf(this.handle.streamLines(statement, request.signal), {
        columns: described.map((c) => c.name),
        timeColumn: request.timeColumn,
        keyColumns: request.keyColumns,
        chunkRows: request.chunkRows,
        ...(request.chunkText !== undefined ? { chunkText: request.chunkText } : {}),
        firstSeq: resume ? resume.nextSeq : (request.firstSeq ?? 0),
        ...(resume ? { resume } : {}),
      });
    } catch (error) {
      throw asSourceError(error, 'window read');
    }
  }

  /** DESCRIBE of the bounded relation, checked against the request. */
  private async describeChecked(
    request: SourceRelationRequest,
    params: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<SourceColumn[]> {
    const rows = await this.run(describeQuery(request, params), signal, 'describe', (rs) =>
      rs.json<{ name: string; type: string }>(),
    ).catch((error: unknown) => {
      throw missingRelation(error, request) ?? error;
    });
    const columns = rows.map((r) => ({ name: String(r.name), type: String(r.type) }));
    for (const c of columns) {
      if (!isSqlIdentifier(c.name) || c.name === '__proto__') {
        throw schemaInvalid(
          `source column ${JSON.stringify(c.name.slice(0, 64))} is not an SQL identifier; alias it in the query`,
        );
      }
    }
    const byName = new Map(columns.map((c) => [c.name, c]));
    const time = byName.get(request.timeColumn);
    if (!time) throw schemaInvalid(`source has no time column ${request.timeColumn}`);
    if (!TIME_TYPE.test(unwrapType(time.type).base)) {
      throw schemaInvalid(`time column ${request.timeColumn} must be Date, DateTime or DateTime64, not ${time.type}`);
    }
    for (const k of request.keyColumns) if (!byName.has(k)) throw schemaInvalid(`source has no key column ${k}`);
    return columns;
  }

  /** A small read through the client (describe, counts): its whole result is a few rows. */
  private async run<T>(
    statement: WindowQuery,
    signal: AbortSignal | undefined,
    what: string,
    read: (rs: ResultSet<'JSONEachRow'>) => Promise<T>,
  ): Promise<T> {
    try {
      const rs = await this.client.query({
        query: statement.query,
        format: 'JSONEachRow',
        ...(Object.keys(statement.query_params).length > 0 ? { query_params: statement.query_params } : {}),
        ...(signal ? { abort_signal: signal } : {}),
      });
      return await read(rs);
    } catch (error) {
      throw asSourceError(error, what);
    }
  }
}

/** ClickHouse's UNKNOWN_TABLE (60) and UNKNOWN_DATABASE (81), as a source error's cause. */
const MISSING_RELATION_CODES = new Set(['60', '81']);

/**
 * A relation that does not exist is the route's configuration, not an outage:
 * `delivery.source_table_missing`, naming the table (never a connection setting).
 */
function missingRelation(error: unknown, request: SourceRelationRequest): ValidationError | undefined {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof code !== 'string' || !MISSING_RELATION_CODES.has(code)) return undefined;
  const { from } = request;
  return new ValidationError(
    'delivery.source_table_missing',
    from.kind === 'table'
      ? `source table ${from.table.schema}.${from.table.name} does not exist in ClickHouse${code === '81' ? ` (no database ${from.table.schema})` : ''}`
      : 'a table the source query reads does not exist in ClickHouse',
  );
}

function schemaInvalid(message: string): ValidationError {
  return new ValidationError('delivery.source_schema_invalid', message);
}

/**
 * Our own errors pass through; anything else (a ClickHouse error, a socket error, an
 * abort) becomes `SourceUnavailableError`. ClickHouse messages name objects, not
 * credentials; a URL with user info is still scrubbed in case a transport error quotes one.
 */
function asSourceError(error: unknown, what: string): Error {
  if (error instanceof CutpointError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const scrubbed = message.replace(/\/\/[^/\s@]*@/g, '//***@').slice(0, 500);
  return new SourceUnavailableError(`source ${what} failed: ${scrubbed}`, { cause: error });
}
