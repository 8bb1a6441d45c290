import type { TargetIdentity } from '../domain/delivery/sealed-authority.js';
import type { TargetCheckRequest } from '../domain/delivery/target-check.js';
import type {
  ChunkReceipt,
  DropStatus,
  PublicationReceipt,
  PublishRequest,
  SeqRange,
  StagingFactsRequest,
  StagingRef,
  TableRef,
} from '../domain/delivery/target-types.js';

export type { TargetCheckRequest } from '../domain/delivery/target-check.js';

/**
 * The delivery target: a SQL database that receives bounded windows through an owned
 * staging table and one publication transaction with a durable receipt. SQL Server is the
 * production target; PostgreSQL implements the same contract (and is what runs here).
 *
 * Rules every adapter keeps:
 * - identifiers are validated (`assertIdentifier`) and quoted by the adapter; values are
 *   always bound parameters, never interpolated;
 * - every mutation runs through the fault injector at one of `TARGET_CUT_POINTS` (src/domain/delivery/target-rules.ts); a
 *   failure at COMMIT that may have applied is an `OutcomeUnknownError`, a failure that
 *   proves non-application (constraint, permission, a changed staging binding) is definite;
 * - objects are addressed by exact identity: the engine's object id plus an owner marker
 *   stored on the object itself (PostgreSQL: table comment; SQL Server: extended property),
 *   rechecked under a lock before every mutation of the object;
 * - no credential or connection string appears in any error, log or result.
 *
 * The values it speaks in (tables, stages, windows, receipts) are in
 * src/domain/delivery/target-types.ts.
 */

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

export interface LoadChunkRequest {
  staging: StagingRef;
  /**
   * Chunk sequence number (`chunkSeqOf(part, index)`, src/domain/delivery/parts.ts);
   * re-loading a seq replaces its rows.
   */
  seq: number;
  /** The columns every row carries, in line order. */
  columns: string[];
  /**
   * The chunk object's bytes, verified by the caller: canonical JSONL (src/delivery/chunk-codec.ts),
   * one row per line, each line's keys exactly `columns` in order; zero bytes for no rows.
   * The adapter bulk-loads them server-side (PostgreSQL `COPY` of the bytes rewritten as
   * COPY text, or `json_populate_recordset` where COPY text cannot carry a value; SQL
   * Server `OPENJSON`) without decoding rows in JS.
   */
  jsonl: Uint8Array;
  /** Hex SHA-256 of `jsonl`. */
  sha256: string;
  /** Lines in `jsonl`; the load refuses (`delivery.load_count_mismatch`) when the target inserted another number. */
  rows: number;
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

export interface PublishResult {
  receipt: PublicationReceipt;
  /** False when the receipt already existed: nothing was published again. */
  applied: boolean;
  /**
   * A replace_window into a window-partitioned target that could not swap and was applied
   * set-based instead: why (e.g. the window is not exactly one partition's bounds).
   */
  swapDeclined?: string;
}

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
  /** With status ATTACHED: the target partition the stage object became. */
  partition?: TableRef;
}

/**
 * What occupies an owned stage's derived name, for recovery when the stage was created
 * but never journaled (a crash between CREATE and the journal write):
 * - ABSENT: no table under the name; `metadataVisible` says whether that absence is
 *   proved (the principal can see the schema's metadata) or may be denial;
 * - OURS: a table carrying this invocation's owner marker, with its object id;
 * - NOT_OURS: a table without that marker: never touched.
 */
export type StageObservation =
  { status: 'ABSENT'; metadataVisible: boolean } | { status: 'OURS'; objectId: string } | { status: 'NOT_OURS' };

export interface TargetPort {
  /**
   * What the target says it is: engine, server (or cluster system id), database and the
   * principal the connection runs as. Observed, never configured: begin seals it and every
   * live recovery action observes it again and must get the same facts, so a recovery
   * pointed at a restored copy, another server or another principal is refused before
   * anything is mutated. Never carries a credential or a connection string.
   */
  identity(): Promise<TargetIdentity>;
  /**
   * Read-only, before custody (Begin): the route's target is a regular table of a user
   * schema under exactly its name, not the receipts table, with every column the route
   * names (src/domain/delivery/target-check.ts judges what the adapter observes). Throws
   * `delivery.target_table_missing`, `delivery.target_not_user_table` or
   * `delivery.target_column_missing` (Cutpoint.ValidationError).
   */
  checkTarget(request: TargetCheckRequest): Promise<void>;
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
  /**
   * Committed rows per chunk seq in the exact stage (a bounded observation for reconcile);
   * with `range`, only seqs in [from, to) (one part: an index range scan, not the stage).
   */
  observeChunks(staging: StagingRef, range?: SeqRange): Promise<Array<{ seq: number; rows: number }>>;
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
