import { isManifestName, isSqlIdentifier, parseQualifiedName, type QualifiedName } from './identifiers.js';
import type { ManifestIssue, ManifestIssueCode } from './manifest-types.js';

/**
 * Issue collection for manifest validation: every problem is recorded with its path (never
 * its value) and validation goes on, so one run reports them all, in document order.
 */

const MAX_SQL_CHARS = 65_536;
const MAX_ISSUES = 50;

export type Segment = string | number;

const PLAIN_SEGMENT = /^[A-Za-z0-9_-]+$/;

export function renderPath(path: readonly Segment[]): string {
  if (path.length === 0) return '(document)';
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (PLAIN_SEGMENT.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg.length > 64 ? `${seg.slice(0, 64)}…` : seg)}]`;
  }
  return out;
}

export class Checker {
  readonly issues: ManifestIssue[] = [];

  add(path: readonly Segment[], message: string, code: ManifestIssueCode = 'delivery.manifest_invalid'): undefined {
    if (this.issues.length < MAX_ISSUES) this.issues.push({ path: renderPath(path), code, message });
    return undefined;
  }

  /** A mapping with string keys, every key allowed, every required key present. */
  map(
    value: unknown,
    path: Segment[],
    allowed: readonly string[],
    required: readonly string[],
    alreadyReported: ReadonlySet<string> = new Set(),
  ): Map<string, unknown> | undefined {
    if (!(value instanceof Map)) return this.add(path, 'must be a mapping');
    for (const key of value.keys()) {
      if (typeof key !== 'string') this.add(path, 'keys must be plain strings');
      else if (!allowed.includes(key) && !alreadyReported.has(key)) {
        this.add([...path, key], `unknown key (expected one of ${allowed.join(', ')})`);
      }
    }
    for (const key of required) if (!value.has(key)) this.add([...path, key], 'is required');
    // Returned even with unknown keys, so the known ones are still checked and reported.
    return value as Map<string, unknown>;
  }

  /** A mapping of user-chosen names (routes, bindings) to entries. */
  namedEntries(value: unknown, path: Segment[], what: string): Array<[string, unknown]> {
    if (!(value instanceof Map)) return this.add(path, `must be a mapping of ${what} names`) ?? [];
    const out: Array<[string, unknown]> = [];
    for (const [key, entry] of value) {
      if (typeof key !== 'string' || !isManifestName(key)) {
        this.add(typeof key === 'string' ? [...path, key] : path, `${what} names must match [a-z][a-z0-9_-]{0,63}`);
      } else {
        out.push([key, entry]);
      }
    }
    return out;
  }

  string(value: unknown, path: Segment[]): string | undefined {
    if (typeof value !== 'string' || value.trim() === '') return this.add(path, 'must be a non-empty string');
    return value;
  }

  boolean(value: unknown, path: Segment[]): boolean | undefined {
    if (typeof value !== 'boolean') return this.add(path, 'must be true or false');
    return value;
  }

  integer(value: unknown, path: Segment[], min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      return this.add(path, `must be an integer in [${min}, ${max}]`);
    }
    return value;
  }

  oneOf<T extends string>(value: unknown, path: Segment[], options: readonly T[]): T | undefined {
    if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
      return this.add(path, `must be one of ${options.join(', ')}`);
    }
    return value as T;
  }

  identifier(value: unknown, path: Segment[]): string | undefined {
    if (!isSqlIdentifier(value))
      return this.add(path, 'must be an SQL identifier ([A-Za-z_][A-Za-z0-9_]*, at most 63 characters)');
    return value;
  }

  qualified(value: unknown, path: Segment[], form: string): QualifiedName | undefined {
    const q = parseQualifiedName(value);
    if (!q) return this.add(path, `must be ${form}, each part an SQL identifier`);
    return q;
  }

  /**
   * A list of distinct identifiers. Duplicates compare case-insensitively: SQL Server's
   * default collations do, so `[id, ID]` names one column twice.
   */
  identifierList(value: unknown, path: Segment[], min: number, max: number): string[] | undefined {
    if (!Array.isArray(value)) return this.add(path, 'must be a list of SQL identifiers');
    if (value.length < min || value.length > max) {
      return this.add(
        path,
        min > 0 ? `must list between ${min} and ${max} columns` : `must list at most ${max} columns`,
      );
    }
    const seen = new Map<string, number>();
    let ok = true;
    value.forEach((item, i) => {
      if (this.identifier(item, [...path, i]) === undefined) {
        ok = false;
        return;
      }
      const lower = (item as string).toLowerCase();
      const first = seen.get(lower);
      if (first !== undefined) {
        ok = false;
        this.add([...path, i], `duplicates ${renderPath([...path, first])}`);
      } else {
        seen.set(lower, i);
      }
    });
    return ok ? (value as string[]) : undefined;
  }

  /** One SELECT (or WITH … SELECT) statement; `;` is refused so no second statement rides along. */
  select(value: unknown, path: Segment[]): string | undefined {
    const sql = this.string(value, path);
    if (sql === undefined) return undefined;
    if (sql.length > MAX_SQL_CHARS) return this.add(path, `must be at most ${MAX_SQL_CHARS} characters`);
    if (!/^(select|with)\b/i.test(sql.trim()))
      return this.add(path, 'must be a single SELECT (or WITH … SELECT) statement');
    if (sql.includes(';')) return this.add(path, "must be a single statement without ';'");
    return sql.trim();
  }
}
