import type * as z from 'zod';
import { renderPath, type Checker, type Segment } from './manifest-checker.js';
import type { ManifestIssueCode } from './manifest-types.js';

/**
 * From a parsed YAML document to what the schema (manifest-schema.ts) reads, and from the
 * schema's issues to the manifest's: a path, a stable code, a message that never holds the
 * value (docs/delivery.md "The route manifest").
 */

/** A plain (null-prototype) object or array copy of YAML's maps; a key that is no plain string is refused and left out. */
export function toPlain(value: unknown, path: Segment[], check: Checker): unknown {
  if (Array.isArray(value)) return value.map((item, i) => toPlain(item, [...path, i], check));
  if (!(value instanceof Map)) return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of value) {
    if (typeof key !== 'string') check.add(path, 'keys must be plain strings');
    // Never a manifest key, and a prototype name in an object is a trap: refused here, once.
    else if (key === '__proto__') check.add([...path, key], 'is not a valid key or name');
    else out[key] = toPlain(item, [...path, key], check);
  }
  return out;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Adds the schema's issues, if any, under `base` (where `data`, what it parsed, sits); whether it parsed. */
export function addShapeIssues(
  result: z.ZodSafeParseResult<unknown>,
  data: unknown,
  check: Checker,
  base: Segment[] = [],
): boolean {
  if (result.success) return true;
  for (const issue of result.error.issues) {
    const at = issue.path.map((seg) => (typeof seg === 'number' ? seg : String(seg)));
    const path = [...base, ...at];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) check.add([...path, key], issue.message);
    } else if (issue.code === 'invalid_key') {
      check.add(path, issue.issues[0]?.message ?? issue.message);
    } else if (issue.code === 'custom') {
      const params = (issue.params ?? {}) as { code?: ManifestIssueCode; duplicates?: Segment[] };
      const message = params.duplicates
        ? `duplicates ${renderPath([...path.slice(0, path.length - params.duplicates.length), ...params.duplicates])}`
        : issue.message;
      check.add(path, message, params.code);
    } else if (absent(data, at)) {
      // The one discriminated union is the window's kind.
      check.add(path, issue.code === 'invalid_union' ? 'is required (fixed or rolling)' : 'is required');
    } else {
      check.add(path, issue.message, codeAt(path));
    }
  }
  return false;
}

/** A key the document does not have (as opposed to one with a wrong value). */
function absent(data: unknown, path: readonly Segment[]): boolean {
  let node = data;
  for (const seg of path.slice(0, -1)) node = isRecord(node) || Array.isArray(node) ? (node as never)[seg] : undefined;
  const last = path[path.length - 1];
  return last !== undefined && (isRecord(node) || Array.isArray(node)) && !Object.hasOwn(node, last);
}

/** The stable codes a shape issue carries besides delivery.manifest_invalid. */
function codeAt(path: readonly Segment[]): ManifestIssueCode | undefined {
  return path[path.length - 2] === 'quality' && path[path.length - 1] === 'capsule'
    ? 'quality.capsule_version_unsupported'
    : undefined;
}
