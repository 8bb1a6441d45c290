import { ownEntry } from '../own-entry.js';
import { isOwnedStagingName, STAGING_PREFIX } from './identifiers.js';
import { validateBindingRef, type BindingScope } from './manifest-bindings.js';
import type { Checker, Segment } from './manifest-checker.js';
import { validateQuality, type QualityKind } from './manifest-quality.js';
import {
  DEFAULT_CHUNK_ROWS,
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_PART_ROWS,
  MAX_CHUNK_ROWS,
  MAX_CONCURRENCY,
  MAX_PART_ROWS,
  SQL_TARGET_MODES,
  TARGET_MODES,
  type BindingKind,
  type Route,
  type SourceRelation,
  type SourceSpec,
  type TargetSpec,
} from './manifest-types.js';
import {
  MAX_ROLLING_DAYS,
  parseUtcTimestamp,
  ROLLING_BOUNDARIES,
  type RollingBoundary,
  type WindowPolicy,
} from './window.js';

/** Routes: a route's source, window, target and quality rules, and its part sizing. */

/** parts.ts MAX_CHUNKS_PER_PART (kept here so the manifest stays free of the parts module). */
const MAX_CHUNKS_PER_PART = 100_000;
const MAX_KEY_COLUMNS = 32;

const SOURCE_KINDS: readonly BindingKind[] = ['clickhouse'];
const TARGET_KINDS: readonly BindingKind[] = ['mssql', 'postgres', 'clickhouse'];

export function validateRoute(name: string, value: unknown, scope: BindingScope, check: Checker): Route | undefined {
  const path = ['routes', name];
  const map = check.map(
    value,
    path,
    ['source', 'window', 'target', 'quality', 'chunk_rows', 'part_rows', 'max_concurrency'],
    ['source', 'window', 'target'],
  );
  if (!map) return undefined;
  const before = check.issues.length;
  const source = map.has('source') ? validateSource(map.get('source'), [...path, 'source'], scope, check) : undefined;
  const window = map.has('window') ? validateWindowPolicy(map.get('window'), [...path, 'window'], check) : undefined;
  const target = map.has('target')
    ? validateTarget(map.get('target'), [...path, 'target'], scope, source, check)
    : undefined;
  const kind = map.has('target') ? qualityKindOf(map.get('target'), scope) : undefined;
  const quality = validateQuality(map.get('quality'), [...path, 'quality'], target?.mode, kind, check);
  const chunkRows = map.has('chunk_rows')
    ? check.integer(map.get('chunk_rows'), [...path, 'chunk_rows'], 1, MAX_CHUNK_ROWS)
    : DEFAULT_CHUNK_ROWS;
  // Default: DEFAULT_PART_ROWS, or fewer when chunks are so small that a part would exceed its chunk limit.
  const defaultPartRows = Math.min(DEFAULT_PART_ROWS, (chunkRows ?? DEFAULT_CHUNK_ROWS) * MAX_CHUNKS_PER_PART);
  const partRows = map.has('part_rows')
    ? check.integer(map.get('part_rows'), [...path, 'part_rows'], 1, MAX_PART_ROWS)
    : defaultPartRows;
  const maxConcurrency = map.has('max_concurrency')
    ? check.integer(map.get('max_concurrency'), [...path, 'max_concurrency'], 1, MAX_CONCURRENCY)
    : DEFAULT_MAX_CONCURRENCY;
  if (chunkRows !== undefined && partRows !== undefined && Math.ceil(partRows / chunkRows) > MAX_CHUNKS_PER_PART) {
    check.add([...path, 'part_rows'], `part_rows / chunk_rows must not exceed ${MAX_CHUNKS_PER_PART} chunks per part`);
  }
  // A part is one Lambda invocation of whole chunks: a part smaller than one chunk would make
  // every part a partial chunk and the plan one part per bucket (up to 1,024 invocations).
  if (chunkRows !== undefined && partRows !== undefined && partRows < chunkRows) {
    check.add([...path, 'part_rows'], `must be at least chunk_rows (${chunkRows}): a part holds whole chunks`);
  }
  if (
    check.issues.length > before ||
    !source ||
    !window ||
    !target ||
    !quality ||
    chunkRows === undefined ||
    partRows === undefined ||
    maxConcurrency === undefined
  )
    return undefined;
  return { name, source, window, target, quality, chunkRows, partRows, maxConcurrency };
}

function validateSource(value: unknown, path: Segment[], scope: BindingScope, check: Checker): SourceSpec | undefined {
  const map = check.map(
    value,
    path,
    ['binding', 'table', 'query', 'time_column', 'key_columns'],
    ['binding', 'time_column', 'key_columns'],
  );
  if (!map) return undefined;
  const before = check.issues.length;
  const binding = map.has('binding')
    ? validateBindingRef(map.get('binding'), [...path, 'binding'], scope, SOURCE_KINDS, 'source', check)
    : undefined;
  let from: SourceRelation | undefined;
  if (map.has('table') === map.has('query')) {
    check.add(path, 'needs exactly one of table or query');
  } else if (map.has('table')) {
    const table = check.qualified(map.get('table'), [...path, 'table'], 'database.table');
    if (table) from = { kind: 'table', table };
  } else {
    const sql = check.select(map.get('query'), [...path, 'query']);
    if (sql !== undefined) from = { kind: 'query', sql };
  }
  const timeColumn = map.has('time_column')
    ? check.identifier(map.get('time_column'), [...path, 'time_column'])
    : undefined;
  const keyColumns = map.has('key_columns')
    ? check.identifierList(map.get('key_columns'), [...path, 'key_columns'], 1, MAX_KEY_COLUMNS)
    : undefined;
  if (check.issues.length > before || !binding || !from || !timeColumn || !keyColumns) return undefined;
  return { binding, from, timeColumn, keyColumns };
}

/**
 * The target. An SQL binding (mssql, postgres) publishes `schema.table` by replace_window
 * or merge; a clickhouse binding publishes `database.table` by exchange only (an owned
 * candidate exchanged with the target). A mode the binding cannot publish by is refused at
 * `mode` with `delivery.target_mode_unsupported`.
 */
function validateTarget(
  value: unknown,
  path: Segment[],
  scope: BindingScope,
  source: SourceSpec | undefined,
  check: Checker,
): TargetSpec | undefined {
  const map = check.map(
    value,
    path,
    ['binding', 'table', 'key_columns', 'time_column', 'mode'],
    ['binding', 'table', 'key_columns', 'mode'],
  );
  if (!map) return undefined;
  const before = check.issues.length;
  const binding = map.has('binding')
    ? validateBindingRef(map.get('binding'), [...path, 'binding'], scope, TARGET_KINDS, 'target', check)
    : undefined;
  const bindingKind = binding === undefined ? undefined : scope.bindings[binding]?.kind;
  const form = bindingKind === 'clickhouse' ? 'database.table' : 'schema.table';
  let table = map.has('table') ? check.qualified(map.get('table'), [...path, 'table'], form) : undefined;
  if (table && isOwnedStagingName(table.name)) {
    // Retirement drops owned stages by their derived names; an authored table in that
    // namespace could be mistaken for one.
    table = check.add([...path, 'table'], `table names beginning ${STAGING_PREFIX} are reserved for owned staging`);
  }
  const keyColumns = map.has('key_columns')
    ? check.identifierList(map.get('key_columns'), [...path, 'key_columns'], 1, MAX_KEY_COLUMNS)
    : undefined;
  const timeColumn = map.has('time_column')
    ? check.identifier(map.get('time_column'), [...path, 'time_column'])
    : source?.timeColumn;
  let mode = map.has('mode') ? check.oneOf(map.get('mode'), [...path, 'mode'], TARGET_MODES) : undefined;
  if (mode !== undefined && bindingKind !== undefined && (mode === 'exchange') !== (bindingKind === 'clickhouse')) {
    mode = check.add(
      [...path, 'mode'],
      bindingKind === 'clickhouse'
        ? 'a clickhouse target binding publishes only by mode exchange'
        : `exchange publishes only into a clickhouse target binding; an SQL target publishes by ${SQL_TARGET_MODES.join(' or ')}`,
      'delivery.target_mode_unsupported',
    );
  }
  if (check.issues.length > before || !binding || !table || !keyColumns || !timeColumn || !mode) return undefined;
  return { binding, table, keyColumns, timeColumn, mode };
}

/**
 * Which quality rules the route's target calls for, read from the raw target so a target
 * refused for another reason still gets its quality block judged by the right rules: v2
 * for exchange / a clickhouse binding, sql for the SQL modes / bindings; undefined when
 * neither says, or they disagree (refused at target.mode).
 */
function qualityKindOf(value: unknown, scope: BindingScope): QualityKind | undefined {
  if (!(value instanceof Map)) return undefined;
  const mode: unknown = value.get('mode');
  const byMode =
    typeof mode === 'string' && (TARGET_MODES as readonly string[]).includes(mode)
      ? mode === 'exchange'
        ? 'v2'
        : 'sql'
      : undefined;
  const ref: unknown = value.get('binding');
  const kind = typeof ref === 'string' ? ownEntry(scope.bindings, ref)?.kind : undefined;
  const byBinding = kind === undefined ? undefined : kind === 'clickhouse' ? 'v2' : 'sql';
  if (byMode !== undefined && byBinding !== undefined && byMode !== byBinding) return undefined;
  return byMode ?? byBinding;
}

function validateWindowPolicy(value: unknown, path: Segment[], check: Checker): WindowPolicy | undefined {
  if (!(value instanceof Map)) return check.add(path, 'must be a mapping');
  if (!value.has('kind')) return check.add([...path, 'kind'], 'is required (fixed or rolling)');
  const kind = check.oneOf(value.get('kind'), [...path, 'kind'], ['fixed', 'rolling'] as const);
  if (kind === 'fixed') {
    const map = check.map(value, path, ['kind', 'start', 'end'], ['start', 'end']);
    if (!map || !map.has('start') || !map.has('end')) return undefined;
    const bound = (key: 'start' | 'end'): number | undefined => {
      const v = map.get(key);
      const ms = typeof v === 'string' ? parseUtcTimestamp(v) : undefined;
      if (ms === undefined)
        return check.add(
          [...path, key],
          'must be an exact UTC timestamp such as 2026-11-01T00:00:00Z (seconds and Z required)',
        );
      return ms;
    };
    const start = bound('start');
    const end = bound('end');
    if (start === undefined || end === undefined) return undefined;
    if (start >= end) return check.add([...path, 'end'], 'must be after start (the window is half-open [start, end))');
    return { kind: 'fixed', start: map.get('start') as string, end: map.get('end') as string };
  }
  if (kind === 'rolling') {
    const map = check.map(value, path, ['kind', 'days', 'boundary'], ['days', 'boundary']);
    if (!map) return undefined;
    const days = map.has('days') ? check.integer(map.get('days'), [...path, 'days'], 1, MAX_ROLLING_DAYS) : undefined;
    const boundary = map.has('boundary')
      ? check.oneOf<RollingBoundary>(map.get('boundary'), [...path, 'boundary'], ROLLING_BOUNDARIES)
      : undefined;
    if (days === undefined || boundary === undefined) return undefined;
    return { kind: 'rolling', days, boundary };
  }
  return undefined;
}
