import { parseQualifiedName } from './identifiers.js';
import { validateBindingRef, type BindingScope } from './manifest-bindings.js';
import type { Checker, Segment } from './manifest-checker.js';
import { qualityOf, type QualityKind } from './manifest-quality.js';
import { RouteSchema, TargetSchema, type WindowDocument } from './manifest-schema.js';
import { isRecord } from './manifest-shape.js';
import {
  DEFAULT_CHUNK_ROWS,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PART_ROWS,
  SQL_TARGET_MODES,
  TARGET_MODES,
  type BindingKind,
  type Route,
  type TargetMode,
} from './manifest-types.js';
import type { WindowPolicy } from './window.js';

/**
 * Routes: what RouteSchema cannot say by itself — the bindings a route names, the mode its
 * target binding publishes by, its quality rules for its kind, its part sizing — and the
 * parsed Route with its defaults.
 */

/** parts.ts MAX_CHUNKS_PER_PART (kept here so the manifest stays free of the parts module). */
const MAX_CHUNKS_PER_PART = 100_000;

const SOURCE_KINDS: readonly BindingKind[] = ['clickhouse'];
const TARGET_KINDS: readonly BindingKind[] = ['mssql', 'postgres', 'clickhouse'];

export function validateRoute(name: string, value: unknown, scope: BindingScope, check: Checker): Route | undefined {
  if (!isRecord(value)) return undefined;
  const path = ['routes', name];
  if (isRecord(value.source)) checkSource(value.source, [...path, 'source'], scope, check);
  const target = isRecord(value.target) ? checkTarget(value.target, [...path, 'target'], scope, check) : undefined;
  const mode = target && !check.has([...path, 'target']) ? target.mode : undefined;
  const quality = qualityOf(value.quality, [...path, 'quality'], mode, routeKind(value.target, scope), check);
  const rows = (key: string, fallback: number): number | undefined =>
    !Object.hasOwn(value, key) ? fallback : check.has([...path, key]) ? undefined : (value[key] as number);
  const chunkRows = rows('chunk_rows', DEFAULT_CHUNK_ROWS);
  // Default: DEFAULT_PART_ROWS, or fewer when chunks are so small that a part would exceed its chunk limit.
  const partRows = rows(
    'part_rows',
    Math.min(DEFAULT_PART_ROWS, (chunkRows ?? DEFAULT_CHUNK_ROWS) * MAX_CHUNKS_PER_PART),
  );
  if (chunkRows !== undefined && partRows !== undefined && Math.ceil(partRows / chunkRows) > MAX_CHUNKS_PER_PART) {
    check.add([...path, 'part_rows'], `part_rows / chunk_rows must not exceed ${MAX_CHUNKS_PER_PART} chunks per part`);
  }
  // A part is one Lambda invocation of whole chunks: a part smaller than one chunk would make
  // every part a partial chunk and the plan one part per bucket (up to 1,024 invocations).
  if (chunkRows !== undefined && partRows !== undefined && partRows < chunkRows) {
    check.add([...path, 'part_rows'], `must be at least chunk_rows (${chunkRows}): a part holds whole chunks`);
  }
  const parsed = RouteSchema.safeParse(value);
  if (check.has(path) || !parsed.success || !quality) return undefined;
  const r = parsed.data;
  const from =
    r.source.table !== undefined
      ? { kind: 'table' as const, table: parseQualifiedName(r.source.table)! }
      : { kind: 'query' as const, sql: r.source.query!.trim() };
  return {
    name,
    source: { binding: r.source.binding, from, timeColumn: r.source.time_column, keyColumns: r.source.key_columns },
    window: windowOf(r.window),
    target: {
      binding: r.target.binding,
      table: parseQualifiedName(r.target.table)!,
      keyColumns: r.target.key_columns,
      timeColumn: r.target.time_column ?? r.source.time_column,
      mode: r.target.mode,
    },
    quality,
    chunkRows: chunkRows!,
    partRows: partRows!,
    maxConcurrency: r.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
  };
}

function windowOf(w: WindowDocument): WindowPolicy {
  return w.kind === 'fixed'
    ? { kind: 'fixed', start: w.start, end: w.end }
    : { kind: 'rolling', days: w.days, boundary: w.boundary };
}

function checkSource(source: Record<string, unknown>, path: Segment[], scope: BindingScope, check: Checker): void {
  validateBindingRef(source.binding, [...path, 'binding'], scope, SOURCE_KINDS, 'source', check);
  if (Object.hasOwn(source, 'table') === Object.hasOwn(source, 'query'))
    check.add(path, 'needs exactly one of table or query');
}

/**
 * An SQL binding (mssql, postgres) publishes `schema.table` by replace_window or merge; a
 * clickhouse binding publishes `database.table` by exchange only (an owned candidate
 * exchanged with the target). A mode the binding cannot publish by is refused at `mode`
 * with `delivery.target_mode_unsupported`.
 */
function checkTarget(
  target: Record<string, unknown>,
  path: Segment[],
  scope: BindingScope,
  check: Checker,
): { mode: TargetMode } | undefined {
  const binding = validateBindingRef(target.binding, [...path, 'binding'], scope, TARGET_KINDS, 'target', check);
  const bindingKind = binding === undefined ? undefined : scope.bindings[binding]?.kind;
  const parsed = TargetSchema.safeParse(target);
  const mode = isTargetMode(target.mode) ? target.mode : undefined;
  if (mode !== undefined && bindingKind !== undefined && (mode === 'exchange') !== (bindingKind === 'clickhouse')) {
    check.add(
      [...path, 'mode'],
      bindingKind === 'clickhouse'
        ? 'a clickhouse target binding publishes only by mode exchange'
        : `exchange publishes only into a clickhouse target binding; an SQL target publishes by ${SQL_TARGET_MODES.join(' or ')}`,
      'delivery.target_mode_unsupported',
    );
  }
  return parsed.success ? { mode: parsed.data.mode } : undefined;
}

const isTargetMode = (v: unknown): v is TargetMode => (TARGET_MODES as readonly unknown[]).includes(v);

/**
 * Which quality rules the route's target calls for, read from the raw target so a target
 * refused for another reason still gets its quality block judged by the right rules: v2
 * for exchange / a clickhouse binding, sql for the SQL modes / bindings; undefined when
 * neither says, or they disagree (refused at target.mode).
 */
export function routeKind(target: unknown, scope: BindingScope): QualityKind | undefined {
  if (!isRecord(target)) return undefined;
  const byMode = isTargetMode(target.mode) ? (target.mode === 'exchange' ? 'v2' : 'sql') : undefined;
  const ref = target.binding;
  const kind = typeof ref === 'string' && Object.hasOwn(scope.bindings, ref) ? scope.bindings[ref]?.kind : undefined;
  const byBinding = kind === undefined ? undefined : kind === 'clickhouse' ? 'v2' : 'sql';
  if (byMode !== undefined && byBinding !== undefined && byMode !== byBinding) return undefined;
  return byMode ?? byBinding;
}
