import type middy from '@middy/core';
import { redact } from '../../src/domain/redact.js';

/** Own properties an error keeps as they are: its identity, which Step Functions and recovery match on. */
const IDENTITY = new Set(['name', 'code', 'cutPoint', 'state', 'missing']);
const MAX_CAUSE_DEPTH = 3;

function redactedValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redact(value);
  if (value instanceof Error) return redactedCopy(value, depth + 1);
  if (value === null || typeof value !== 'object') return value;
  // A driver's config, request or response object: never passed on.
  return '[redacted-object]';
}

/** A plain copy of a cause: its name and redacted message and stack, nothing else. */
function redactedCopy(error: Error, depth: number): Error | string {
  if (depth > MAX_CAUSE_DEPTH) return '[redacted-cause]';
  const copy = new Error(redact(error.message));
  copy.name = error.name;
  copy.stack = redact(error.stack ?? '');
  if (error.cause !== undefined) copy.cause = redactedValue(error.cause, depth);
  return copy;
}

/**
 * The error as it may leave a handler: the SAME error object (its class, `name` and `code`
 * are what Step Functions' Retry/Catch and the callers match on), with its message, stack,
 * cause and every other own string property passed through the one redactor
 * (src/domain/delivery/target-rules.ts `redact`), and every other own object property
 * (a driver's config or response) dropped. A thrown non-error becomes an Error with its
 * redacted text.
 */
export function redactError(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(redact(String(error)));
  for (const key of Object.getOwnPropertyNames(error)) {
    if (IDENTITY.has(key) || key === 'message' || key === 'stack' || key === 'cause') continue;
    const value: unknown = Reflect.get(error, key);
    // Reflect never throws on a read-only property of a driver's error (Lambda serializes only name, message and stack).
    if (typeof value === 'string') Reflect.set(error, key, redact(value));
    else if (typeof value === 'object' && value !== null) Reflect.deleteProperty(error, key);
  }
  Reflect.set(error, 'message', redact(error.message));
  if (error.stack !== undefined) Reflect.set(error, 'stack', redact(error.stack));
  if (error.cause !== undefined) Reflect.set(error, 'cause', redactedValue(error.cause, 0));
  return error;
}

/** The middy `onError` that redacts what leaves: registered last, so it runs before every other `onError`. */
export function redactingOnError(): middy.MiddlewareObj {
  return {
    onError: (request) => {
      request.error = redactError(request.error);
    },
  };
}
