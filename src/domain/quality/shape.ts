import { EvidenceInvalidError } from './errors.js';

/**
 * Strict readers for stored quality documents (capsule items, evidence bodies). Anything
 * that is not exactly the expected shape is `malformed` (docs/rules.md#quality-evidence): never
 * a default, never a guess, never a pass (N2). Messages name the field path, never its value.
 */

export type Fields = Record<string, unknown>;

export function malformed(path: string, what: string): EvidenceInvalidError {
  return new EvidenceInvalidError('malformed', `${path || 'document'}: ${what}`);
}

/** A plain object whose keys are all in `required` ∪ `optional`, with every required key present. */
export function record(
  value: unknown,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): Fields {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed(path, 'expected an object');
  const fields = value as Fields;
  const allowed = new Set([...required, ...optional]);
  for (const key of Object.keys(fields)) {
    if (!allowed.has(key)) throw malformed(path, `unexpected field ${JSON.stringify(key.slice(0, 40))}`);
  }
  for (const key of required) {
    if (fields[key] === undefined) throw malformed(join(path, key), 'missing');
  }
  return fields;
}

export function join(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
}

const TEXT = /^[\x21-\x7e]{1,256}$/;

/** Printable ASCII without spaces, 1–256 characters (ids, keys, tokens). */
export function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || !TEXT.test(value)) throw malformed(path, 'expected a non-empty printable string');
  return value;
}

/** Any non-empty string of at most `max` characters (SQL, names with spaces). */
export function anyText(value: unknown, path: string, max = 65_536): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw malformed(path, 'expected a non-empty string');
  return value;
}

const HEX64 = /^[0-9a-f]{64}$/;

export function hex64(value: unknown, path: string): string {
  if (typeof value !== 'string' || !HEX64.test(value)) throw malformed(path, 'expected 64 lower-case hex characters');
  return value;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function uuid(value: unknown, path: string): string {
  if (typeof value !== 'string' || !UUID.test(value)) throw malformed(path, 'expected a lower-case UUID');
  return value;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** An ISO-8601 UTC instant (`…Z`) that parses to a real date. */
export function instant(value: unknown, path: string): string {
  if (typeof value !== 'string' || !ISO.test(value) || Number.isNaN(Date.parse(value))) {
    throw malformed(path, 'expected an ISO-8601 UTC instant');
  }
  return value;
}

export function positiveInt(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    throw malformed(path, 'expected a positive integer');
  return value;
}

export function nonNegativeInt(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw malformed(path, 'expected a non-negative integer');
  return value;
}

export function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw malformed(path, `expected one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function exactly<T>(value: unknown, path: string, expected: T): T {
  if (value !== expected) throw malformed(path, `expected ${JSON.stringify(expected)}`);
  return expected;
}

export function list<T>(value: unknown, path: string, item: (v: unknown, p: string) => T): T[] {
  if (!Array.isArray(value)) throw malformed(path, 'expected an array');
  return value.map((v, i) => item(v, join(path, i)));
}

/** Calls `read` only when the field is present (`undefined` stays absent; `null` is malformed). */
export function optional<T>(
  fields: Fields,
  key: string,
  path: string,
  read: (v: unknown, p: string) => T,
): T | undefined {
  const value = fields[key];
  return value === undefined ? undefined : read(value, join(path, key));
}
