/**
 * Is this failure a database refusing the credentials it was given? Pure: no driver
 * import, no I/O; by the drivers' own error codes, never by message text. A deployed step
 * that sees one drops its cached connection AND the cached secret (functions/lib/
 * connection-cache.ts), so the next attempt re-reads a rotated secret.
 *
 * - PostgreSQL: SQLSTATE `28P01` invalid_password, `28000` invalid_authorization_specification
 *   (pg's `code`).
 * - SQL Server: error number 18456 "Login failed" (`number`, or mssql's `originalError.number`
 *   / `originalError.info.number`), or tedious's `ELOGIN`: a login refused during the
 *   handshake carries only that code (its 18456 stays in the server's message token).
 *   Any ELOGIN counts: re-reading a secret after a login refused for another reason costs
 *   one GetSecretValue.
 * - ClickHouse: server code 516 (`AUTHENTICATION_FAILED`), as @clickhouse/client parses it
 *   (`code` a digit string, `type` the name when present) or as our adapters keep it (a number).
 *
 * The adapters wrap driver errors in our own (TargetUnavailableError, SourceUnavailableError)
 * with the driver's codes kept in `cause`: the chain is walked (a few levels deep).
 */
export function isAuthenticationFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (authCode(current as Facts)) return true;
    const facts = current as Facts;
    if (facts.originalError && authCode(facts.originalError)) return true;
    current = facts.cause;
  }
  return false;
}

interface Facts {
  code?: unknown;
  number?: unknown;
  type?: unknown;
  info?: { number?: unknown };
  originalError?: Facts;
  cause?: unknown;
}

const PG_AUTH = new Set(['28P01', '28000']);
const MSSQL_LOGIN_FAILED = 18456;
const CLICKHOUSE_AUTHENTICATION_FAILED = { code: 516, type: 'AUTHENTICATION_FAILED' };

function authCode(facts: Facts): boolean {
  const { code, type } = facts;
  if (typeof code === 'string' && PG_AUTH.has(code)) return true;
  if (code === 'ELOGIN') return true;
  if (facts.number === MSSQL_LOGIN_FAILED || facts.info?.number === MSSQL_LOGIN_FAILED) return true;
  // The client's digit string, or the number our ClickHouse adapters keep (serverErrorOf).
  const clickhouseCode = typeof code === 'string' && /^\d{1,5}$/.test(code) ? Number(code) : code;
  return (
    clickhouseCode === CLICKHOUSE_AUTHENTICATION_FAILED.code &&
    (type === undefined || type === CLICKHOUSE_AUTHENTICATION_FAILED.type)
  );
}
