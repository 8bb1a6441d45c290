import { redact } from '../../domain/redact.js';

/**
 * Sorts a PostgreSQL failure at COMMIT. An error the server answered with a SQLSTATE
 * (serialization failure, deferred constraint, permission) proves the transaction rolled
 * back: definite. A broken connection, a timeout or a server shutdown may have arrived
 * after the commit was durable: unknown. Before COMMIT is sent nothing can have committed,
 * so every failure there is definite.
 */
export type PgFailureClass = 'definite' | 'unknown';

/** SQLSTATEs that say the connection or the server went away: the commit may have landed. */
const UNKNOWN_SQLSTATES = new Set(['57P01', '57P02', '57P03', '40003', '58030']);

export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function classifyPgCommitFailure(error: unknown): PgFailureClass {
  const state = sqlStateOf(error);
  if (state === undefined) return 'unknown'; // ECONNRESET, ETIMEDOUT, "Connection terminated", query timeouts
  if (state.startsWith('08') || UNKNOWN_SQLSTATES.has(state)) return 'unknown';
  return 'definite';
}

/** 42501 insufficient_privilege, 3F000 invalid_schema_name (a schema we may not see). */
export function isPostgresPermissionFailure(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state === '42501';
}

/**
 * A read-only probe the server refused as a statement, not as an outage: syntax or a name
 * it does not know (class 42 but insufficient_privilege), or the data it read (class 22).
 * Running it again cannot succeed.
 */
export function isPostgresUnrunnableStatement(error: unknown): boolean {
  const state = sqlStateOf(error);
  return state !== undefined && ((state.startsWith('42') && state !== '42501') || state.startsWith('22'));
}

/**
 * A driver error as one line for an operator: SQLSTATE and message, with anything that
 * looks like a credential or a connection string removed.
 */
export function describePgError(error: unknown, secrets: readonly string[] = []): string {
  const state = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return redact(`${state ? `SQLSTATE ${state}: ` : ''}${message}`, secrets);
}
