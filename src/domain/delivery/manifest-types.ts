import type { QualifiedName } from './identifiers.js';
import type { WindowPolicy } from './window.js';

/** The parsed manifest's shapes and limits (the YAML format is documented in manifest.ts). */

export const MANIFEST_VERSION = 1;
export const DEFAULT_CHUNK_ROWS = 50_000;
/**
 * A chunk is one object, one target transaction and one bulk load (PostgreSQL `COPY`, or
 * one JSON value for `json_populate_recordset`; SQL Server `OPENJSON`), and a part holds
 * three in memory, two of them loading (docs/delivery.md, "Windows of any size: parts"): 100,000 rows
 * keep a chunk of 10 KB rows under PostgreSQL's 1 GB value limit.
 */
export const MAX_CHUNK_ROWS = 100_000;
export const DEFAULT_PART_ROWS = 2_000_000;
export const MAX_PART_ROWS = 100_000_000;
export const DEFAULT_MAX_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 100;

export const BINDING_KINDS = ['clickhouse', 'mssql', 'postgres'] as const;
export type BindingKind = (typeof BINDING_KINDS)[number];

/** SQL targets (mssql, postgres) publish by replace_window or merge; a clickhouse target only by exchange. */
export const TARGET_MODES = ['replace_window', 'merge', 'exchange'] as const;
export type TargetMode = (typeof TARGET_MODES)[number];
export const SQL_TARGET_MODES = ['replace_window', 'merge'] as const satisfies readonly TargetMode[];
export type SqlTargetMode = (typeof SQL_TARGET_MODES)[number];

/** Quality governance settings of a v2 (clickhouse exchange) route. */
export const DEFAULT_OBSERVE_DEADLINE_S = 240;
export const MAX_OBSERVE_DEADLINE_S = 600;
export const MAX_KEEPER_RETRY_ATTEMPTS = 3;
export const MAX_KEEPER_RETRY_ELAPSED_MS = 10_000;
export const DEFAULT_REPLAY_WINDOW_DAYS = 14;
export const MAX_REPLAY_WINDOW_DAYS = 35;

/** A binding names where credentials live; it never holds them. */
export interface Binding {
  name: string;
  kind: BindingKind;
  urlEnv?: string;
  usernameEnv?: string;
  passwordEnv?: string;
  secretArn?: string;
}

export type SourceRelation = { kind: 'table'; table: QualifiedName } | { kind: 'query'; sql: string };

export interface SourceSpec {
  binding: string;
  from: SourceRelation;
  timeColumn: string;
  keyColumns: string[];
}

export interface TargetSpec {
  binding: string;
  /** schema.table for an SQL target; database.table for a clickhouse (exchange) target. */
  table: QualifiedName;
  keyColumns: string[];
  /** The target column replace_window deletes by; defaults to the source time column. */
  timeColumn: string;
  /** `exchange` exactly when the target binding is of kind clickhouse. */
  mode: TargetMode;
}

export interface QualityAssertion {
  name: string;
  /**
   * One SELECT returning one number. SQL routes: `{staging}` is replaced by the quoted owned
   * stage. v2 (exchange) routes: `{relation}` is bound to the candidate, later to the target.
   */
  sql: string;
  expect: number;
}

/** The bounded read-only retry of a KEEPER_NO_NODE target observation (absent = off). */
export interface KeeperNoNodeRetry {
  maxAttempts: number;
  maxElapsedMs: number;
}

/**
 * The governance plan of a v2 route (`quality.capsule: v2`, a clickhouse exchange target):
 * every probe is required (nothing degrades to a warning), the target observation deadline,
 * the optional Keeper retry, the replay window. Present only on v2 routes.
 */
export interface QualityGovernance {
  capsule: 2;
  observeDeadlineS: number;
  keeperNoNodeRetry?: KeeperNoNodeRetry;
  replayWindowDays: number;
}

export interface QualityRules {
  rowCountMatchesReceipts: boolean;
  uniqueKeys: boolean;
  notNull: string[];
  assertions: QualityAssertion[];
  governance?: QualityGovernance;
}

export interface Route {
  name: string;
  source: SourceSpec;
  window: WindowPolicy;
  target: TargetSpec;
  quality: QualityRules;
  chunkRows: number;
  /** Rows per part (sub-window) the plan aims at. */
  partRows: number;
  /** Parts extracted and loaded at once (the Distributed Map's MaxConcurrency). */
  maxConcurrency: number;
}

export interface Manifest {
  version: typeof MANIFEST_VERSION;
  /** Where the text came from, for messages (e.g. the file path). */
  sourceName: string;
  /** Own properties only; look up with `Object.hasOwn` (selectRoute does). */
  bindings: Readonly<Record<string, Binding>>;
  routes: Readonly<Record<string, Route>>;
}

/** A route with its two bindings resolved: everything a run or a recovery needs. */
export interface SelectedRoute {
  name: string;
  route: Route;
  sourceBinding: Binding;
  targetBinding: Binding;
}

export interface Selector {
  file: string;
  route: string;
}

export type ManifestIssueCode =
  | 'delivery.manifest_unparsable'
  | 'delivery.manifest_invalid'
  | 'delivery.binding_unknown'
  | 'delivery.binding_literal_credential'
  | 'delivery.target_mode_unsupported'
  | 'quality.capsule_version_required'
  | 'quality.capsule_version_unsupported'
  | 'quality.capsule_unsupported'
  | 'quality.required_cannot_degrade'
  | 'quality.placeholder_invalid';

export interface ManifestIssue {
  /** e.g. `routes.daily.target.key_columns[1]`; empty for a YAML syntax error. */
  path: string;
  code: ManifestIssueCode;
  message: string;
}
