import type { QualityRules } from '../delivery/manifest-types.js';
import { assertIdentifier } from '../delivery/target-rules.js';
import { QualityRefusalError } from './errors.js';

/**
 * The ORIGINAL probes (docs/rules.md#original-probes): built once at PREPARE from the route's quality rules,
 * the target key columns and the SEALED receipts total, stored in full in prepared.json
 * and digested into the immutable core. They run unchanged on the candidate (staged) and
 * on the target (after publication); replay re-runs none of them. SQL is ClickHouse
 * dialect with the placeholder `{relation}`, bound to one exact table by `bindProbe`.
 * Probe names are the delivery quality step's rule names (one name per concept).
 */

export const PROBE_KINDS = ['row_count', 'unique_keys', 'not_null', 'assertion'] as const;
export type ProbeKind = (typeof PROBE_KINDS)[number];

export interface OriginalProbe {
  name: string;
  kind: ProbeKind;
  /** ClickHouse SELECT returning one number, reading the relation only through `{relation}`. */
  sql: string;
  /** The sealed expectation (row_count: the sealed receipts total, never a count read from the target, N3). */
  expect: number;
  /** Required quality never degrades to a warning (N14). */
  required: true;
  columns: string[];
}

export const RELATION_PLACEHOLDER = '{relation}';
const PLACEHOLDER = /\{([^{}]*)\}/g;

const quote = (name: string, what: string) => `\`${assertIdentifier(name, what)}\``;

export interface ProbeInput {
  rules: QualityRules;
  /** The target's key columns (unique_keys groups by them). */
  keyColumns: readonly string[];
  /** Total rows of the sealed load receipts. */
  receiptsTotal: number;
}

export function originalProbes(input: ProbeInput): OriginalProbe[] {
  const { rules, keyColumns, receiptsTotal } = input;
  if (!Number.isSafeInteger(receiptsTotal) || receiptsTotal < 0) {
    throw new QualityRefusalError('quality.probe_invalid', 'the sealed receipts total must be a non-negative integer');
  }
  const probes: OriginalProbe[] = [];
  if (rules.rowCountMatchesReceipts) {
    probes.push({
      name: 'row_count_matches_receipts',
      kind: 'row_count',
      sql: 'SELECT count() FROM {relation}',
      expect: receiptsTotal,
      required: true,
      columns: [],
    });
  }
  if (rules.uniqueKeys) {
    if (keyColumns.length === 0)
      throw new QualityRefusalError('quality.probe_invalid', 'unique_keys needs the target key columns');
    const keys = keyColumns.map((c) => quote(c, 'key column')).join(', ');
    probes.push({
      name: 'unique_keys',
      kind: 'unique_keys',
      sql: `SELECT count() FROM (SELECT 1 FROM {relation} GROUP BY ${keys} HAVING count() > 1)`,
      expect: 0,
      required: true,
      columns: [...keyColumns],
    });
  }
  for (const column of rules.notNull) {
    probes.push({
      name: `not_null:${column}`,
      kind: 'not_null',
      sql: `SELECT countIf(isNull(${quote(column, 'not-null column')})) FROM {relation}`,
      expect: 0,
      required: true,
      columns: [column],
    });
  }
  for (const a of rules.assertions) {
    assertRelationPlaceholder(a.sql, `assertion ${a.name}`);
    if (!Number.isSafeInteger(a.expect))
      throw new QualityRefusalError('quality.probe_invalid', `assertion ${a.name}: expect must be an integer`);
    probes.push({
      name: `assertion:${a.name}`,
      kind: 'assertion',
      sql: a.sql,
      expect: a.expect,
      required: true,
      columns: [],
    });
  }
  const names = new Set(probes.map((p) => p.name));
  if (names.size !== probes.length)
    throw new QualityRefusalError('quality.probe_invalid', 'probe names must be unique');
  // Zero probes would be a governance that checks nothing: quality cannot be turned off (N3, N14).
  if (probes.length === 0)
    throw new QualityRefusalError(
      'quality.required_cannot_degrade',
      'a governed route needs at least one required probe',
    );
  return probes;
}

/** The SQL reads the relation through `{relation}` and names no other placeholder (`{staging}` is refused). */
export function assertRelationPlaceholder(sql: string, what = 'probe'): void {
  const placeholders = [...sql.matchAll(PLACEHOLDER)].map((m) => m[1]);
  if (!placeholders.includes('relation') || placeholders.some((p) => p !== 'relation')) {
    throw new QualityRefusalError(
      'quality.placeholder_invalid',
      `${what} must read the relation only through the {relation} placeholder`,
    );
  }
}

export interface RelationRef {
  database: string;
  table: string;
}

/** The probe's SQL bound to one exact table (the candidate for staged probes, the target after publication). */
export function bindProbe(sql: string, relation: RelationRef): string {
  assertRelationPlaceholder(sql);
  const bound = `${quote(relation.database, 'database')}.${quote(relation.table, 'table')}`;
  return sql.split(RELATION_PLACEHOLDER).join(bound);
}

export const PROBE_RESULTS = ['PASSED', 'FAILED', 'MALFORMED'] as const;
export type ProbeResult = (typeof PROBE_RESULTS)[number];

const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * One observed value against the sealed expectation. A missing, null, non-numeric or
 * non-finite value is MALFORMED, never PASSED (N2, N9). Integer text (ClickHouse prints
 * UInt64 as a JSON string) compares exactly, beyond 2^53 too.
 */
export function evaluateProbe(probe: Pick<OriginalProbe, 'expect'>, observed: unknown): ProbeResult {
  if (typeof observed === 'number') {
    if (!Number.isFinite(observed)) return 'MALFORMED';
    return observed === probe.expect ? 'PASSED' : 'FAILED';
  }
  if (typeof observed === 'bigint') return observed === BigInt(probe.expect) ? 'PASSED' : 'FAILED';
  if (typeof observed !== 'string') return 'MALFORMED';
  if (INTEGER.test(observed)) return BigInt(observed) === BigInt(probe.expect) ? 'PASSED' : 'FAILED';
  if (DECIMAL.test(observed)) {
    const value = Number(observed);
    if (!Number.isFinite(value)) return 'MALFORMED';
    return value === probe.expect ? 'PASSED' : 'FAILED';
  }
  return 'MALFORMED';
}

export interface ProbeEvaluation {
  /** COMPLETE only when every probe PASSED; any FAILED or MALFORMED is FAILED (terminal, N14). */
  outcome: 'COMPLETE' | 'FAILED';
  results: Array<{ name: string; result: ProbeResult }>;
  /** Names of the probes that did not pass (failed or malformed), in probe order. */
  failed: string[];
}

/**
 * Every original probe against the observed values by name. A probe with no observed
 * value is MALFORMED (absence is not a pass). Call it only with a complete, accepted
 * result message: a channel that produced no result at all is an observation failure
 * (TARGET_PENDING), decided by the caller before this.
 */
export function evaluateProbes(
  probes: readonly OriginalProbe[],
  observed: Readonly<Record<string, unknown>>,
): ProbeEvaluation {
  if (probes.length === 0)
    throw new QualityRefusalError(
      'quality.required_cannot_degrade',
      'no probe to evaluate: zero probes are never a pass',
    );
  const results = probes.map((p) => ({
    name: p.name,
    result: Object.hasOwn(observed, p.name) ? evaluateProbe(p, observed[p.name]) : ('MALFORMED' as const),
  }));
  const failed = results.filter((r) => r.result !== 'PASSED').map((r) => r.name);
  return { outcome: failed.length === 0 ? 'COMPLETE' : 'FAILED', results, failed };
}

/** What the probe worker (src/adapters/reader-process/probe-worker.ts) is given, over IPC only. */
export interface ProbeWorkerInput {
  url: string;
  username?: string;
  password?: string;
  /** The target relation the probes are bound to; its UUID is read before and after them. */
  relation: { database: string; table: string };
  /** The original probes, already bound to `relation` (names unique). */
  probes: Array<{ name: string; sql: string }>;
  /** `max_execution_time` of every statement, seconds (≥ 1). */
  maxExecutionSeconds: number;
  /**
   * The sealed read retry (prepared.json's `plan.retry` when `keeper_no_node`): each statement
   * that fails with KEEPER_NO_NODE is run again within these bounds. Absent: one attempt each.
   */
  retry?: { maxAttempts: number; maxElapsedMs: number };
}

export interface ProbeWorkerResult {
  /** `toString(uuid)` under the target name before the first probe (null: no table). */
  before: string | null;
  after: string | null;
  /** Each probe's one value by name (64-bit integers as text, never rounded). */
  values: Record<string, number | string | null>;
}
