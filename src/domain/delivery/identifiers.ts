import { validateInvocationId } from './invocation-id.js';
import { ValidationError } from '../errors.js';
import { diagnosticReasonFor } from './action-guide.js';
import { holdsCustody, type JournalState } from './journal-states.js';
import { diagnosticCodeFor, permittedActions, type LiveAction, type RecoveryFacts } from './action-guide.js';
import type { SealedWindow } from './window.js';
import type { RunbookLink } from '../runbook-link.js';

/**
 * Names the delivery subsystem derives from identity: SQL identifiers, invocation ids,
 * the owned staging table, object keys, and the recovery output documents. Every name
 * is a pure function of the identity that owns it, so a retry or a recovery process
 * reconstructs the exact same name instead of looking for "a similar one".
 */

/**
 * Conservative SQL identifier: ASCII letter or underscore, then letters, digits and
 * underscores, at most 63 characters (PostgreSQL truncates longer names; SQL Server
 * allows 128). Adapters still quote every identifier; this rule keeps names portable
 * and keeps anything that could close a quote out of generated SQL.
 */
const SQL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export function isSqlIdentifier(value: unknown): value is string {
  return typeof value === 'string' && SQL_IDENTIFIER.test(value);
}

/** `schema.table` (or `database.table` in ClickHouse), each part an SQL identifier. */
export interface QualifiedName {
  schema: string;
  name: string;
}

/** Parses `schema.table`; undefined unless there are exactly two valid parts. */
export function parseQualifiedName(text: unknown): QualifiedName | undefined {
  if (typeof text !== 'string') return undefined;
  const parts = text.split('.');
  if (parts.length !== 2) return undefined;
  const [schema, name] = parts as [string, string];
  return isSqlIdentifier(schema) && isSqlIdentifier(name) ? { schema, name } : undefined;
}

export function qualifiedNameText(q: QualifiedName): string {
  return `${q.schema}.${q.name}`;
}

/**
 * Names of routes and bindings in a manifest: lower-case, so they are safe in object
 * keys, journal keys and file names without escaping.
 */
const MANIFEST_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export function isManifestName(value: unknown): value is string {
  return typeof value === 'string' && MANIFEST_NAME.test(value);
}

// Invocation ids: ./invocation-id.ts (re-exported here, where every caller finds them).
export * from './invocation-id.js';

// ---------------------------------------------------------------------------------------
// Owned staging

/**
 * Every owned staging table starts with this prefix, and no manifest target may: a
 * retirement that drops an owned stage can then never drop an authored table.
 */
export const STAGING_PREFIX = 'cutpoint_stg_';

/**
 * The owned staging table of an invocation: the prefix and the first 20 characters of
 * the id body (100 random bits, so two invocations never share a stage), 33 characters
 * in all, valid unquoted in SQL Server and PostgreSQL.
 */
export function stagingTableNameOf(invocationId: string): string {
  const body = validateInvocationId(invocationId).slice('inv-'.length, 'inv-'.length + 20);
  const name = `${STAGING_PREFIX}${body}`;
  if (!isSqlIdentifier(name))
    throw new ValidationError('delivery.invocation_id_invalid', 'derived staging name is not an SQL identifier');
  return name;
}

/** The owned stage lives in the target table's schema, so one grant covers both. */
export function stagingTableOf(invocationId: string, targetTable: QualifiedName): QualifiedName {
  return { schema: targetTable.schema, name: stagingTableNameOf(invocationId) };
}

export function isOwnedStagingName(name: string): boolean {
  return name.toLowerCase().startsWith(STAGING_PREFIX);
}

/**
 * The target a journal serializes: binding + schema + table, lower-cased because SQL
 * Server's default collations treat `dbo.Events` and `dbo.events` as the same table, and
 * one table must never get two journals (two custody holders). Safe as a file name.
 */
export function targetIdOf(targetBinding: string, table: QualifiedName): string {
  return `${targetBinding}.${table.schema}.${table.name}`.toLowerCase();
}

// ---------------------------------------------------------------------------------------
// Object keys: derived from identity, never "latest" names

const SEQ_WIDTH = 10;
const MAX_SEQ = 10 ** SEQ_WIDTH - 1;

/** `delivery/<route>`, or an invocation's `delivery/<route>/<invocationId>`. */
function keyPrefix(route: string, invocationId?: string): string {
  if (!isManifestName(route))
    throw new ValidationError('delivery.route_invalid', 'route name must be [a-z][a-z0-9_-]{0,63}');
  return invocationId === undefined ? `delivery/${route}` : `delivery/${route}/${validateInvocationId(invocationId)}`;
}

/**
 * Extracted chunk `seq` (0-based, contiguous) of an invocation: gzip-compressed JSONL
 * (`.jsonl.gz`, the object's `encoding` metadata says gzip). Chunks written before
 * compression are `.jsonl`; readers take the key their receipt journaled, so both resume,
 * and a part retried across the change writes its new chunks under new keys instead of
 * meeting an old object's other identity.
 */
export function chunkObjectKeyOf(route: string, invocationId: string, seq: number): string {
  if (!Number.isInteger(seq) || seq < 0 || seq > MAX_SEQ) {
    throw new ValidationError('delivery.chunk_seq_invalid', `chunk sequence must be an integer in [0, ${MAX_SEQ}]`);
  }
  return `${keyPrefix(route, invocationId)}/chunk-${String(seq).padStart(SEQ_WIDTH, '0')}.jsonl.gz`;
}

/**
 * The work root of a route's invocations in an object store at `location`
 * (`/s3/<bucket>/delivery/<route>`): sealed by begin (as its digest) and recomputed by every
 * later action, so one pointed at another bucket is refused.
 */
export function workRootIn(location: string, route: string): string {
  return `${location}/${keyPrefix(route)}`;
}

/** Every object of an invocation lies under this prefix (`delivery/<route>/<invocationId>/`). */
export function invocationObjectsPrefixOf(route: string, invocationId: string): string {
  return `${keyPrefix(route, invocationId)}/`;
}

/** The window's part plan (a JSON array of part descriptors: the Distributed Map's items). */
export function planObjectKeyOf(route: string, invocationId: string): string {
  return `${keyPrefix(route, invocationId)}/plan.json`;
}

/** Where the Distributed Map's ResultWriter writes the part results. */
export function mapResultsPrefixOf(route: string, invocationId: string): string {
  return `${keyPrefix(route, invocationId)}/map-results`;
}

/** The invocation's evidence document: persisted before the checkpoint advances. */
export function evidenceObjectKeyOf(route: string, invocationId: string): string {
  return `${keyPrefix(route, invocationId)}/evidence.json`;
}

/**
 * The quality capsule's immutable evidence of a ClickHouse publication (docs/rules.md#quality-evidence):
 * `prepared` (the sealed core and the original probes, before dispatch) and `completion`
 * (the results on the published generation and the completion version, the independent
 * witness of the capsule's row version).
 */
export function qualityEvidenceKeyOf(route: string, invocationId: string, document: 'prepared' | 'completion'): string {
  return `${keyPrefix(route, invocationId)}/quality/${document}.json`;
}

// ---------------------------------------------------------------------------------------
// Recovery outputs (the inspect / inspect-all documents, docs/rules.md#state-to-action)

export const RECOVERY_KIND = 'cutpoint.delivery-recovery.v1';
export const RECOVERY_INDEX_KIND = 'cutpoint.delivery-recovery-index.v1';
export const RECOVERY_SCHEMA_VERSION = 1;

/** What a journal record contributes to an output: opaque ids and diagnostics only. */
export interface RecoverySummary {
  invocationId: string;
  route: string;
  state: JournalState;
  facts: RecoveryFacts;
  window: SealedWindow;
}

/** One entry of inspect-all. Keys in sorted order, as canonical JSON prints them. */
export interface RecoveryIndexItem {
  diagnostic_code: string;
  /** Why no continuation is offered (journal-states.ts `diagnosticReasonFor`); only where there is one. */
  diagnostic_reason?: string;
  holds_custody: boolean;
  invocation_id: string;
  permitted_actions: LiveAction[];
  route: string;
  /** The runbook page of `state` and the one command for this item (src/delivery/journal/runbook.ts adds it). */
  runbook?: RunbookLink;
  state: JournalState;
}

/** The inspect document (and the result every live action prints on success). */
export interface RecoveryProjection extends RecoveryIndexItem {
  kind: typeof RECOVERY_KIND;
  schema_version: typeof RECOVERY_SCHEMA_VERSION;
  window: SealedWindow;
}

export interface RecoveryIndex {
  items: RecoveryIndexItem[];
  kind: typeof RECOVERY_INDEX_KIND;
  retained_custody_count: number;
  schema_version: typeof RECOVERY_SCHEMA_VERSION;
}

export function recoveryIndexItemOf(summary: RecoverySummary): RecoveryIndexItem {
  const reason = diagnosticReasonFor(summary.state, summary.facts);
  return {
    diagnostic_code: diagnosticCodeFor(summary.state, summary.facts),
    ...(reason ? { diagnostic_reason: reason } : {}),
    holds_custody: holdsCustody(summary.state),
    invocation_id: summary.invocationId,
    permitted_actions: permittedActions(summary.state, summary.facts),
    route: summary.route,
    state: summary.state,
  };
}

export function recoveryProjectionOf(summary: RecoverySummary): RecoveryProjection {
  const item = recoveryIndexItemOf(summary);
  return {
    diagnostic_code: item.diagnostic_code,
    ...(item.diagnostic_reason ? { diagnostic_reason: item.diagnostic_reason } : {}),
    holds_custody: item.holds_custody,
    invocation_id: item.invocation_id,
    kind: RECOVERY_KIND,
    permitted_actions: item.permitted_actions,
    route: item.route,
    schema_version: RECOVERY_SCHEMA_VERSION,
    state: item.state,
    window: { end: summary.window.end, start: summary.window.start },
  };
}

/**
 * inspect-all: every retained invocation (and any terminal ones the caller lists), sorted
 * by invocation id so the output is byte-stable, with the count a rollback must see at 0.
 */
export function recoveryIndexOf(summaries: readonly RecoverySummary[]): RecoveryIndex {
  const items = summaries
    .map(recoveryIndexItemOf)
    .sort((a, b) => (a.invocation_id < b.invocation_id ? -1 : a.invocation_id > b.invocation_id ? 1 : 0));
  return {
    items,
    kind: RECOVERY_INDEX_KIND,
    retained_custody_count: items.filter((i) => i.holds_custody).length,
    schema_version: RECOVERY_SCHEMA_VERSION,
  };
}
