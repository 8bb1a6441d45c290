import { renderPath, type Checker, type Segment } from './manifest-checker.js';
import { validateGovernance, refuseDegrading, V2_QUALITY_KEYS } from './manifest-governance.js';
import type { QualityAssertion, QualityRules, TargetMode } from './manifest-types.js';

/**
 * A route's quality rules. Two kinds of route read them:
 * - `sql` (mssql/postgres target): the rules run on the owned stage before publication;
 *   assertions name it `{staging}`; no capsule, no governance settings.
 * - `v2` (clickhouse exchange target, `capsule: v2` required): the rules are the original
 *   probes of a quality capsule, bound to the candidate, then to the published target;
 *   assertions name that relation `{relation}`; every probe is required, so severities and
 *   switches that would degrade one are refused (`quality.required_cannot_degrade`).
 * `undefined` when the target does not say which (it is refused there): the rules are
 * checked for shape only, so one mistake is not reported twice.
 * A block present but empty (`quality: {}`), or one that turns every check off, is
 * refused: no check is ever dropped by accident (without a block, the defaults apply).
 */
export type QualityKind = 'sql' | 'v2';

const MAX_NOT_NULL = 256;
const MAX_ASSERTIONS = 64;
const ASSERTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
const PLACEHOLDER = /\{([^{}]*)\}/g;

const RULE_KEYS = ['row_count_matches_receipts', 'unique_keys', 'not_null', 'assertions'] as const;
const ASSERTION_KEYS = ['name', 'sql', 'expect'] as const;

export function validateQuality(
  value: unknown,
  path: Segment[],
  mode: TargetMode | undefined,
  kind: QualityKind | undefined,
  check: Checker,
): QualityRules | undefined {
  const raw = value === undefined ? new Map<string, unknown>() : value;
  const before = check.issues.length;
  // Keys refused with their own code here are not reported again as unknown.
  let handled = new Set<string>();
  if (raw instanceof Map && kind === 'v2') handled = refuseDegrading(raw, path, check);
  if (raw instanceof Map && kind === 'sql') handled = refuseV2Settings(raw, path, check);
  const map = check.map(raw, path, kind === 'sql' ? RULE_KEYS : [...RULE_KEYS, ...V2_QUALITY_KEYS], [], handled);
  if (!map) return undefined;
  const governance = kind === 'sql' ? undefined : validateGovernance(map, path, kind === 'v2', check);
  const rowCountMatchesReceipts = map.has('row_count_matches_receipts')
    ? check.boolean(map.get('row_count_matches_receipts'), [...path, 'row_count_matches_receipts'])
    : true;
  // Seed 000 N3: the published generation must hold exactly the sealed receipts' rows, and a
  // governed route may not turn that check off (the other rules choose WHAT to check).
  if (kind === 'v2' && rowCountMatchesReceipts === false) {
    check.add(
      [...path, 'row_count_matches_receipts'],
      'must be true on a governed (capsule v2) route: the row count against the sealed receipts is never turned off',
      'quality.required_cannot_degrade',
    );
  }
  // MERGE (SQL Server) and ON CONFLICT (PostgreSQL) fail or become order-dependent when
  // two staged rows share a key, so merge always checks uniqueness first.
  let uniqueKeys = map.has('unique_keys')
    ? check.boolean(map.get('unique_keys'), [...path, 'unique_keys'])
    : mode === 'merge';
  if (uniqueKeys === false && mode === 'merge' && map.has('unique_keys')) {
    uniqueKeys = check.add(
      [...path, 'unique_keys'],
      'must be true when target.mode is merge (merge on keys needs unique keys)',
    );
  }
  const notNull = map.has('not_null')
    ? check.identifierList(map.get('not_null'), [...path, 'not_null'], 0, MAX_NOT_NULL)
    : [];
  const assertions: QualityAssertion[] = [];
  if (map.has('assertions')) {
    const list = map.get('assertions');
    if (!Array.isArray(list)) check.add([...path, 'assertions'], 'must be a list');
    else if (list.length > MAX_ASSERTIONS)
      check.add([...path, 'assertions'], `must list at most ${MAX_ASSERTIONS} assertions`);
    else {
      const names = new Map<string, number>();
      list.forEach((item, i) => {
        const a = validateAssertion(item, [...path, 'assertions', i], kind, check);
        if (!a) return;
        const first = names.get(a.name);
        if (first !== undefined)
          check.add(
            [...path, 'assertions', i, 'name'],
            `duplicates ${renderPath([...path, 'assertions', first, 'name'])}`,
          );
        else names.set(a.name, i);
        assertions.push(a);
      });
    }
  }
  if (check.issues.length > before || rowCountMatchesReceipts === undefined || uniqueKeys === undefined || !notNull)
    return undefined;
  // Checks are never dropped by accident: a block that names no rule (`quality: {}`), or
  // turns every check off, is refused; without a block the route keeps the defaults.
  if (value !== undefined && map.size === 0)
    return check.add(
      path,
      'names no rule: name the rules (unique_keys, not_null, assertions), or leave the block out for the defaults',
    );
  if (!rowCountMatchesReceipts && !uniqueKeys && notNull.length === 0 && assertions.length === 0) {
    return check.add(path, 'turns every check off: keep row_count_matches_receipts: true or name a rule');
  }
  if (kind === 'v2' && !governance) return undefined;
  return {
    rowCountMatchesReceipts,
    uniqueKeys,
    notNull,
    assertions,
    ...(kind === 'v2' && governance ? { governance } : {}),
  };
}

/** An SQL route has no capsule yet: its quality block carries none of the v2 settings. */
function refuseV2Settings(map: Map<unknown, unknown>, path: Segment[], check: Checker): Set<string> {
  const handled = new Set<string>();
  for (const key of V2_QUALITY_KEYS) {
    if (!map.has(key)) continue;
    handled.add(key);
    check.add(
      [...path, key],
      'applies only to a clickhouse exchange target (quality capsule v2); an SQL route has no capsule',
      'quality.capsule_unsupported',
    );
  }
  return handled;
}

function validateAssertion(
  value: unknown,
  path: Segment[],
  kind: QualityKind | undefined,
  check: Checker,
): QualityAssertion | undefined {
  const handled = kind === 'v2' && value instanceof Map ? refuseDegrading(value, path, check) : new Set<string>();
  const map = check.map(value, path, ASSERTION_KEYS, ASSERTION_KEYS, handled);
  if (!map) return undefined;
  const before = check.issues.length;
  const nameValue = map.get('name');
  const name = map.has('name')
    ? typeof nameValue === 'string' && ASSERTION_NAME.test(nameValue)
      ? nameValue
      : check.add([...path, 'name'], 'must match [a-z][a-z0-9_]{0,62}')
    : undefined;
  let sql = map.has('sql') ? check.select(map.get('sql'), [...path, 'sql']) : undefined;
  if (sql !== undefined) sql = checkPlaceholders(sql, [...path, 'sql'], kind, check);
  const expectValue = map.get('expect');
  const expected = map.has('expect')
    ? typeof expectValue === 'number' && Number.isSafeInteger(expectValue)
      ? expectValue
      : check.add([...path, 'expect'], 'must be an integer')
    : undefined;
  if (check.issues.length > before || name === undefined || sql === undefined || expected === undefined)
    return undefined;
  return { name, sql, expect: expected };
}

/**
 * SQL routes read the owned stage through `{staging}`; v2 routes read the candidate, later
 * the published target, through `{relation}`. Each kind's placeholder is the only one it
 * accepts; the other kind's is `quality.placeholder_invalid`, as is any placeholder problem
 * of a v2 route.
 */
function checkPlaceholders(
  sql: string,
  path: Segment[],
  kind: QualityKind | undefined,
  check: Checker,
): string | undefined {
  const used = [...sql.matchAll(PLACEHOLDER)].map((m) => m[1]);
  if (kind === undefined) {
    // The route kind is unknown (refused at the target): accept either placeholder, alone.
    const own = used.includes('relation') ? 'relation' : 'staging';
    if (!used.includes(own) || used.some((p) => p !== own))
      return check.add(path, 'must read its relation through exactly one kind of placeholder, {staging} or {relation}');
    return sql;
  }
  if (kind === 'v2') {
    if (used.includes('staging'))
      return check.add(path, 'a v2 route names its relation {relation}, not {staging}', 'quality.placeholder_invalid');
    if (!used.includes('relation'))
      return check.add(
        path,
        'must read the candidate (later the published target) through the {relation} placeholder',
        'quality.placeholder_invalid',
      );
    if (used.some((p) => p !== 'relation'))
      return check.add(path, 'the only placeholder is {relation}', 'quality.placeholder_invalid');
    return sql;
  }
  if (used.includes('relation'))
    return check.add(
      path,
      'an SQL route reads the owned stage through {staging}; {relation} belongs to clickhouse exchange targets',
      'quality.placeholder_invalid',
    );
  if (!used.includes('staging')) return check.add(path, 'must read the owned stage through the {staging} placeholder');
  if (used.some((p) => p !== 'staging')) return check.add(path, 'the only placeholder is {staging}');
  return sql;
}
