import type { Checker, Segment } from './manifest-checker.js';
import { checkGovernance, governancePlanOf, refuseDegrading, V2_QUALITY_KEYS } from './manifest-governance.js';
import { MAX_ASSERTIONS, QualitySchema } from './manifest-schema.js';
import { isRecord } from './manifest-shape.js';
import type { QualityRules, TargetMode } from './manifest-types.js';

/**
 * A route's quality rules (their shape: QualitySchema). Two kinds of route read them:
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

const PLACEHOLDER = /\{([^{}]*)\}/g;

/**
 * Before the shape, each route's kind's own refusals, with their codes; the keys are removed
 * so the shape does not report them again as unknown: a v2 route's degrading keys, an SQL
 * route's v2 settings (it has no capsule).
 */
export function refuseKindSettings(
  quality: unknown,
  path: Segment[],
  kind: QualityKind | undefined,
  check: Checker,
): void {
  if (!isRecord(quality)) return;
  if (kind === 'v2') {
    refuseDegrading(quality, path, check);
    const list = quality.assertions;
    if (Array.isArray(list)) list.forEach((a, i) => refuseDegrading(a, [...path, 'assertions', i], check));
  }
  if (kind !== 'sql') return;
  for (const key of V2_QUALITY_KEYS) {
    if (!Object.hasOwn(quality, key)) continue;
    check.add(
      [...path, key],
      'applies only to a clickhouse exchange target (quality capsule v2); an SQL route has no capsule',
      'quality.capsule_unsupported',
    );
    delete quality[key];
  }
}

/** After the shape: the rules the route's kind adds, and the parsed rules with their defaults. */
export function qualityOf(
  value: unknown,
  path: Segment[],
  mode: TargetMode | undefined,
  kind: QualityKind | undefined,
  check: Checker,
): QualityRules | undefined {
  const raw = value === undefined ? {} : value;
  if (!isRecord(raw)) return undefined;
  if (kind === 'v2') checkGovernance(raw, path, check);
  // MERGE (SQL Server) and ON CONFLICT (PostgreSQL) fail or become order-dependent when
  // two staged rows share a key, so merge always checks uniqueness first.
  if (raw.unique_keys === false && mode === 'merge') {
    check.add([...path, 'unique_keys'], 'must be true when target.mode is merge (merge on keys needs unique keys)');
  }
  const list = raw.assertions;
  if (Array.isArray(list) && list.length <= MAX_ASSERTIONS) {
    list.forEach((a, i) => {
      const at = [...path, 'assertions', i, 'sql'];
      if (isRecord(a) && typeof a.sql === 'string' && !check.has(at)) checkPlaceholders(a.sql, at, kind, check);
    });
  }
  const parsed = QualitySchema.safeParse(raw);
  if (check.has(path) || !parsed.success) return undefined;
  const q = parsed.data;
  const rules: QualityRules = {
    rowCountMatchesReceipts: q.row_count_matches_receipts ?? true,
    uniqueKeys: q.unique_keys ?? mode === 'merge',
    notNull: q.not_null ?? [],
    assertions: (q.assertions ?? []).map((a) => ({ name: a.name, sql: a.sql.trim(), expect: a.expect })),
  };
  // Checks are never dropped by accident: a block that names no rule (`quality: {}`), or
  // turns every check off, is refused; without a block the route keeps the defaults.
  if (value !== undefined && Object.keys(raw).length === 0)
    return check.add(
      path,
      'names no rule: name the rules (unique_keys, not_null, assertions), or leave the block out for the defaults',
    );
  if (
    !rules.rowCountMatchesReceipts &&
    !rules.uniqueKeys &&
    rules.notNull.length === 0 &&
    rules.assertions.length === 0
  )
    return check.add(path, 'turns every check off: keep row_count_matches_receipts: true or name a rule');
  return kind === 'v2' ? { ...rules, governance: governancePlanOf(q) } : rules;
}

/**
 * SQL routes read the owned stage through `{staging}`; v2 routes read the candidate, later
 * the published target, through `{relation}`. Each kind's placeholder is the only one it
 * accepts; the other kind's is `quality.placeholder_invalid`, as is any placeholder problem
 * of a v2 route.
 */
function checkPlaceholders(sql: string, path: Segment[], kind: QualityKind | undefined, check: Checker): void {
  const used = [...sql.matchAll(PLACEHOLDER)].map((m) => m[1]);
  if (kind === undefined) {
    // The route kind is unknown (refused at the target): accept either placeholder, alone.
    const own = used.includes('relation') ? 'relation' : 'staging';
    if (!used.includes(own) || used.some((p) => p !== own))
      check.add(path, 'must read its relation through exactly one kind of placeholder, {staging} or {relation}');
  } else if (kind === 'v2') {
    const code = 'quality.placeholder_invalid';
    if (used.includes('staging')) check.add(path, 'a v2 route names its relation {relation}, not {staging}', code);
    else if (!used.includes('relation'))
      check.add(path, 'must read the candidate (later the published target) through the {relation} placeholder', code);
    else if (used.some((p) => p !== 'relation')) check.add(path, 'the only placeholder is {relation}', code);
  } else if (used.includes('relation')) {
    check.add(
      path,
      'an SQL route reads the owned stage through {staging}; {relation} belongs to clickhouse exchange targets',
      'quality.placeholder_invalid',
    );
  } else if (!used.includes('staging')) check.add(path, 'must read the owned stage through the {staging} placeholder');
  else if (used.some((p) => p !== 'staging')) check.add(path, 'the only placeholder is {staging}');
}
