/**
 * The values the delivery target's contract (src/ports/target.ts) speaks in: tables, stages,
 * rows, windows, chunk receipts, publication requests and receipts. Pure data: the port
 * and the rules every adapter shares (target-rules.ts, window-partition.ts) both read them
 * from here.
 */

/** A schema-qualified table. Both parts must satisfy `assertIdentifier`. */
export interface TableRef {
  schema: string;
  table: string;
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

export type TargetRow = Record<string, unknown>;

/** Proof of one chunk load: what was committed under `seq`. */
export interface ChunkReceipt {
  seq: number;
  /** Rows the target inserted under `seq` in this transaction. */
  rows: number;
  /** The SHA-256 of the loaded bytes (`LoadChunkRequest.sha256`). */
  digest: string;
}

/** Chunk seqs [from, to), for an observation of one part of a stage. */
export interface SeqRange {
  from: number;
  to: number;
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
  /**
   * Only the rows of these chunk seqs (one part: an index range of the stage), for rows,
   * nulls and key duplicates within it. With a range, `assertions` must be empty: they are
   * the operator's SQL over the whole stage.
   */
  range?: SeqRange;
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

/**
 * How a publication applied the window:
 * - partition_swap: O(1) in the rows — the stage itself became the target's window
 *   partition (PostgreSQL ATTACH PARTITION after DETACH of the old one; SQL Server SWITCH),
 *   no row copied;
 * - set_based: the rows were copied by set-based statements (DELETE + INSERT … SELECT for
 *   replace_window, UPDATE + INSERT for merge).
 */
export type PublicationMethod = 'partition_swap' | 'set_based';

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
  /** How the window was applied; absent on receipts written before the method was recorded. */
  method?: PublicationMethod;
}

/**
 * - ABSENT_PROVED: the exact object does not exist and the principal can see the schema's
 *   metadata, so absence is distinguishable from denial.
 * - NOT_OURS: the name holds an object whose id or owner binding differs; left untouched.
 * - ABSENCE_UNPROVABLE: the principal cannot tell absence from missing metadata
 *   permission (or the exact object still exists elsewhere): keep custody.
 * - PUBLISHED (only with `unlessPublished`): the invocation's publication receipt exists
 *   under the publication lock; nothing was dropped.
 * - ATTACHED: the stage is gone as a stage because the exact object (same object id) is
 *   now the target's window partition named by this invocation's receipt (a
 *   partition_swap publication); it is published data and is never dropped. Proves the
 *   stage's absence for CUSTODY_RELEASED, never for RETIRED.
 */
export type DropStatus = 'ABSENT_PROVED' | 'NOT_OURS' | 'ABSENCE_UNPROVABLE' | 'PUBLISHED' | 'ATTACHED';
