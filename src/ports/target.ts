import { createHash } from 'node:crypto';
import type { TargetIdentity } from '../domain/delivery/sealed-authority.js';
import { canonicalJson } from '../domain/digest.js';
import { CutpointError, ValidationError } from '../domain/errors.js';

/**
 * The delivery target: a SQL database that receives bounded windows through an owned
 * staging table and one publication transaction with a durable receipt. SQL Server is the
 * production target; PostgreSQL implements the same contract (and is what runs here).
 *
 * Rules every adapter keeps:
 * - identifiers are validated (`assertIdentifier`) and quoted by the adapter; values are
 *   always bound parameters, never interpolated;
 * - every mutation runs through the fault injector at one of `TARGET_CUT_POINTS`; a
 *   failure at COMMIT that may have applied is an `OutcomeUnknownError`, a failure that
 *   proves non-application (constraint, permission, a changed staging binding) is definite;
 * - objects are addressed by exact identity: the engine's object id plus an owner marker
 *   stored on the object itself (PostgreSQL: table comment; SQL Server: extended property),
 *   rechecked under a lock before every mutation of the object;
 * - no credential or connection string appears in any error, log or result.
 */

/** A schema-qualified table. Both parts must satisfy `assertIdentifier`. */
export interface TableRef {
  schema: string;
  table: string;
}

export interface ColumnInfo {
  name: string;
  /** The engine's own spelling of the type, e.g. `integer`, `nvarchar(200)`. */
  type: string;
  nullable: boolean;
}

export interface TableDescription {
  table: TableRef;
  objectId: string;
  /** In ordinal order; the adapter's own bookkeeping column is never listed. */
  columns: ColumnInfo[];
}

/**
 * The exact identity of an owned staging table, as the journal records it: where it is,
 * the engine's object id at creation (decimal text), and the owner binding (an opaque
 * digest naming the invocation's route/connection/work-root bindings).
 */
export interface StagingRef {
  table: TableRef;
  objectId: string;
  invocationId: string;
  owner: string;
}

export interface CreateStagingRequest {
  invocationId: string;
  /** Where the stage goes; normally beside the target, with a name derived from the invocation. */
  staging: TableRef;
  /** The published table whose columns the stage copies (all nullable, no constraints). */
  likeTable: TableRef;
  ownerBinding: string;
}

export interface StagingCreated extends StagingRef {
  /** False when an identical stage (same name, invocation and owner) already existed. */
  created: boolean;
}

export type TargetRow = Record<string, unknown>;

export interface LoadChunkRequest {
  staging: StagingRef;
  /** Chunk sequence number (0-based, contiguous); re-loading a seq replaces its rows. */
  seq: number;
  /** The columns carried by every row, in digest order. */
  columns: string[];
  rows: AsyncIterable<TargetRow> | Iterable<TargetRow>;
}

/** Proof of one chunk load: what was committed under `seq`. */
export interface ChunkReceipt {
  seq: number;
  rows: number;
  /** `chunkDigest` of the rows as given, in order. */
  digest: string;
}

export interface StagingAssertion {
  name: string;
  /**
   * A read-only scalar query; `{staging}` is replaced by the quoted staging name. Authored
   * by the operator in the manifest (trusted configuration), run in a transaction that is
   * always rolled back.
   */
  sql: string;
}

export interface StagingFactsRequest {
  keyColumns: string[];
  notNull: string[];
  assertions: StagingAssertion[];
}

export interface StagingFacts {
  rows: number;
  /** Number of key values that occur more than once. */
  duplicateKeys: number;
  /** Rows with NULL, per requested column. */
  nulls: Record<string, number>;
  /** Each assertion's scalar (numbers as numbers, anything else as text, NULL as null). */
  assertions: Record<string, number | string | null>;
}

/** A half-open UTC window [start, end). */
export interface TimeWindow {
  start: Date;
  end: Date;
}

export type PublishMode = 'replace_window' | 'merge';

export interface PublishRequest {
  invocationId: string;
  target: TableRef;
  window: TimeWindow;
  mode: PublishMode;
  /** The business key: merge matches on it; must be non-null and unique in staging. */
  keyColumns: string[];
  /** replace_window deletes target rows with this column in the window. */
  timeColumn: string;
  staging: StagingRef;
  /** Rows the journal proved were loaded; the publication refuses any other count. */
  rows: number;
  /** Digest the journal proved for the load (`publicationDigest` of the chunk receipts). */
  digest: string;
}

/** The durable row written inside the publication transaction. */
export interface PublicationReceipt {
  invocationId: string;
  target: TableRef;
  mode: PublishMode;
  window: TimeWindow;
  rows: number;
  digest: string;
  stagingObjectId: string;
  publishedAt: Date;
}

export interface PublishResult {
  receipt: PublicationReceipt;
  /** False when the receipt already existed: nothing was published again. */
  applied: boolean;
}

/**
 * - ABSENT_PROVED: the exact object does not exist and the principal can see the schema's
 *   metadata, so absence is distinguishable from denial.
 * - NOT_OURS: the name holds an object whose id or owner binding differs; left untouched.
 * - ABSENCE_UNPROVABLE: the principal cannot tell absence from missing metadata
 *   permission (or the exact object still exists elsewhere): keep custody.
 * - PUBLISHED (only with `unlessPublished`): the invocation's publication receipt exists
 *   under the publication lock; nothing was dropped.
 */
export type DropStatus = 'ABSENT_PROVED' | 'NOT_OURS' | 'ABSENCE_UNPROVABLE' | 'PUBLISHED';

export interface DropOptions {
  /**
   * Retirement (the journal says nothing was published): the drop transaction takes the
   * invocation's publication lock — the one every publication transaction takes — and
   * re-probes the receipt under it. A receipt found → `PUBLISHED`, nothing dropped; no
   * receipt → the drop commits while the lock keeps publications out, and a publication
   * that comes later (a stalled zombie of an older epoch) finds the stage gone and
   * publishes nothing. This closes the race the authority fence cannot: a publisher that
   * passed its custody check before a takeover.
   */
  unlessPublished?: boolean;
}

export interface DropResult {
  status: DropStatus;
  /** True when this call dropped the object (false when it was already gone or not ours). */
  dropped: boolean;
  /** With status PUBLISHED: the receipt found under the publication lock. */
  receipt?: PublicationReceipt;
}

/**
 * What occupies an owned stage's derived name, for recovery when the stage was created
 * but never journaled (a crash between CREATE and the journal write):
 * - ABSENT: no table under the name; `metadataVisible` says whether that absence is
 *   proved (the principal can see the schema's metadata) or may be denial;
 * - OURS: a table carrying this invocation's owner marker, with its object id;
 * - NOT_OURS: a table without that marker: never touched.
 */
export type StageObservation = { status: 'ABSENT'; metadataVisible: boolean } | { status: 'OURS'; objectId: string } | { status: 'NOT_OURS' };

export interface TargetPort {
  /**
   * What the target says it is: engine, server (or cluster system id), database and the
   * principal the connection runs as. Observed, never configured: begin seals it and every
   * live recovery action observes it again and must get the same facts, so a recovery
   * pointed at a restored copy, another server or another principal is refused before
   * anything is mutated. Never carries a credential or a connection string.
   */
  identity(): Promise<TargetIdentity>;
  /** Columns of an existing table. Throws `Cutpoint.TargetObjectMissing` when absent. */
  describeTable(table: TableRef): Promise<TableDescription>;
  /**
   * Creates the owned stage (columns of `likeTable`, all nullable, plus a bookkeeping chunk
   * column) and records the owner marker on it, in one transaction. Idempotent by exact
   * identity: the same name with the same invocation and owner returns the existing stage;
   * any other object under the name is an `IdentityConflictError`.
   */
  createStaging(request: CreateStagingRequest): Promise<StagingCreated>;
  /** One transaction: recheck the stage, delete `seq`'s rows, bulk-insert the chunk. */
  loadChunk(request: LoadChunkRequest): Promise<ChunkReceipt>;
  /** Committed rows per chunk seq in the exact stage (a bounded observation for reconcile). */
  observeChunks(staging: StagingRef): Promise<Array<{ seq: number; rows: number }>>;
  /** Counts for the quality probes, read from the exact stage. */
  stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts>;
  /**
   * ONE transaction: if the invocation's receipt exists return it (applied: false);
   * otherwise recheck the stage, apply the window, and insert the receipt. The COMMIT is
   * the cut point `delivery.publish.commit`.
   */
  publish(request: PublishRequest): Promise<PublishResult>;
  /** The durable receipt, or undefined when the principal can prove there is none. */
  probeReceipt(invocationId: string): Promise<PublicationReceipt | undefined>;
  /**
   * Observes the stage under its derived name (read-only): its object id when it carries
   * the owner marker of `owner`, and whether absence is provable.
   */
  observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation>;
  /**
   * Lock, recheck exact id and owner, drop, then prove absence. Repeat-safe. The drop
   * transaction always takes the invocation's publication lock (so it serializes with a
   * publication of the same invocation); see `DropOptions.unlessPublished`.
   */
  dropStaging(staging: StagingRef, options?: DropOptions): Promise<DropResult>;
  close(): Promise<void>;
}

export const TARGET_CUT_POINTS = {
  createStaging: 'delivery.target.create-staging',
  loadChunk: 'delivery.target.load-chunk',
  publishCommit: 'delivery.publish.commit',
  dropStaging: 'delivery.target.drop-staging',
} as const;

/** The adapter's bookkeeping column in every stage: the chunk seq of each row. */
export const CHUNK_COLUMN = '_cutpoint_seq';
/** Name of the receipt table when the adapter is not told otherwise. */
export const RECEIPT_TABLE = 'cutpoint_receipts';

// ---------------------------------------------------------------------------------------
// Errors with stable names and codes

/** The named object does not exist (or is not visible). */
export class TargetObjectMissingError extends CutpointError {
  constructor(what: string) {
    super('Cutpoint.TargetObjectMissing', 'delivery.target_object_missing', `${what} does not exist or is not visible`);
  }
}

/** The stage's object id or owner marker no longer matches the journal: nothing was changed. */
export class StagingBindingChangedError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.StagingBindingChanged', 'delivery.staging_binding_changed', `staging binding changed: ${detail}`);
  }
}

/** The publication refused to apply (row count, window or key guard): nothing was changed. */
export class PublicationRefusedError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.PublicationRefused', 'delivery.publication_refused', `publication refused: ${detail}`);
  }
}

/** The principal cannot observe what it must observe (receipt table, schema metadata). */
export class TargetUnobservableError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.TargetUnobservable', 'delivery.target_unobservable', detail);
  }
}

/** The target could not be reached or answered with an error outside any cut point. */
export class TargetUnavailableError extends CutpointError {
  constructor(detail: string) {
    super('Cutpoint.TargetUnavailable', 'delivery.target_unavailable', detail);
  }
}

// ---------------------------------------------------------------------------------------
// Pure parts of the contract shared by every adapter

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL's limit (NAMEDATALEN - 1); SQL Server allows 128, the contract uses the smaller. */
export const MAX_IDENTIFIER_LENGTH = 63;

/**
 * Letters, digits and underscore, not starting with a digit, at most 63 characters. The
 * adapters quote every identifier anyway; this refuses anything that would need escaping.
 */
export function assertIdentifier(name: string, what = 'identifier'): string {
  if (typeof name !== 'string' || name.length > MAX_IDENTIFIER_LENGTH || !IDENTIFIER.test(name)) {
    throw new ValidationError(
      'delivery.invalid_identifier',
      `invalid ${what} ${JSON.stringify(String(name).slice(0, 80))}: expected [A-Za-z_][A-Za-z0-9_]* of at most ${MAX_IDENTIFIER_LENGTH} characters`,
    );
  }
  return name;
}

export function assertTableRef(ref: TableRef, what = 'table'): TableRef {
  assertIdentifier(ref.schema, `${what} schema`);
  assertIdentifier(ref.table, `${what} name`);
  return ref;
}

/** User columns may not use the adapter's reserved prefix. */
export function assertUserColumn(name: string): string {
  assertIdentifier(name, 'column');
  if (name.toLowerCase().startsWith('_cutpoint')) {
    throw new ValidationError('delivery.invalid_identifier', `column ${name} uses the reserved _cutpoint prefix`);
  }
  return name;
}

export function assertColumns(columns: readonly string[], what = 'columns'): string[] {
  if (columns.length === 0) throw new ValidationError('delivery.invalid_request', `${what}: at least one column is required`);
  const seen = new Set<string>();
  for (const c of columns) {
    assertUserColumn(c);
    if (seen.has(c)) throw new ValidationError('delivery.invalid_request', `${what}: column ${c} is listed twice`);
    seen.add(c);
  }
  return [...columns];
}

export function assertWindow(window: TimeWindow): void {
  const { start, end } = window;
  if (!(start instanceof Date) || !(end instanceof Date) || Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) {
    throw new ValidationError('delivery.invalid_window', 'window bounds must be valid Dates');
  }
  if (start.getTime() >= end.getTime()) throw new ValidationError('delivery.invalid_window', 'window start must be before its end');
}

export function assertSeq(seq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > 2_147_483_647) {
    throw new ValidationError('delivery.invalid_request', `chunk seq must be an integer in [0, 2^31): ${String(seq)}`);
  }
}

const MARKER_KIND = 'cutpoint.staging.v1';

/**
 * The owner marker stored on the stage itself: canonical JSON of the invocation and the
 * owner binding. Rechecks compare the parsed marker, never a "similar" object.
 */
export function ownerMarker(invocationId: string, owner: string): string {
  return canonicalJson({ kind: MARKER_KIND, invocationId, owner });
}

export function parseOwnerMarker(text: string | null | undefined): { invocationId: string; owner: string } | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const value = JSON.parse(text) as { kind?: unknown; invocationId?: unknown; owner?: unknown };
    if (value.kind !== MARKER_KIND || typeof value.invocationId !== 'string' || typeof value.owner !== 'string') return undefined;
    return { invocationId: value.invocationId, owner: value.owner };
  } catch {
    return undefined;
  }
}

/** The lock resource every publication of an invocation takes, and a retirement's drop too. */
export function publicationLockOf(invocationId: string): string {
  return `cutpoint.publish:${invocationId}`;
}

export function markerMatches(text: string | null | undefined, staging: Pick<StagingRef, 'invocationId' | 'owner'>): boolean {
  const marker = parseOwnerMarker(text);
  return marker !== undefined && marker.invocationId === staging.invocationId && marker.owner === staging.owner;
}

/** One row as digest input: JSON of the values in column order, Dates as ISO-8601. */
function rowDigestLine(columns: readonly string[], row: TargetRow): string {
  return canonicalJson(columns.map((c) => digestValue(row[c]))) + '\n';
}

function digestValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return { date: value.toISOString() };
  if (typeof value === 'bigint') return { bigint: value.toString() };
  if (value instanceof Uint8Array) return { bytes: Buffer.from(value).toString('base64') };
  return value;
}

/** Incremental SHA-256 over a chunk's rows, as adapters compute it while loading. */
export class ChunkDigest {
  private readonly hash = createHash('sha256');
  private count = 0;
  constructor(private readonly columns: readonly string[]) {
    this.hash.update(canonicalJson(columns) + '\n');
  }
  add(row: TargetRow): void {
    this.hash.update(rowDigestLine(this.columns, row));
    this.count++;
  }
  get rows(): number {
    return this.count;
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** The digest a chunk receipt carries for these rows (same as an adapter computes). */
export function chunkDigest(columns: readonly string[], rows: Iterable<TargetRow>): string {
  const d = new ChunkDigest(columns);
  for (const row of rows) d.add(row);
  return d.digest();
}

/** The load digest a publication records: over the chunk receipts in seq order. */
export function publicationDigest(receipts: readonly ChunkReceipt[]): string {
  const sorted = [...receipts].sort((a, b) => a.seq - b.seq);
  return createHash('sha256').update(canonicalJson(sorted.map((r) => [r.seq, r.rows, r.digest]))).digest('hex');
}

/**
 * What the retirement observed, and what it may conclude. `visible` is whether the
 * principal can see the schema's metadata (so an absent object is really absent).
 */
export function classifyRetirement(
  outcome: 'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS' | 'PUBLISHED',
  proof: { metadataVisible: boolean; exactObjectExists: boolean },
): DropStatus {
  if (outcome === 'NOT_OURS' || outcome === 'PUBLISHED') return outcome;
  if (!proof.metadataVisible || proof.exactObjectExists) return 'ABSENCE_UNPROVABLE';
  return 'ABSENT_PROVED';
}

/** The receipt's identity must match the request exactly; anything else is a conflict. */
export function receiptMatches(receipt: PublicationReceipt, request: PublishRequest): boolean {
  return (
    receipt.invocationId === request.invocationId &&
    receipt.target.schema === request.target.schema &&
    receipt.target.table === request.target.table &&
    receipt.mode === request.mode &&
    receipt.window.start.getTime() === request.window.start.getTime() &&
    receipt.window.end.getTime() === request.window.end.getTime() &&
    receipt.rows === request.rows &&
    receipt.digest === request.digest
  );
}

/** Validates a publish request's shape before any I/O. */
export function assertPublishRequest(request: PublishRequest): void {
  if (typeof request.invocationId !== 'string' || request.invocationId.length === 0 || request.invocationId.length > 200) {
    throw new ValidationError('delivery.invalid_request', 'invocationId must be 1..200 characters');
  }
  assertTableRef(request.target, 'target');
  assertTableRef(request.staging.table, 'staging');
  assertWindow(request.window);
  if (request.mode !== 'replace_window' && request.mode !== 'merge') {
    throw new ValidationError('delivery.invalid_request', `unknown publish mode ${String(request.mode)}`);
  }
  if (request.mode === 'merge') assertColumns(request.keyColumns, 'keyColumns');
  assertUserColumn(request.timeColumn);
  if (!Number.isSafeInteger(request.rows) || request.rows < 0) {
    throw new ValidationError('delivery.invalid_request', 'rows must be a non-negative integer');
  }
  if (typeof request.digest !== 'string' || !/^[0-9a-f]{64}$/.test(request.digest)) {
    throw new ValidationError('delivery.invalid_request', 'digest must be 64 lower-case hex characters');
  }
}

export function assertInvocationId(id: string): void {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) {
    throw new ValidationError('delivery.invalid_request', 'invocationId must be 1..200 characters');
  }
}

export function assertOwner(owner: string): void {
  if (typeof owner !== 'string' || owner.length === 0 || owner.length > 512) {
    throw new ValidationError('delivery.invalid_request', 'ownerBinding must be 1..512 characters');
  }
}

export function assertStagingRef(staging: StagingRef): void {
  assertTableRef(staging.table, 'staging');
  assertInvocationId(staging.invocationId);
  assertOwner(staging.owner);
  if (typeof staging.objectId !== 'string' || !/^\d{1,10}$/.test(staging.objectId)) {
    throw new ValidationError('delivery.invalid_request', 'staging objectId must be a decimal object id');
  }
}

/** Iterates rows given as an array, an iterable or an async iterable. */
export async function* eachRow(rows: AsyncIterable<TargetRow> | Iterable<TargetRow>): AsyncGenerator<TargetRow> {
  for await (const row of rows as AsyncIterable<TargetRow>) yield row;
}

/**
 * Removes anything that looks like a credential or a connection string from a driver
 * message, plus the exact secrets given (password, connection string, user).
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join('[redacted]');
  return out
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"]*/gi, '[redacted-url]')
    .replace(/\b(password|pwd|user id|uid|user|username|server|data source|address)\s*=\s*[^;\s]*/gi, '$1=[redacted]');
}
