import { quoted } from './echo.js';

/**
 * Every error that leaves a use case carries a stable `name` (Step Functions matches
 * `ErrorEquals` on it) and a stable diagnostic `code` (`subsystem.snake_case_reason`)
 * that operator commands print on stderr. Messages are for humans and may change;
 * names and codes may not.
 */
export class CutpointError extends Error {
  readonly code: string;
  constructor(name: string, code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = name;
    this.code = code;
  }
}

/** Input that cannot be accepted. Nothing was read or mutated. */
export class ValidationError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.ValidationError', code, message);
  }
}

/** Configuration is missing or invalid; raised once at cold start. */
export class ConfigError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.ConfigError', code, message);
  }
}

/**
 * The effect may or may not have been applied (timeout, network, 5xx, lost response).
 * Never retried blindly: the caller resolves it by reloading the exact identity.
 */
export class OutcomeUnknownError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, message: string, options?: { cause?: unknown }) {
    super('Cutpoint.OutcomeUnknown', 'cutpoint.outcome_unknown', message, options);
    this.cutPoint = cutPoint;
  }
}

/** The effect definitely did not happen (a 4xx that proves non-application, an injected fail). */
export class EffectFailedError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, message: string, options?: { cause?: unknown }) {
    super('Cutpoint.EffectFailed', 'cutpoint.effect_failed', message, options);
    this.cutPoint = cutPoint;
  }
}

/**
 * The worker died around the effect (Lambda crash or timeout). Raised by the fault
 * injector to rehearse a crash in-process; the flow treats it like `Lambda.Unknown`.
 */
export class WorkerCrashedError extends CutpointError {
  readonly cutPoint: string;
  constructor(cutPoint: string, when: 'before' | 'after') {
    super('Cutpoint.WorkerCrashed', 'cutpoint.worker_crashed', `injected crash ${when} ${cutPoint}`);
    this.cutPoint = cutPoint;
  }
}

/**
 * A store or service could not be reached at all: no request reached it, so nothing was
 * read or changed. Use cases pass it through (never "journal unavailable" or a guess), so
 * the operator sees the cause and the next step.
 */
export class UnreachableError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.Unreachable', code, message);
  }
}

/** Bytes read back do not match the checksum recorded for their identity. */
export class ChecksumMismatchError extends CutpointError {
  constructor(key: string, expected: string, actual: string) {
    super(
      'Cutpoint.ChecksumMismatch',
      'objects.checksum_mismatch',
      `object ${key}: expected sha256 ${expected}, read ${actual}`,
    );
  }
}

/** A required object is absent. */
export class ObjectMissingError extends CutpointError {
  constructor(key: string) {
    super('Cutpoint.ObjectMissing', 'objects.object_missing', `object ${key} is missing`);
  }
}

/**
 * Something occupies an exact identity but is not ours: a "similar" object or item.
 * This is never treated as success.
 */
export class IdentityConflictError extends CutpointError {
  constructor(code: string, message: string) {
    super('Cutpoint.IdentityConflict', code, message);
  }
}

/**
 * Diagnostic projection of any thrown value: never includes stack, cause or secrets. A
 * Node system error (a file, a connection, a port) gets a stable code and the next step
 * instead of `cutpoint.internal_error`; the message is one line with every control
 * character escaped (an argument carrying ESC or a newline never reaches a terminal raw).
 */
export function diagnosticOf(error: unknown): { code: string; name: string; message: string } {
  const d = rawDiagnosticOf(error);
  return { ...d, message: escapeControlCharacters(d.message) };
}

function rawDiagnosticOf(error: unknown): { code: string; name: string; message: string } {
  if (error instanceof CutpointError) {
    return { code: error.code, name: error.name, message: error.message };
  }
  const system = systemDiagnosticOf(error);
  if (system) return system;
  if (error instanceof Error) {
    return { code: 'cutpoint.internal_error', name: error.name, message: error.message };
  }
  return { code: 'cutpoint.internal_error', name: 'Error', message: String(error) };
}

interface SystemError {
  code?: unknown;
  path?: unknown;
  port?: unknown;
  syscall?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The errno code of a Node system error, also when wrapped (fetch's cause, AggregateError). */
function systemErrorOf(error: unknown, depth = 0): SystemError | undefined {
  if (typeof error !== 'object' || error === null || depth > 3) return undefined;
  const e = error as SystemError;
  // An AggregateError's inner errors carry the details (address, port).
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const found = systemErrorOf(inner, depth + 1);
      if (found) return found;
    }
  }
  if (typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code)) return e;
  return systemErrorOf(e.cause, depth + 1);
}

function systemDiagnosticOf(error: unknown): { code: string; name: string; message: string } | undefined {
  const e = systemErrorOf(error);
  if (!e) return undefined;
  const name = 'Cutpoint.SystemError';
  const path = typeof e.path === 'string' ? ` ${quoted(e.path)}` : '';
  const port = typeof e.port === 'number' ? ` ${e.port}` : '';
  switch (e.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return { code: 'cli.file_not_found', name, message: `no such file or directory${path}; check the path` };
    case 'EACCES':
    case 'EPERM':
      return e.syscall === 'listen' || e.syscall === 'bind'
        ? {
            code: 'cutpoint.port_in_use',
            name,
            message: `port${port} may not be used by this user; choose another port`,
          }
        : { code: 'cli.file_permission_denied', name, message: `permission denied${path}; check its permissions` };
    case 'EISDIR':
      return {
        code: 'cli.file_not_regular',
        name,
        message: `${path.trim() || 'the path'} is a directory, not a regular file`,
      };
    case 'EADDRINUSE':
      return {
        code: 'cutpoint.port_in_use',
        name,
        message: `port${port} is already in use; stop what holds it or choose another port (local runtime: --dynamodb-port/--s3-port)`,
      };
    case 'ECONNREFUSED':
      return {
        code: 'cutpoint.connection_refused',
        name,
        message: `connection refused${port ? ` on port${port}` : ''}: nothing listens there; for the local runtime run \`cutpoint local status\`, then \`cutpoint local up\``,
      };
    case 'ECONNRESET':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return {
        code: 'cutpoint.network_unreachable',
        name,
        message: `network error (${e.code}); check the endpoint and the network, then run the command again`,
      };
    default:
      return undefined;
  }
}

/**
 * Escapes C0/C1 control characters, DEL, line/paragraph separators and bidi overrides
 * (`\x1b`, `\n`, `\u202e`): text echoed from input stays one visible line.
 */
export function escapeControlCharacters(text: string, options: { keepNewlines?: boolean } = {}): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return options.keepNewlines ? c : '\\n';
    if (c === '\t') return c;
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
