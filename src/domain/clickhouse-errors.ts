/**
 * What a ClickHouse failure IS, from its structure alone (docs/rules.md#observation-failures).
 * Pure: no driver import, no I/O.
 *
 * `@clickhouse/client` parses a server error into `ClickHouseError { code, type }` with a
 * regex over the text, `/(Code|Error): (?<code>\d+).*Exception: (?<message>.+?)\((?<type>…)\)/s`.
 * Measured (chdb 26.7.2.1 through @clickhouse/client 1.23.1, test/integration/clickhouse-errors.test.ts):
 * the error arrives with `name === 'Error'`, `code` a digit string, `type` the upper-case
 * name, and `instanceof ClickHouseError` is FALSE in the application (chdb carries its own
 * copy of client-common). Hence the duck-typed `structured` test, never `instanceof`, and
 * never the message text alone: a plain Error whose text reads "No node" is UNCLASSIFIED.
 *
 * The class feeds diagnostics everywhere. Only `retryRead` (src/engine/read-retry.ts) acts
 * on it, and only for KEEPER_NO_NODE on a read-only statement. A mutation's failure is never
 * retried on its class: it is resolved by observation (docs/rules.md#exchange-observation).
 */

export const CLICKHOUSE_ERROR_CLASSES = [
  'ABORTED',
  'TRANSPORT',
  'UNCLASSIFIED',
  'KEEPER_NO_NODE',
  'KEEPER_SESSION_EXPIRED',
  'KEEPER_CONNECTION_LOSS',
  'KEEPER_OTHER',
  'DDL_TIMEOUT',
  'UNKNOWN_TABLE',
  'UNKNOWN_DATABASE',
  'NOT_IMPLEMENTED',
  'ACCESS_DENIED',
  'QUERY_CANCELLED',
  'LIMIT_EXCEEDED',
  'SERVER_OTHER',
] as const;

export type ClickHouseErrorClass = (typeof CLICKHOUSE_ERROR_CLASSES)[number];

/** The class, and for a structured server error its code and type (never the message). */
export interface ClickHouseErrorClassification {
  errorClass: ClickHouseErrorClass;
  code?: string;
  type?: string;
}

/** A server error as the client parses it: the only shape the classifier trusts. */
export interface StructuredClickHouseError {
  code: string;
  type?: string;
  message?: unknown;
}

const CODE = /^\d{1,5}$/;
const TYPE = /^[A-Z][A-Z0-9_]*$/;

/** Duck-typed: an object whose `code` is 1–5 digits and whose `type` is absent or an upper-case name. */
export function structured(e: unknown): e is StructuredClickHouseError {
  if (typeof e !== 'object' || e === null) return false;
  const { code, type } = e as { code?: unknown; type?: unknown };
  if (typeof code !== 'string' || !CODE.test(code)) return false;
  return type === undefined || (typeof type === 'string' && TYPE.test(type));
}

/**
 * Server codes with their own class, and the type name the server gives each. A present
 * type that disagrees with its code is not trusted structure (UNCLASSIFIED). 159
 * TIMEOUT_EXCEEDED is what a distributed DDL reports after `distributed_ddl_task_timeout`
 * ("will execute in background": the outcome is unknown) and what `max_execution_time` raises.
 */
const NAMED: Readonly<Record<string, { type: string; errorClass: ClickHouseErrorClass }>> = {
  '159': { type: 'TIMEOUT_EXCEEDED', errorClass: 'DDL_TIMEOUT' },
  '60': { type: 'UNKNOWN_TABLE', errorClass: 'UNKNOWN_TABLE' },
  '81': { type: 'UNKNOWN_DATABASE', errorClass: 'UNKNOWN_DATABASE' },
  '48': { type: 'NOT_IMPLEMENTED', errorClass: 'NOT_IMPLEMENTED' },
  '497': { type: 'ACCESS_DENIED', errorClass: 'ACCESS_DENIED' },
  '394': { type: 'QUERY_WAS_CANCELLED', errorClass: 'QUERY_CANCELLED' },
  '158': { type: 'TOO_MANY_ROWS', errorClass: 'LIMIT_EXCEEDED' },
  '160': { type: 'TOO_SLOW', errorClass: 'LIMIT_EXCEEDED' },
  '241': { type: 'MEMORY_LIMIT_EXCEEDED', errorClass: 'LIMIT_EXCEEDED' },
  '307': { type: 'TOO_MANY_BYTES', errorClass: 'LIMIT_EXCEEDED' },
  '396': { type: 'TOO_MANY_ROWS_OR_BYTES', errorClass: 'LIMIT_EXCEEDED' },
};

const KEEPER_CODE = '999';
const KEEPER_TYPE = 'KEEPER_EXCEPTION';
const COORDINATION_PREFIX = 'Coordination::Exception: ';

/** Keeper sub-classes by the start of the (prefix-stripped) message, in this order. */
const KEEPER_MESSAGES: ReadonlyArray<readonly [string, ClickHouseErrorClass]> = [
  ['No node', 'KEEPER_NO_NODE'],
  ['Session expired', 'KEEPER_SESSION_EXPIRED'],
  ['Connection loss', 'KEEPER_CONNECTION_LOSS'],
];

/** Node socket/DNS failures: the request may or may not have reached the server. */
const TRANSPORT_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * `aborted`: whether the caller's own deadline/cancellation signal has fired. The client
 * reports an abort as a plain `Error` (HTTP: "The user aborted a request."; chdb: "Query
 * aborted …", both measured with `name === 'Error'` and no code), so the signal, not the
 * error, is what proves cancellation. ABORTED wins over every other class: a cancelled
 * read is never retried.
 */
export function classifyClickHouseError(
  e: unknown,
  options: { aborted?: boolean } = {},
): ClickHouseErrorClassification {
  if (options.aborted === true || nameOf(e) === 'AbortError') return { errorClass: 'ABORTED' };
  if (!structured(e)) return { errorClass: transportCodeOf(e) !== undefined ? 'TRANSPORT' : 'UNCLASSIFIED' };
  const { code, type } = e;
  const facts = { code, ...(type !== undefined ? { type } : {}) };
  if (code === KEEPER_CODE) {
    if (type !== KEEPER_TYPE) return { errorClass: 'UNCLASSIFIED', ...facts };
    return { errorClass: keeperClassOf(e.message), ...facts };
  }
  const named = NAMED[code];
  if (named)
    return { errorClass: type === undefined || type === named.type ? named.errorClass : 'UNCLASSIFIED', ...facts };
  return { errorClass: 'SERVER_OTHER', ...facts };
}

function keeperClassOf(message: unknown): ClickHouseErrorClass {
  if (typeof message !== 'string') return 'KEEPER_OTHER';
  // The client's greedy `.*Exception: ` already strips this prefix; a server (or another
  // client) may leave it in.
  const m = message.startsWith(COORDINATION_PREFIX) ? message.slice(COORDINATION_PREFIX.length) : message;
  for (const [start, errorClass] of KEEPER_MESSAGES) if (m.startsWith(start)) return errorClass;
  return 'KEEPER_OTHER';
}

function nameOf(e: unknown): unknown {
  return typeof e === 'object' && e !== null ? (e as { name?: unknown }).name : undefined;
}

/** The errno-style code of a transport failure, also when wrapped (fetch's `cause`, AggregateError). */
function transportCodeOf(e: unknown, depth = 0): string | undefined {
  if (typeof e !== 'object' || e === null || depth > 3) return undefined;
  const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && TRANSPORT_CODES.has(code)) return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = transportCodeOf(inner, depth + 1);
      if (found) return found;
    }
  }
  return transportCodeOf(cause, depth + 1);
}

/** Which observation failed: the quality reader's target probe, or the publication's system.tables read. */
export type ObservationKind = 'target' | 'publication';

/**
 * The stable diagnostic code for an observation that failed with this class (docs/rules.md#diagnostic-codes).
 * A target observation names the Keeper `No node` case, any other Keeper failure, and a
 * timeout (server TIMEOUT_EXCEEDED or our own deadline) apart; a publication observation
 * has one code. None of them authorizes a redispatch.
 */
export function observationDiagnosticOf(errorClass: ClickHouseErrorClass, kind: ObservationKind): string {
  if (kind === 'publication') return 'publication.observation_failed';
  switch (errorClass) {
    case 'KEEPER_NO_NODE':
      return 'quality.target_observation_keeper_no_node';
    case 'KEEPER_SESSION_EXPIRED':
    case 'KEEPER_CONNECTION_LOSS':
    case 'KEEPER_OTHER':
      return 'quality.target_observation_keeper_other';
    case 'DDL_TIMEOUT':
    case 'ABORTED':
      return 'quality.target_observation_timeout';
    default:
      return 'quality.target_observation_failed';
  }
}
