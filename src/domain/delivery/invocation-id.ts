import { sha256Hex } from '../digest.js';
import { ValidationError } from '../errors.js';

/**
 * Invocation ids: their encoding from random bytes or an execution ARN, and their
 * validation with refusals that name the broken part of the rule.
 */

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
export const INVOCATION_RANDOM_BYTES = 16;
/**
 * `inv-` + 26 lower-case RFC 4648 base32 characters (128 random bits, unpadded). The
 * last character carries 3 bits and 2 zero bits, so only a, e, i, m, q, u, y and 4 may
 * end an id: every valid id decodes to exactly one byte string and back.
 */
const INVOCATION_ID = /^inv-[a-z2-7]{25}[aeimquy4]$/;

/** Encodes caller-supplied random bytes (the caller owns the entropy source, so this stays pure). */
export function invocationIdFrom(random: Uint8Array): string {
  if (!(random instanceof Uint8Array) || random.length !== INVOCATION_RANDOM_BYTES) {
    throw new ValidationError(
      'delivery.invocation_id_invalid',
      `an invocation id needs exactly ${INVOCATION_RANDOM_BYTES} random bytes`,
    );
  }
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of random) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return `inv-${out}`;
}

/**
 * The invocation id of a deliver-window execution started without one (the Step Functions
 * console, an EventBridge schedule): the first 16 bytes of SHA-256 over the execution's
 * ARN. Deterministic, so Begin's retries and the automatic reconcile (which knows the
 * failed execution's ARN) all name the same invocation; unique, because execution ARNs
 * are never reused.
 */
export function invocationIdOfExecution(executionArn: string): string {
  if (typeof executionArn !== 'string' || !executionArn.startsWith('arn:') || !executionArn.includes(':execution:')) {
    throw new ValidationError(
      'delivery.execution_invalid',
      'an invocation id can be derived only from a Step Functions execution ARN',
    );
  }
  const hex = sha256Hex(executionArn).slice(0, INVOCATION_RANDOM_BYTES * 2);
  return invocationIdFrom(Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16)));
}

/**
 * The invocation a deliver-window (or publish-clickhouse) execution runs: the
 * `invocationId` its input gives, or the one derived from its execution ARN
 * (invocationIdOfExecution) — what Begin uses, and what the automatic reconcile and the
 * recovery dispatcher's notice name for a failed execution.
 */
export function invocationIdOfRun(invocationId: unknown, executionArn: string | undefined): string {
  return invocationId === undefined ? invocationIdOfExecution(executionArn ?? '') : validateInvocationId(invocationId);
}

export function isInvocationId(value: unknown): value is string {
  return typeof value === 'string' && INVOCATION_ID.test(value);
}

/**
 * Validates an operator-supplied invocation id. The message never echoes the input: an
 * operator who pastes the wrong clipboard must not see it copied into logs.
 */
export function validateInvocationId(value: unknown): string {
  if (!isInvocationId(value))
    throw new ValidationError(
      'delivery.invocation_id_invalid',
      `invocation id ${invocationIdProblem(value)}; ${INVOCATION_ID_RULE}`,
    );
  return value;
}

/** The whole rule, as every refusal states it. */
export const INVOCATION_ID_RULE =
  'an invocation id is inv- followed by 26 lower-case base32 characters [a-z2-7], the last one of a, e, i, m, q, u, y or 4 (it carries the last 3 of 128 random bits; `cutpoint delivery run` makes one)';

/** Which part of the rule a value breaks, without echoing it. */
function invocationIdProblem(value: unknown): string {
  if (typeof value !== 'string') return 'is not text';
  if (!value.startsWith('inv-')) return 'does not start with inv-';
  const body = value.slice(4);
  if (body.length !== 26) return `has ${body.length} characters after inv-, not 26`;
  const bad = [...body].findIndex((c) => !BASE32.includes(c));
  if (bad >= 0) return `has a character outside [a-z2-7] at position ${bad + 5}`;
  return 'ends in a character that cannot end an id';
}
