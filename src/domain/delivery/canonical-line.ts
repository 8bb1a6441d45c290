import { ValidationError } from '../errors.js';
import type { JsonValue } from './source-types.js';
import type { TargetRow } from './target-types.js';

/**
 * A row's canonical JSONL line, without its newline (the form src/delivery/chunk-codec.ts
 * defines: the chunk's columns as keys in order, JSON values, nested object keys sorted,
 * `JSON.stringify` spelling; anything that would not survive the round trip refused with
 * `delivery.chunk_row_invalid`). One speller per column list: the columns are checked once.
 */
export class LineSpeller {
  /** The columns as quoted JSON keys. */
  readonly names: string[];

  constructor(readonly columns: readonly string[]) {
    this.names = assertCodecColumns(columns);
  }

  /** Row `index`'s line (the index names it in a refusal). */
  line(row: TargetRow, index: number): string {
    return flatLine(row, this.columns) ?? spellLine(row, this.columns, this.names, index);
  }
}

/**
 * The fast path of `spellLine`, for the common row: a plain object whose own keys are
 * exactly `columns` in order and whose values are all scalars (string, boolean, null,
 * finite number). Its canonical line is then `JSON.stringify(row)` — the same spelling
 * `spellLine` produces value by value — without a per-value call. Anything else
 * (another key order, a nested value, a value that is refused) returns undefined and
 * takes the checked path.
 */
function flatLine(row: TargetRow, columns: readonly string[]): string | undefined {
  if (row === null || typeof row !== 'object' || Object.getPrototypeOf(row) !== Object.prototype) return undefined;
  const keys = Object.keys(row);
  if (keys.length !== columns.length) return undefined;
  for (let c = 0; c < keys.length; c++) {
    const key = keys[c] as string;
    if (key !== columns[c]) return undefined;
    const value = row[key];
    if (value === null) continue;
    const type = typeof value;
    if (type === 'string' || type === 'boolean') continue;
    if (type === 'number' && Number.isFinite(value)) continue;
    return undefined;
  }
  return JSON.stringify(row);
}

/** One row's canonical line, without its newline, value by value. */
export function spellLine(row: TargetRow, columns: readonly string[], names: readonly string[], index: number): string {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) throw invalidRow(index, 'is not an object');
  const keys = Object.keys(row);
  if (keys.length !== columns.length)
    throw invalidRow(index, `has ${keys.length} keys, expected the ${columns.length} chunk columns`);
  let line = '{';
  for (let c = 0; c < columns.length; c++) {
    const column = columns[c] as string;
    if (!Object.hasOwn(row, column)) throw invalidRow(index, `lacks column ${names[c]}`);
    if (c > 0) line += ',';
    line += `${names[c]}:${canonicalValue(row[column], index, column)}`;
  }
  return `${line}}`;
}

function canonicalValue(value: unknown, index: number, column: string): string {
  return JSON.stringify(normalise(value, index, column));
}

function normalise(value: unknown, index: number, column: string): JsonValue {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalidRow(index, `column ${column}: ${String(value)} is not a JSON number`);
      return value;
    case 'object': {
      if (Array.isArray(value)) return value.map((v) => normalise(v, index, column));
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw invalidRow(index, `column ${column}: ${describeType(value)} is not a JSON value`);
      }
      // Null prototype: a key spelled `__proto__` (a Map key in the data) stays a key.
      const out = Object.create(null) as Record<string, JsonValue>;
      for (const key of Object.keys(value).sort())
        out[key] = normalise((value as Record<string, unknown>)[key], index, column);
      return out;
    }
    default:
      throw invalidRow(index, `column ${column}: ${typeof value} is not a JSON value`);
  }
}

function describeType(value: object): string {
  if (value instanceof Date) return 'a Date';
  if (value instanceof Uint8Array) return 'a byte array';
  return `a ${value.constructor?.name ?? 'non-plain'} object`;
}

/** The columns as quoted JSON keys; distinct non-empty strings. */
export function assertCodecColumns(columns: readonly string[]): string[] {
  if (!Array.isArray(columns) || columns.length === 0)
    throw new ValidationError('delivery.chunk_invalid', 'a chunk needs at least one column');
  const seen = new Set<string>();
  return columns.map((c) => {
    if (typeof c !== 'string' || c === '')
      throw new ValidationError('delivery.chunk_invalid', 'chunk columns must be non-empty strings');
    if (seen.has(c))
      throw new ValidationError('delivery.chunk_invalid', `chunk column ${JSON.stringify(c)} is listed twice`);
    seen.add(c);
    return JSON.stringify(c);
  });
}

function invalidRow(index: number, message: string): ValidationError {
  return new ValidationError('delivery.chunk_row_invalid', `row ${index}: ${message}`);
}
