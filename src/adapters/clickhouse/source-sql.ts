import { ValidationError } from '../../domain/errors.js';
import { isSqlIdentifier } from '../../domain/delivery/identifiers.js';
import { bucketsOf, type TimeRange } from '../../domain/delivery/parts.js';
import type { SealedWindow } from '../../domain/delivery/window.js';
import type { SourceColumn } from '../../ports/source.js';
import type {
  CountBucketsRequest,
  CountWindowRequest,
  SourceKey,
  SourceRelationRequest,
} from '../../domain/delivery/source-types.js';
import {
  assertCountBucketsRequest,
  assertCountWindowRequest,
  orderColumnsOf,
} from '../../domain/delivery/source-rules.js';
import { dateTime64Param, type ReadStatement } from './client.js';

/**
 * The statements the ClickHouse source runs, built from validated requests. Identifiers
 * are validated and quoted with backticks; every value (window bounds, bucket arithmetic,
 * a resume key) is a typed query parameter `{name:Type}`, never spliced into the text.
 * A `query` relation is wrapped on lines of its own (`(\n<sql>\n) AS cutpoint_source`) so
 * a trailing `--` comment cannot swallow the bound. An authored query may itself use the
 * two window parameters, e.g. to push the bound into a join.
 */

export type WindowQuery = ReadStatement;

const START_PARAM = 'cutpoint_window_start';
const END_PARAM = 'cutpoint_window_end';

/** Every output-format setting the row representation depends on, pinned per query. */
export const OUTPUT_SETTINGS = [
  "date_time_output_format = 'iso'",
  'output_format_json_quote_64bit_integers = 1',
  'output_format_json_quote_64bit_floats = 0',
  'output_format_json_quote_decimals = 1',
  'output_format_json_quote_denormals = 1',
  'output_format_decimal_trailing_zeros = 0',
  'output_format_json_validate_utf8 = 1',
  'output_format_json_named_tuples_as_objects = 1',
].join(', ');

/** The quoted relation a request reads from (validated). */
export function relationSql(request: SourceRelationRequest): string {
  const { from } = request;
  return from.kind === 'table'
    ? `${quote(from.table.schema)}.${quote(from.table.name)}`
    : `(\n${from.sql}\n) AS cutpoint_source`;
}

export function quote(identifier: string): string {
  // Validated before we get here; checked again so no path can quote anything else.
  if (!isSqlIdentifier(identifier))
    throw new ValidationError('delivery.source_invalid', 'identifier is not an SQL identifier');
  return `\`${identifier}\``;
}

export function windowParams(window: SealedWindow): Record<string, string> {
  return { [START_PARAM]: dateTime64Param(new Date(window.start)), [END_PARAM]: dateTime64Param(new Date(window.end)) };
}

function windowPredicate(timeColumn: string): string {
  const t = quote(timeColumn);
  return `${t} >= {${START_PARAM}:DateTime64(3)} AND ${t} < {${END_PARAM}:DateTime64(3)}`;
}

/** `DESCRIBE` of the bounded relation (the window parameters are bound: a query may use them). */
export function describeQuery(request: SourceRelationRequest, params: Record<string, string>): WindowQuery {
  return { query: `DESCRIBE TABLE (SELECT * FROM ${relationSql(request)})`, query_params: params };
}

/**
 * The exact statement `streamWindow` runs for a request (validated first), for the bench
 * to time a raw read of the same window and for tests to show values are parameters.
 * With `after`, the read starts at that keyset (see `keysetBound`).
 */
export function windowQuery(request: CountWindowRequest, after?: KeysetBound): WindowQuery {
  const window = assertCountWindowRequest(request);
  const order = orderColumnsOf(request.timeColumn, request.keyColumns).map(quote).join(', ');
  const keyset = after ? ` AND ${after.predicate}` : '';
  return {
    query: `SELECT * FROM ${relationSql(request)} WHERE ${windowPredicate(request.timeColumn)}${keyset} ORDER BY ${order} SETTINGS ${OUTPUT_SETTINGS}`,
    query_params: { ...windowParams(window), ...after?.params },
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

export interface BucketQuery extends WindowQuery {
  /** The buckets the rows are counted in: exactly `bucketsOf(window, buckets)`. */
  buckets: TimeRange[];
}

/**
 * The one GROUP BY `countBuckets` runs. Bucket i of `bucketsOf` starts at
 * `origin + i * width` ms and the last one runs to the window's end, so a row's bucket is
 * `least(intDiv(ms - origin, width), n - 1)`, computed server-side from its time in whole
 * milliseconds rounded down (`toDateTime64(t, 3)` truncates toward zero, and a sealed
 * window never starts before 1970), so a sub-millisecond time falls in the bucket whose
 * half-open bounds hold it, as the window predicate does.
 */
export function bucketQuery(request: CountBucketsRequest): BucketQuery {
  const window = assertCountBucketsRequest(request);
  const buckets = bucketsOf(window, request.buckets);
  const origin = Date.parse(window.start);
  const width = Date.parse((buckets[0] as TimeRange).end) - origin;
  const t = quote(request.timeColumn);
  const ms = `toUnixTimestamp64Milli(toDateTime64(${t}, 3))`;
  return {
    query:
      `SELECT least(intDiv(${ms} - {cutpoint_bucket_origin:Int64}, {cutpoint_bucket_width:Int64}), {cutpoint_bucket_last:Int64}) AS bucket, count() AS n ` +
      `FROM ${relationSql(request)} WHERE ${windowPredicate(request.timeColumn)} GROUP BY bucket ORDER BY bucket SETTINGS ${OUTPUT_SETTINGS}`,
    query_params: {
      ...windowParams(window),
      cutpoint_bucket_origin: String(origin),
      cutpoint_bucket_width: String(width),
      cutpoint_bucket_last: String(buckets.length - 1),
    },
    buckets,
  };
}

/** A keyset predicate `(order columns) >= lastKey` and its parameters. */
export interface KeysetBound {
  predicate: string;
  params: Record<string, string>;
}

/** A key value that does not fit its column (the contract's row representation). */
export class KeyValueError extends Error {}

const SAME_TYPE =
  /^(?:U?Int(?:8|16|32|64|128|256)|Float(?:32|64)|BFloat16|Bool|String|UUID|IPv4|IPv6|Date|Date32|FixedString\(\d+\)|Decimal(?:32|64|128|256)?\(\d+(?:,\s*\d+)?\))$/;
const DATETIME = /^DateTime(?:\('[^']*'\))?$/;
const DATETIME64 = /^DateTime64\((\d)(?:,\s*'[^']*')?\)$/;

/**
 * `(c0, c1, …) >= ({p0:T0}, {p1:T1}, …)` over the order columns — ClickHouse compares
 * tuples lexicographically, as ORDER BY sorts — with `lastKey`'s values (the contract's
 * row representation: ISO UTC text times, decimal text for wide integers) bound as
 * parameters typed like their columns. Times are bound as `DateTime64(p, 'UTC')` with the
 * column's precision, whatever the column's own zone (the instant is what compares). A
 * Nullable column (ORDER BY puts NULL last) contributes `isNull(c)` and, for a non-null
 * key value, `assumeNotNull(c)`. A plain `time >= t0` is added so the read can prune by
 * the primary index. Columns of other types (Enum, Array, Map…) cannot be resumed on:
 * `KeyValueError`, like a value that does not fit its type.
 */
export function keysetBound(
  columns: readonly SourceColumn[],
  orderColumns: readonly string[],
  lastKey: SourceKey,
): KeysetBound {
  const left: string[] = [];
  const right: string[] = [];
  const params: Record<string, string> = {};
  let timeFloor = '';
  orderColumns.forEach((name, i) => {
    const column = columns.find((c) => c.name === name);
    if (!column) throw new KeyValueError(`no column ${name}`);
    const { base, nullable } = unwrapType(column.type);
    const paramType = paramTypeOf(base);
    if (!paramType) throw new KeyValueError(`column ${name} of type ${column.type} cannot order a resumable read`);
    const value = lastKey[i];
    const c = quote(name);
    const p = `cutpoint_key_${i}`;
    if (nullable) {
      left.push(`isNull(${c})`);
      right.push(`{${p}_null:UInt8}`);
      params[`${p}_null`] = value === null ? '1' : '0';
      if (value === null) return;
      left.push(`assumeNotNull(${c})`);
    } else {
      if (value === null) throw new KeyValueError(`column ${name} is not Nullable but its key value is null`);
      left.push(c);
      if (i === 0) timeFloor = ` AND ${c} >= {${p}:${paramType}}`;
    }
    right.push(`{${p}:${paramType}}`);
    params[p] = paramText(base, value, name);
  });
  return { predicate: `(${left.join(', ')}) >= (${right.join(', ')})${timeFloor}`, params };
}

export function unwrapType(type: string): { base: string; nullable: boolean } {
  let t = type.trim();
  let nullable = false;
  for (;;) {
    const m = /^(Nullable|LowCardinality)\((.*)\)$/.exec(t);
    if (!m) return { base: t, nullable };
    if (m[1] === 'Nullable') nullable = true;
    t = (m[2] as string).trim();
  }
}

function paramTypeOf(base: string): string | undefined {
  if (SAME_TYPE.test(base)) return base;
  if (DATETIME.test(base)) return "DateTime('UTC')";
  const m = DATETIME64.exec(base);
  return m ? `DateTime64(${m[1]}, 'UTC')` : undefined;
}

const ISO_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)Z$/;

/** A key value as the parameter's text (what ClickHouse parses for that type). */
function paramText(base: string, value: unknown, name: string): string {
  const wrong = () => new KeyValueError(`the key value for column ${name} does not fit its type ${base}`);
  if (DATETIME.test(base) || DATETIME64.test(base)) {
    const m = typeof value === 'string' ? ISO_TIME.exec(value) : null;
    if (!m) throw wrong();
    return `${m[1]} ${m[2]}`;
  }
  if (base === 'Bool') {
    if (typeof value !== 'boolean') throw wrong();
    return value ? 'true' : 'false';
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw wrong();
    return String(value);
  }
  if (typeof value === 'string') return value;
  throw wrong();
}
