// Longer than ~300 lines: one SourcePort implementation over one driver (describe, count,
// stream with its recovery fence and error classification); its parts share the client and
// the query text, and src/adapters/clickhouse/client.ts already holds the connection.
import type { ClickHouseClient, ResultSet, Row } from '@clickhouse/client';
import { canonicalJson } from '../../domain/digest.js';
import { CutpointError, ValidationError } from '../../domain/errors.js';
import { isSqlIdentifier } from '../../domain/delivery/identifiers.js';
import type { SealedWindow } from '../../domain/delivery/window.js';
import {
  assertCountWindowRequest,
  assertSourceRelation,
  assertStreamWindowRequest,
  orderColumnsOf,
  sourceKeyOf,
  sourceKeyText,
  SourceUnavailableError,
  type CountWindowRequest,
  type SourceChunk,
  type SourceColumn,
  type SourcePort,
  type SourceRelationRequest,
  type StreamWindowRequest,
} from '../../ports/source.js';
import type { TargetRow } from '../../ports/target.js';
import { dateTime64Param, type ClickHouseHandle } from './client.js';

/**
 * The delivery source on ClickHouse, through the official `@clickhouse/client` (HTTP in
 * production, embedded chdb locally — see client.ts). The contract is in
 * src/ports/source.ts; how this adapter keeps it:
 *
 * - SQL: identifiers are validated (`assertSourceRelation`) and quoted with backticks; the
 *   window bounds are the query parameters `{cutpoint_window_start:DateTime64(3)}` and
 *   `{cutpoint_window_end:DateTime64(3)}` (`dateTime64Param`, in the client's UTC
 *   session); nothing else is spliced in. A `query` relation is wrapped on lines of its
 *   own (`SELECT * FROM (\n<sql>\n) AS cutpoint_source WHERE …`) so a trailing `--`
 *   comment cannot swallow the bound. An authored query may itself use the two window
 *   parameters, e.g. to push the bound into a join.
 * - Output: JSONEachRow under a query-level SETTINGS clause (applies to that one query,
 *   also on a shared embedded session) that pins every format choice the value
 *   representation depends on: ISO UTC times, quoted 64-bit integers and decimals,
 *   quoted NaN/Inf, validated UTF-8.
 * - Schema first: `DESCRIBE` of the bounded relation gives the output columns without
 *   reading rows; the time column must be Date/DateTime-typed, the key columns must
 *   exist, and every column must be an SQL identifier (the target copies the names).
 * - Streaming: `ResultSet.stream()` rows are parsed one at a time and cut into chunks as
 *   they arrive; a chunk is yielded as soon as it is full. Over HTTP nothing else holds
 *   the window: memory is one chunk plus one tie group plus the client's socket buffers.
 *   (Embedded chdb's connection materialises each result in native memory before the
 *   client sees it — a chdb limitation that production does not share; this adapter
 *   still holds only one chunk of parsed rows.)
 * - Ties: rows equal on (time, keys) are adjacent in the ClickHouse order; the adapter
 *   holds such a group (at most `max(chunkRows, 10000)` rows, else
 *   `delivery.source_order_ambiguous`) and emits it sorted by the canonical JSON of its
 *   values, so even duplicate keys re-extract identically.
 */

const START_PARAM = 'cutpoint_window_start';
const END_PARAM = 'cutpoint_window_end';
/** Floor of the tie-group limit: a group larger than this and than a chunk is refused. */
export const MIN_TIED_ROWS_LIMIT = 10_000;

/** Every output-format setting the row representation depends on, pinned per query. */
const OUTPUT_SETTINGS = [
  "date_time_output_format = 'iso'",
  'output_format_json_quote_64bit_integers = 1',
  'output_format_json_quote_64bit_floats = 0',
  'output_format_json_quote_decimals = 1',
  'output_format_json_quote_denormals = 1',
  'output_format_decimal_trailing_zeros = 0',
  'output_format_json_validate_utf8 = 1',
  'output_format_json_named_tuples_as_objects = 1',
].join(', ');

const TIME_TYPE = /^(?:Date|Date32|DateTime|DateTime64)(?:\(.*\))?$/;

export interface ClickHouseSourceOptions {
  /** Close the ClickHouse handle when the source closes. Default true. */
  closeHandle?: boolean;
}

export interface WindowQuery {
  query: string;
  query_params: Record<string, string>;
}

export function createClickHouseSource(handle: ClickHouseHandle, options: ClickHouseSourceOptions = {}): SourcePort {
  return new ClickHouseSource(handle, options.closeHandle ?? true);
}

/** The quoted relation a request reads from (validated). */
function relationSql(request: SourceRelationRequest): string {
  const { from } = request;
  return from.kind === 'table' ? `${quote(from.table.schema)}.${quote(from.table.name)}` : `(\n${from.sql}\n) AS cutpoint_source`;
}

function quote(identifier: string): string {
  // Validated before we get here; checked again so no path can quote anything else.
  if (!isSqlIdentifier(identifier)) throw new ValidationError('delivery.source_invalid', 'identifier is not an SQL identifier');
  return `\`${identifier}\``;
}

function windowParams(window: SealedWindow): Record<string, string> {
  return { [START_PARAM]: dateTime64Param(new Date(window.start)), [END_PARAM]: dateTime64Param(new Date(window.end)) };
}

function windowPredicate(timeColumn: string): string {
  const t = quote(timeColumn);
  return `${t} >= {${START_PARAM}:DateTime64(3)} AND ${t} < {${END_PARAM}:DateTime64(3)}`;
}

/**
 * The exact statement `streamWindow` runs for a request (validated first), for the bench
 * to time a raw read of the same window and for tests to show values are parameters.
 */
export function windowQuery(request: CountWindowRequest): WindowQuery {
  const window = assertCountWindowRequest(request);
  const order = orderColumnsOf(request.timeColumn, request.keyColumns).map(quote).join(', ');
  return {
    query: `SELECT * FROM ${relationSql(request)} WHERE ${windowPredicate(request.timeColumn)} ORDER BY ${order} SETTINGS ${OUTPUT_SETTINGS}`,
    query_params: windowParams(window),
  };
}

/** The statement `countWindow` runs. */
export function countQuery(request: CountWindowRequest): WindowQuery {
  const window = assertCountWindowRequest(request);
  return {
    query: `SELECT count() AS n FROM ${relationSql(request)} WHERE ${windowPredicate(request.timeColumn)} SETTINGS ${OUTPUT_SETTINGS}`,
    query_params: windowParams(window),
  };
}

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
    return this.describeChecked(request, windowParams({ start: '1970-01-01T00:00:00.000Z', end: '1970-01-01T00:00:00.001Z' }), undefined);
  }

  async countWindow(request: CountWindowRequest): Promise<number> {
    const statement = countQuery(request);
    await this.describeChecked(request, statement.query_params, request.signal);
    const rows = await this.run(statement, request.signal, 'count', (rs) => rs.json<{ n: string | number }>());
    const n = Number(rows[0]?.n);
    if (rows.length !== 1 || !Number.isSafeInteger(n) || n < 0) throw new SourceUnavailableError('source count returned no usable number');
    return n;
  }

  streamWindow(request: StreamWindowRequest): AsyncIterable<SourceChunk> {
    // Everything that can be refused is refused here, before any query.
    assertStreamWindowRequest(request);
    // A snapshot: the iteration starts later and must read what was validated.
    const frozen: StreamWindowRequest = {
      from: request.from.kind === 'table' ? { kind: 'table', table: { ...request.from.table } } : { kind: 'query', sql: request.from.sql },
      timeColumn: request.timeColumn,
      keyColumns: [...request.keyColumns],
      window: { start: request.window.start, end: request.window.end },
      chunkRows: request.chunkRows,
      ...(request.signal ? { signal: request.signal } : {}),
    };
    return this.chunks(frozen, windowQuery(frozen));
  }

  async close(): Promise<void> {
    if (this.closeHandle) await this.handle.close();
  }

  private async *chunks(request: StreamWindowRequest, statement: WindowQuery): AsyncGenerator<SourceChunk> {
    const columns = (await this.describeChecked(request, statement.query_params, request.signal)).map((c) => c.name);
    const { timeColumn, keyColumns, chunkRows } = request;
    const tiedLimit = Math.max(chunkRows, MIN_TIED_ROWS_LIMIT);
    const resultSet = await this.run(statement, request.signal, 'window', async (rs) => rs);
    let seq = 0;
    let current: TargetRow[] = [];
    let group: TargetRow[] = [];
    let groupKey = '';
    const chunk = (): SourceChunk => {
      const rows = current;
      current = [];
      return {
        seq: seq++,
        columns,
        rows,
        firstKey: sourceKeyOf(rows[0] as TargetRow, timeColumn, keyColumns),
        lastKey: sourceKeyOf(rows[rows.length - 1] as TargetRow, timeColumn, keyColumns),
      };
    };
    // Iterated by hand so that an early exit closes the result set (which ends the query
    // quietly) before the row stream is torn down.
    const iterator = (resultSet.stream<Record<string, unknown>>() as AsyncIterable<Row<Record<string, unknown>, 'JSONEachRow'>[]>)[
      Symbol.asyncIterator
    ]();
    let drained = false;
    try {
      for (;;) {
        const step = await iterator.next();
        if (step.done) break;
        for (const raw of step.value) {
          const row = rowOf(raw, columns);
          const key = sourceKeyText(sourceKeyOf(row, timeColumn, keyColumns));
          if (group.length > 0 && key !== groupKey) {
            for (const settled of settle(group, columns)) {
              current.push(settled);
              if (current.length === chunkRows) yield chunk();
            }
            group = [];
          }
          group.push(row);
          groupKey = key;
          if (group.length > tiedLimit) {
            throw new ValidationError(
              'delivery.source_order_ambiguous',
              `more than ${tiedLimit} source rows share one (time, key) value: the key columns do not order the window`,
            );
          }
        }
      }
      drained = true;
      for (const settled of settle(group, columns)) {
        current.push(settled);
        if (current.length === chunkRows) yield chunk();
      }
      group = [];
      if (current.length > 0) yield chunk();
    } catch (error) {
      throw asSourceError(error, 'window read');
    } finally {
      if (!drained) {
        // Early exit or failure: stop the query and release the response.
        resultSet.close();
        await iterator.return?.();
      }
    }
  }

  /** DESCRIBE of the bounded relation, checked against the request. */
  private async describeChecked(
    request: SourceRelationRequest,
    params: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<SourceColumn[]> {
    const rows = await this.run(
      // The window parameters are bound because an authored query may use them.
      { query: `DESCRIBE TABLE (SELECT * FROM ${relationSql(request)})`, query_params: params },
      signal,
      'describe',
      (rs) => rs.json<{ name: string; type: string }>(),
    ).catch((error: unknown) => {
      throw missingRelation(error, request) ?? error;
    });
    const columns = rows.map((r) => ({ name: String(r.name), type: String(r.type) }));
    for (const c of columns) {
      if (!isSqlIdentifier(c.name) || c.name === '__proto__') {
        throw schemaInvalid(`source column ${JSON.stringify(c.name.slice(0, 64))} is not an SQL identifier; alias it in the query`);
      }
    }
    const byName = new Map(columns.map((c) => [c.name, c]));
    const time = byName.get(request.timeColumn);
    if (!time) throw schemaInvalid(`source has no time column ${request.timeColumn}`);
    if (!TIME_TYPE.test(unwrapType(time.type))) {
      throw schemaInvalid(`time column ${request.timeColumn} must be Date, DateTime or DateTime64, not ${time.type}`);
    }
    for (const k of request.keyColumns) if (!byName.has(k)) throw schemaInvalid(`source has no key column ${k}`);
    return columns;
  }

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

function unwrapType(type: string): string {
  let t = type.trim();
  for (;;) {
    const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t);
    if (!m) return t;
    t = (m[1] as string).trim();
  }
}

/** One parsed row with exactly the described columns, in column order. */
function rowOf(raw: Row<Record<string, unknown>, 'JSONEachRow'>, columns: readonly string[]): TargetRow {
  let parsed: Record<string, unknown>;
  try {
    parsed = raw.json();
  } catch (error) {
    // Servers before 25.11 report a mid-stream failure as a text line in the body.
    const text = raw.text.startsWith('Code:') ? `: ${raw.text.slice(0, 300)}` : '';
    throw new SourceUnavailableError(`source stream broke off${text}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Object.keys(parsed).length !== columns.length) {
    throw new SourceUnavailableError('source row does not match the described columns');
  }
  const row: TargetRow = {};
  for (const c of columns) {
    if (!Object.hasOwn(parsed, c)) throw new SourceUnavailableError(`source row lacks column ${c}`);
    row[c] = parsed[c];
  }
  return row;
}

/** A tie group in its canonical order: by the canonical JSON of its values. */
function settle(group: TargetRow[], columns: readonly string[]): TargetRow[] {
  if (group.length < 2) return group;
  const keyed = group.map((row) => ({ row, text: canonicalJson(columns.map((c) => row[c])) }));
  keyed.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return keyed.map((k) => k.row);
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
