import type { QualifiedName } from './identifiers.js';
import type { WindowPolicy } from './window.js';

/** The parsed manifest's shapes and limits (the YAML format is documented in manifest.ts). */

export const MANIFEST_VERSION = 1;
export const DEFAULT_CHUNK_ROWS = 50_000;
export const MAX_CHUNK_ROWS = 1_000_000;
export const DEFAULT_PART_ROWS = 2_000_000;
export const MAX_PART_ROWS = 100_000_000;
export const DEFAULT_MAX_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 100;

export const BINDING_KINDS = ['clickhouse', 'mssql', 'postgres'] as const;
export type BindingKind = (typeof BINDING_KINDS)[number];

export const TARGET_MODES = ['replace_window', 'merge'] as const;
export type TargetMode = (typeof TARGET_MODES)[number];

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
  table: QualifiedName;
  keyColumns: string[];
  /** The target column replace_window deletes by; defaults to the source time column. */
  timeColumn: string;
  mode: TargetMode;
}

export interface QualityAssertion {
  name: string;
  /** One SELECT returning one number; `{staging}` is replaced by the quoted owned stage. */
  sql: string;
  expect: number;
}

export interface QualityRules {
  rowCountMatchesReceipts: boolean;
  uniqueKeys: boolean;
  notNull: string[];
  assertions: QualityAssertion[];
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
  | 'delivery.binding_literal_credential';

export interface ManifestIssue {
  /** e.g. `routes.daily.target.key_columns[1]`; empty for a YAML syntax error. */
  path: string;
  code: ManifestIssueCode;
  message: string;
}
