import type { ExchangeNames } from '../domain/publication/candidate.js';
import type { InventoryColumn } from '../domain/quality/core.js';

/**
 * The ClickHouse side of an EXCHANGE publication (docs/rules.md#exchange-publication):
 * candidate table of a deterministic UUID and an owner marker, filled from the stage,
 * swapped in by exactly one `EXCHANGE TABLES`, observed by UUID, fenced by a RENAME, the
 * predecessor dropped by exact UUID. Interfaces only; the adapter is
 * src/adapters/clickhouse/publication-target.ts.
 *
 * Rules the adapter keeps:
 * - every effect runs through the fault injector at one of `PUBLICATION_CUT_POINTS`
 *   (src/domain/publication/cut-points.ts), and so does the observation read;
 * - a failure the server answered with an error that proves non-application is an
 *   `EffectFailedError`; anything that may have applied (timeout, lost connection, Keeper
 *   999, no answer) is an `OutcomeUnknownError`, never retried by the adapter;
 * - every per-statement setting goes into the statement's own SETTINGS clause, never into
 *   the session (embedded chdb turns client settings into session-wide `SET`s);
 * - identifiers are validated and backtick-quoted; UUIDs are validated text; the marker is
 *   canonical JSON of validated ids, escaped as a ClickHouse string literal.
 */

/** A row of `system.tables` as observed (uuid lower-case, as `toString(uuid)` prints it). */
export type { ObservedTable } from '../domain/publication/exchange-observation.js';
import type { ObservedTable } from '../domain/publication/exchange-observation.js';

export interface CreateCandidateRequest {
  names: ExchangeNames;
  /** `candidateUuidOf(invocationId)`. */
  uuid: string;
  /** `candidateMarkerOf(invocationId, ownerBinding)`. */
  marker: string;
}

export interface FillCandidateRequest {
  names: ExchangeNames;
  uuid: string;
  marker: string;
  /** Rows the journal proved were loaded into the stage; the fill refuses any other count. */
  expectedRows: number;
  /** `insert_deduplication_token` of the fill (`<id>:fill:<loadDigest>`). */
  token: string;
}

export interface FillResult {
  rows: number;
  /** Order-independent digest of the candidate's rows: `sum(sipHash64(tuple(<target columns>)))` as decimal text. */
  digest: string;
  /** False when the candidate already held exactly the stage's rows. */
  filled: boolean;
}

export type DropByUuidStatus = 'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS';

export interface TableInventory {
  database: string;
  table: string;
  uuid: string;
  engine: string;
  sortingKey: string;
  columns: InventoryColumn[];
}

/** One read-only scalar statement (e.g. a staged quality probe on the candidate). */
export interface ScalarStatement {
  name: string;
  /** One SELECT whose first column of its first row is the value; run wrapped as a subquery, read-only. */
  sql: string;
}

export interface ScalarOptions {
  /** `max_execution_time` of each statement, seconds. */
  maxExecutionSeconds?: number;
  /** The caller's cut point for these reads (e.g. `quality.staged.probe`): a fault there fails the read, nothing is written. */
  cutPoint?: string;
}

export interface ExchangeTargetPort {
  /** The database's engine (`system.databases.engine`), or undefined when there is no such database. */
  databaseEngine(database: string): Promise<string | undefined>;
  /**
   * `CREATE TABLE db.cand UUID '<C>' AS db.target COMMENT '<marker>'` at
   * `publication.candidate.create`, keeping a deduplication log on a non-replicated
   * MergeTree so a repeated fill token is dropped. Same name + same UUID + same marker → `{created: false}`;
   * anything else under the name → `IdentityConflictError`.
   */
  createCandidate(request: CreateCandidateRequest): Promise<{ created: boolean }>;
  /**
   * Fills the candidate from the stage (one INSERT … SELECT with the token) at
   * `publication.candidate.fill`, after comparing count and digest of both: equal → done;
   * a non-empty, different candidate is truncated and refilled only while it is still
   * unpublished and ours.
   */
  fillCandidate(request: FillCandidateRequest): Promise<FillResult>;
  /**
   * Count and order-independent digest of our unpublished candidate (the fill's measure),
   * read fresh: Dispatch compares it with the journaled fill right before the intent.
   */
  candidateContents(request: CreateCandidateRequest): Promise<{ rows: number; digest: string }>;
  /** One read of `system.tables` for the target, candidate and tombstone names (`publication.observe`). */
  observeTables(names: ExchangeNames): Promise<ObservedTable[]>;
  /** One `EXCHANGE TABLES db.target AND db.cand` at `publication.exchange`; never retried here. */
  exchange(names: ExchangeNames): Promise<void>;
  /** `RENAME TABLE db.cand TO db.tomb` at `publication.fence.rename`. */
  fenceRename(names: ExchangeNames): Promise<void>;
  /** Rechecks `uuid` under the name, then `DROP TABLE … SYNC` at `publication.predecessor.drop`. */
  dropByUuid(table: { database: string; name: string; uuid: string }): Promise<DropByUuidStatus>;
  /** Whether no table of `uuid` exists, and whether the database's metadata is visible (so absence is proved). */
  uuidAbsence(database: string, uuid: string): Promise<{ absent: boolean; metadataVisible: boolean }>;
  /** Columns, engine and sorting key of a table (throws `Cutpoint.TargetObjectMissing` when absent). */
  inventory(database: string, table: string): Promise<TableInventory>;
  /** Each statement's one-number result, run read-only. */
  scalars(
    statements: readonly ScalarStatement[],
    options?: ScalarOptions,
  ): Promise<Record<string, number | string | null>>;
}
