/**
 * The IPC protocol between the bounded reader's parent (runner.ts) and its child
 * (serve.ts). Child → parent: one `{ready: true}` once it listens, then exactly one
 * `{token, results}` or `{token, error, started}`. Parent → child: one `{start}`.
 * Both sides validate; the parent trusts nothing the child sends beyond these shapes and
 * keeps only safe identifier-like error fields (no message text, no values).
 */
import type { BoundedReadError } from '../../ports/bounded-reader.js';

/** Set in the child's environment; a Lambda bundle re-run with it serves its worker instead of a handler. */
export const READER_CHILD_ENV = 'CUTPOINT_READER_CHILD';

export interface StartMessage {
  start: { entry: string; token: string; input: unknown };
}

export interface ReadyMessage {
  ready: true;
}

export type SettleMessage =
  { token: string; results: unknown } | { token: string; error: BoundedReadError; started: boolean };

/** An identifier-like field: a class name, an error name, a numeric or symbolic code. */
const SAFE_FIELD = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

function safeField(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isInteger(value) ? String(value) : value;
  return typeof text === 'string' && SAFE_FIELD.test(text) ? text : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps `class`, `code` and `type` only when they are identifier-like; `fallbackClass` otherwise. */
export function sanitizeError(value: unknown, fallbackClass: string): BoundedReadError {
  const fields = isRecord(value) ? value : {};
  const code = safeField(fields.code);
  const type = safeField(fields.type);
  return {
    class: safeField(fields.class) ?? fallbackClass,
    ...(code !== undefined ? { code } : {}),
    ...(type !== undefined ? { type } : {}),
  };
}

/** The child's default classification of a thrown value: its `name` as type, its `code` as code. */
export function describeThrown(error: unknown): BoundedReadError {
  const fields = isRecord(error) || error instanceof Error ? (error as unknown as Record<string, unknown>) : {};
  return sanitizeError({ class: 'WorkerFailed', type: fields.name, code: fields.code }, 'WorkerFailed');
}

export function isReady(message: unknown): message is ReadyMessage {
  return isRecord(message) && message.ready === true && !('token' in message);
}

export function isStart(message: unknown): message is StartMessage {
  return (
    isRecord(message) &&
    isRecord(message.start) &&
    typeof message.start.entry === 'string' &&
    typeof message.start.token === 'string'
  );
}

export function carriesToken(message: unknown, token: string): message is Record<string, unknown> {
  return isRecord(message) && message.token === token;
}

/** What the parent makes of a message carrying its token. */
export type Settlement =
  { kind: 'RESULT'; results: unknown } | { kind: 'ERROR'; error: BoundedReadError; started: boolean };

export function settlementOf(message: Record<string, unknown>): Settlement {
  if ('results' in message && !('error' in message)) return { kind: 'RESULT', results: message.results };
  if ('error' in message && !('results' in message)) {
    return { kind: 'ERROR', error: sanitizeError(message.error, 'WorkerFailed'), started: message.started !== false };
  }
  return { kind: 'ERROR', error: { class: 'ProtocolViolation' }, started: true };
}
