import { hostname, userInfo } from 'node:os';
import { quoted } from '../../../domain/echo.js';
import { validateAttemptId } from '../../../domain/stream.js';
import { UsageError } from '../../io.js';

/** Option helpers of the stream commands (src/cli/commands/stream.ts and its verbs). */
export type Values = Record<string, string | boolean | undefined>;

/** A required non-negative integer option; anything else is a grammar error. */
export function integer(values: Values, name: string): number {
  const raw = values[name];
  if (typeof raw !== 'string') throw new UsageError(`--${name} is required`);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new UsageError(`--${name} must be a non-negative integer, got ${quoted(raw)}`);
  return Number(raw);
}

/** An integer option in [min, max]; anything else is a grammar error. */
export function integerIn(values: Values, name: string, min: number, max: number): number {
  const n = integer(values, name);
  if (n < min || n > max) throw new UsageError(`--${name} must be in [${min}, ${max}], got ${n}`);
  return n;
}

/** `$USER@hostname`, kept to the owner alphabet [A-Za-z0-9._@:-]. */
export function defaultOwner(): string {
  let user = process.env.USER ?? '';
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'cutpoint';
    }
  }
  const owner = `${user}@${hostname()}`
    .replace(/[^A-Za-z0-9._@:-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
  return owner || 'cutpoint';
}

/** --attempt, required and valid. */
export function attemptOf(values: Values): string {
  if (typeof values.attempt !== 'string') throw new UsageError('--attempt ID is required');
  return validateAttemptId(values.attempt);
}
