import sql from 'mssql';
import { ConfigError } from '../../domain/errors.js';
import { redact } from '../../domain/redact.js';

/**
 * How the SQL Server adapter is told where to connect, and how it keeps that secret.
 *
 * `CUTPOINT_MSSQL_URL` (and the adapter's `connection` option) takes either
 * - a URL: `mssql://user:password@host:1433/database?encrypt=true&trustServerCertificate=false`
 *   (user and password percent-encoded; encrypt defaults to true), or
 * - an ADO.NET connection string: `Server=host,1433;Database=db;User Id=u;Password=p;Encrypt=true`.
 * Neither the string nor its parts ever appear in an error, a log or an output.
 */
export interface MssqlConnection {
  config: sql.config;
  /** Every piece of the connection that must never be printed. */
  secrets: string[];
}

export function parseMssqlConnection(text: string): MssqlConnection {
  const trimmed = text.trim();
  if (trimmed.length === 0)
    throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server connection is empty');
  if (/^(mssql|sqlserver):\/\//i.test(trimmed)) return fromUrl(trimmed);
  let parsed: sql.config;
  try {
    parsed = sql.ConnectionPool.parseConnectionString(trimmed);
  } catch {
    // The parser's message may quote the string: say only that it is invalid.
    throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server connection string cannot be parsed');
  }
  if (!parsed.server)
    throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server connection string names no server');
  return { config: parsed, secrets: secretsOf(trimmed, parsed.user, parsed.password) };
}

function fromUrl(text: string): MssqlConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server URL cannot be parsed');
  }
  const flag = (name: string, fallback: boolean): boolean => {
    const value = url.searchParams.get(name);
    if (value === null) return fallback;
    if (/^(true|yes|1)$/i.test(value)) return true;
    if (/^(false|no|0)$/i.test(value)) return false;
    throw new ConfigError(
      'delivery.mssql_connection_invalid',
      `the SQL Server URL parameter ${name} must be true or false`,
    );
  };
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const config: sql.config = {
    server: url.hostname,
    port: url.port ? Number(url.port) : 1433,
    ...(user ? { user } : {}),
    ...(password ? { password } : {}),
    ...(database ? { database } : {}),
    options: {
      encrypt: flag('encrypt', true),
      trustServerCertificate: flag('trustServerCertificate', false),
      useUTC: true,
    },
  };
  if (!config.server) throw new ConfigError('delivery.mssql_connection_invalid', 'the SQL Server URL names no host');
  return { config, secrets: secretsOf(text, user, password, url.password, url.username) };
}

function secretsOf(...values: Array<string | undefined>): string[] {
  return values.filter((v): v is string => typeof v === 'string' && v.length > 0).sort((a, b) => b.length - a.length);
}

/**
 * Sorts a SQL Server failure of a batch that contains the COMMIT (or of the COMMIT
 * itself). An error the server answered with a number ran under XACT_ABORT ON, so the
 * transaction rolled back: definite. A failure before anything was sent (login, bad
 * arguments) is definite too. A timeout, a cancel or a broken socket may have come after
 * the COMMIT was durable: unknown.
 */
export type MssqlFailureClass = 'definite' | 'unknown';

const NOT_SENT = new Set([
  'ELOGIN',
  'EINSTLOOKUP',
  'EARGS',
  'EINJECT',
  'ENOTOPEN',
  'ENOCONN',
  'EALREADYCONNECTING',
  'EDRIVER',
]);

export function serverErrorNumber(error: unknown): number | undefined {
  const e = error as
    { number?: unknown; originalError?: { number?: unknown; info?: { number?: unknown } } } | undefined;
  for (const candidate of [e?.number, e?.originalError?.number, e?.originalError?.info?.number]) {
    if (typeof candidate === 'number') return candidate;
  }
  return undefined;
}

export function classifyMssqlFailure(error: unknown): MssqlFailureClass {
  if (serverErrorNumber(error) !== undefined) return 'definite';
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && NOT_SENT.has(code)) return 'definite';
  return 'unknown';
}

/** Permission and visibility errors: the principal may not see or touch the object. */
const PERMISSION_NUMBERS = new Set([229, 230, 262, 297, 300, 1088, 15151, 15247]);

export function isMssqlPermissionFailure(error: unknown): boolean {
  const n = serverErrorNumber(error);
  return n !== undefined && PERMISSION_NUMBERS.has(n);
}

/**
 * A read-only probe the server refused as a statement, not as an outage: a column or
 * object it does not know (207, 208, 4104), a syntax error or unknown function (102, 156,
 * 195), a conversion or arithmetic error on the data read (245, 8114, 8115, 8134).
 * Running it again cannot succeed.
 */
const UNRUNNABLE_NUMBERS = new Set([102, 156, 195, 207, 208, 245, 4104, 8114, 8115, 8134]);

export function isMssqlUnrunnableStatement(error: unknown): boolean {
  const n = serverErrorNumber(error);
  return n !== undefined && UNRUNNABLE_NUMBERS.has(n);
}

/** One line for an operator: the server's error number and message, redacted. */
export function describeMssqlError(error: unknown, secrets: readonly string[]): string {
  const n = serverErrorNumber(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const prefix = n !== undefined ? `SQL Server error ${n}: ` : typeof code === 'string' ? `${code}: ` : '';
  return redact(`${prefix}${message}`, secrets);
}
