import type { ClickHouseClient } from '@clickhouse/client';
import { CutpointError, EffectFailedError, OutcomeUnknownError, ValidationError } from '../../domain/errors.js';
import { assertChName } from '../../domain/publication/candidate.js';
import { ObservationFailedError } from '../../domain/publication/errors.js';
import { redact } from '../../domain/redact.js';

/**
 * SQL text and statement plumbing shared by the ClickHouse publication adapters
 * (publication-target.ts, publication-stage.ts): quoting, literals, small reads, and the
 * classification of a failed effect.
 *
 * Measured on chdb 26.7.2.1 (test/integration/clickhouse-publication*.test.ts): chdb's
 * connection turns `clickhouse_settings` into session-wide `SET`s that outlive the query
 * (a `readonly = 2` or an `insert_deduplication_token` given that way applies to every
 * later statement of the handle). So no call here passes `clickhouse_settings`: every
 * per-statement setting is written in the statement's own SETTINGS clause.
 */

/** A validated name, backtick-quoted. */
export function quoteName(name: string, what = 'name'): string {
  return `\`${assertChName(name, what)}\``;
}

export function quoteClickHouseTable(database: string, table: string): string {
  return `${quoteName(database, 'database')}.${quoteName(table, 'table')}`;
}

/**
 * A ClickHouse string literal: backslash and quote escaped, NUL refused (the text is
 * canonical JSON or a token built from validated ids, so nothing else needs escaping).
 */
export function stringLiteral(text: string): string {
  if (typeof text !== 'string' || text.includes('\0')) throw new TypeError('string literal must be text without NUL');
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A per-statement SETTINGS clause from validated names and numeric or string values. */
export function settingsClause(settings: Record<string, number | string>): string {
  const parts = Object.entries(settings).map(([k, v]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new TypeError(`invalid setting name ${k}`);
    if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new TypeError(`setting ${k} must be an integer`);
    return `${k} = ${typeof v === 'number' ? String(v) : stringLiteral(v)}`;
  });
  return parts.length === 0 ? '' : `SETTINGS ${parts.join(', ')}`;
}

/** Runs one SELECT with bound parameters; rows as JSONEachRow objects. No session settings. */
export async function selectRows<T>(
  client: ClickHouseClient,
  query: string,
  params: Record<string, string> = {},
): Promise<T[]> {
  const result = await client.query({
    query,
    format: 'JSONEachRow',
    ...(Object.keys(params).length > 0 ? { query_params: params } : {}),
  });
  return result.json<T>();
}

/** Runs one statement that returns no rows (DDL, INSERT … SELECT). */
export async function runCommand(client: ClickHouseClient, query: string): Promise<void> {
  await client.command({ query });
}

/** A ClickHouse server error's code and type, when the failure is one (ClickHouseError of @clickhouse/client). */
export function serverErrorOf(error: unknown): { code: number; type: string | undefined } | undefined {
  const e = error as { code?: unknown; type?: unknown } | null;
  if (!e || typeof e !== 'object') return undefined;
  const code =
    typeof e.code === 'string' && /^\d+$/.test(e.code)
      ? Number(e.code)
      : typeof e.code === 'number'
        ? e.code
        : undefined;
  if (code === undefined) return undefined;
  return { code, type: typeof e.type === 'string' ? e.type : undefined };
}

/**
 * Server error codes that prove a local (non-ON CLUSTER) DDL or INSERT did not apply: the
 * statement was refused before it changed anything. Everything else — a timeout (159), a
 * Keeper error (999), a cancelled query, a network or socket failure, no answer — may have
 * applied and is unknown.
 */
const DEFINITE_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  16, // NO_SUCH_COLUMN_IN_TABLE
  20, // NUMBER_OF_COLUMNS_DOESNT_MATCH
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  36, // BAD_ARGUMENTS
  43, // ILLEGAL_TYPE_OF_ARGUMENT
  44, // ILLEGAL_COLUMN
  47, // UNKNOWN_IDENTIFIER
  48, // NOT_IMPLEMENTED (EXCHANGE in a non-Atomic database)
  53, // TYPE_MISMATCH
  57, // TABLE_ALREADY_EXISTS
  60, // UNKNOWN_TABLE
  62, // SYNTAX_ERROR
  70, // CANNOT_CONVERT_TYPE
  81, // UNKNOWN_DATABASE
  115, // UNKNOWN_SETTING
  117, // INCORRECT_DATA
  164, // READONLY
  349, // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
  497, // ACCESS_DENIED
]);

/** Sorts a failed effect: definite (`EffectFailedError`) or unknown (`OutcomeUnknownError`). Injected faults pass through. */
export function effectFailure(cutPoint: string, error: unknown): CutpointError {
  if (error instanceof CutpointError) return error;
  const server = serverErrorOf(error);
  const message = `${cutPoint}: ${describeClickHouseError(error)}`;
  if (server && DEFINITE_CODES.has(server.code))
    return new EffectFailedError(cutPoint, message, { cause: { code: server.code, type: server.type } });
  return new OutcomeUnknownError(cutPoint, message, {
    cause: server ? { code: server.code, type: server.type } : undefined,
  });
}

/** A failed read: injected faults pass through; anything else is an observation failure (never a conclusion). */
export function readFailure(what: string, error: unknown): CutpointError {
  if (error instanceof CutpointError) return error;
  const server = serverErrorOf(error);
  return new ObservationFailedError(`${what}: ${describeClickHouseError(error)}`, {
    cause: server ? { code: server.code, type: server.type } : undefined,
  });
}

/** One line for an operator: code, type and the message's first line, with anything credential-like removed. */
export function describeClickHouseError(error: unknown): string {
  const server = serverErrorOf(error);
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  return redact(
    `${server ? `Code ${server.code}${server.type ? ` ${server.type}` : ''}: ` : ''}${message}`.slice(0, 500),
  );
}

/** A column as the catalog lists it. */
export interface CatalogColumn {
  name: string;
  type: string;
  position: number;
  default_kind: string;
}

/** Columns an INSERT may write (no MATERIALIZED, ALIAS or EPHEMERAL), in position order. */
export function insertableColumns(columns: readonly CatalogColumn[]): CatalogColumn[] {
  return columns
    .filter((c) => c.default_kind === '' || c.default_kind === 'DEFAULT')
    .sort((a, b) => a.position - b.position);
}

export async function catalogColumns(
  client: ClickHouseClient,
  database: string,
  table: string,
): Promise<CatalogColumn[]> {
  const rows = await selectRows<CatalogColumn>(
    client,
    'SELECT name, type, toUInt32(position) AS position, default_kind FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position',
    { db: database, t: table },
  );
  return rows.map((r) => ({ ...r, position: Number(r.position) }));
}

/** The table under a name: its UUID (lower-case text) and comment, or undefined. */
export async function tableUnderName(
  client: ClickHouseClient,
  database: string,
  name: string,
): Promise<{ uuid: string; comment: string; engine: string } | undefined> {
  const rows = await selectRows<{ uuid: string; comment: string; engine: string }>(
    client,
    'SELECT toString(uuid) AS uuid, comment, engine FROM system.tables WHERE database = {db:String} AND name = {n:String}',
    { db: database, n: name },
  );
  return rows[0];
}

/** Whether the database is visible in `system.databases` (absence of a table in it is then proved). */
export async function databaseVisible(client: ClickHouseClient, database: string): Promise<boolean> {
  const rows = await selectRows<{ n: string | number }>(
    client,
    'SELECT count() AS n FROM system.databases WHERE name = {db:String}',
    { db: database },
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/** Order-independent digest and count of `columns` in a table: `sum(sipHash64(tuple(…)))` as decimal text. */
export async function countAndDigest(
  client: ClickHouseClient,
  database: string,
  table: string,
  columns: readonly string[],
  where = '',
): Promise<{ rows: number; digest: string }> {
  const tuple = columns.map((c) => quoteName(c, 'column')).join(', ');
  // Aliases in the reserved _cutpoint prefix: an alias named like a user column would shadow it.
  const rows = await selectRows<{ _cutpoint_rows: string | number; _cutpoint_digest: string }>(
    client,
    `SELECT count() AS _cutpoint_rows, toString(sum(sipHash64(tuple(${tuple})))) AS _cutpoint_digest FROM ${quoteClickHouseTable(database, table)}${where ? ` WHERE ${where}` : ''}`,
  );
  return { rows: Number(rows[0]?._cutpoint_rows ?? 0), digest: rows[0]?._cutpoint_digest ?? '0' };
}

/**
 * A read-only statement must stay inside the subquery it is wrapped in. Measured on chdb:
 * the embedded engine runs `;`-separated statements in one call, so `SELECT 1) ; DROP
 * TABLE t; SELECT (1` wrapped as `SELECT * FROM (…)` dropped the table. Refused here,
 * outside string literals and quoted names: `;`, comments (`--`, `#`, `/*`), and
 * parentheses that do not balance (a `)` closing the wrapper early).
 */
export function assertEnclosedSelect(sql: string, what: string): void {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote !== undefined) {
      if (c === '\\') i++;
      else if (c === quote) {
        if (sql[i + 1] === quote) i++;
        else quote = undefined;
      }
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    const pair = sql.slice(i, i + 2);
    if (depth < 0 || c === ';' || c === '#' || pair === '--' || pair === '/*') {
      throw new ValidationError(
        'publication.invalid_statement',
        `${what}: one SELECT without ';', comments or unbalanced parentheses is required`,
      );
    }
  }
  if (quote !== undefined || depth !== 0)
    throw new ValidationError('publication.invalid_statement', `${what}: unterminated quote or unbalanced parentheses`);
}
