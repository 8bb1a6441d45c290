// Longer than ~300 lines: one class implementing the whole TargetPort over `mssql` (the
// methods share the pool, the fault injector and the error classification); the SQL text
// lives in the *-statements.ts files (sql-text.ts says which), the column type mapping in
// bulk-types.ts, what is read back in results.ts and the connection parsing in connection.ts.
import sql from 'mssql';
import {
  CutpointError,
  EffectFailedError,
  IdentityConflictError,
  OutcomeUnknownError,
  ValidationError,
} from '../../domain/errors.js';
import type { TargetIdentity } from '../../domain/delivery/sealed-authority.js';
import type { FaultInjector } from '../../ports/faults.js';
import type {
  CreateStagingRequest,
  DropOptions,
  DropResult,
  StageObservation,
  LoadChunkRequest,
  PublishResult,
  StagingCreated,
  StagingFacts,
  TableDescription,
  TargetPort,
} from '../../ports/target.js';
import type {
  ChunkReceipt,
  PublicationReceipt,
  PublishRequest,
  SeqRange,
  StagingFactsRequest,
  StagingRef,
  TableRef,
} from '../../domain/delivery/target-types.js';
import {
  assertColumns,
  assertInvocationId,
  assertOwner,
  assertPublishRequest,
  assertSeq,
  assertStagingRef,
  assertTableRef,
  assertUserColumn,
  CHUNK_COLUMN,
  classifyRetirement,
  markerMatches,
  RECEIPT_TABLE,
  receiptMatches,
  TARGET_CUT_POINTS,
} from '../../domain/delivery/target-rules.js';
import {
  PublicationRefusedError,
  QualityCheckUnrunnableError,
  TargetObjectMissingError,
  TargetUnavailableError,
  TargetUnobservableError,
} from '../../domain/delivery/target-errors.js';
import {
  classifyMssqlFailure,
  describeMssqlError,
  isMssqlPermissionFailure,
  isMssqlUnrunnableStatement,
  parseMssqlConnection,
  serverErrorNumber,
} from './connection.js';
import { typeSpelling, type StageColumn } from './bulk-types.js';
import { chunkJsonArray } from '../../domain/delivery/chunk-json.js';
import { LoadCountMismatchError } from '../../domain/delivery/target-errors.js';
import {
  absenceProofStatement,
  createStagingBatch,
  describeStatement,
  dropStagingBatch,
  identityStatement,
  observeStagingStatement,
  targetCheckStatement,
} from './ddl-statements.js';
import { loadChunkBatch, observeChunksBatch, prepareLoadBatch, stagingFactsBatch } from './load-statements.js';
import { probeReceiptBatch, publishBatch } from './publish-statements.js';
import { mssqlSwapPlanOf, type ClusteredKeyRow, type MssqlSwapPlanning, type PartitionLayoutRow } from './swap-plan.js';
import { partitionLayoutStatement } from './swap-statements.js';
import { targetObservationOf, thrownError, type TargetCheckRow } from './results.js';
import { assertTargetCheck, judgeTarget, type TargetCheckRequest } from '../../domain/delivery/target-check.js';
import {
  assertSeqRange,
  factsRange,
  receiptOfRecord as toReceipt,
  scalarOf as scalar,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import { assertionStatement, type Statement } from './sql-text.js';

export interface MssqlTargetOptions {
  /** A `mssql://` URL or an ADO.NET connection string (see connection.ts); never printed. */
  connection: string;
  faults: FaultInjector;
  /** Where receipts live; defaults to `dbo.cutpoint_receipts`. */
  receiptTable?: TableRef;
  /** sp_getapplock timeout (default 30 s). */
  lockTimeoutMs?: number;
  /** Per-request timeout (default 120 s); a timeout inside a COMMIT batch is UNKNOWN. */
  requestTimeoutMs?: number;
}

type Executor = sql.ConnectionPool | sql.Transaction;

/** `TargetPort` on SQL Server through `mssql` (tedious). */
export class MssqlTarget implements TargetPort {
  private readonly pool: sql.ConnectionPool;
  private readonly faults: FaultInjector;
  private readonly receipts: TableRef;
  private readonly lockTimeoutMs: number;
  private readonly secrets: string[];
  private connecting: Promise<sql.ConnectionPool> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: MssqlTargetOptions) {
    const { config, secrets } = parseMssqlConnection(options.connection);
    this.secrets = secrets;
    this.faults = options.faults;
    this.receipts = assertTableRef(options.receiptTable ?? { schema: 'dbo', table: RECEIPT_TABLE }, 'receipt table');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    if (!Number.isSafeInteger(this.lockTimeoutMs) || this.lockTimeoutMs < 1) {
      throw new ValidationError('delivery.invalid_option', 'lockTimeoutMs must be a positive integer');
    }
    this.pool = new sql.ConnectionPool({
      ...config,
      requestTimeout: options.requestTimeoutMs ?? 120_000,
      options: { ...config.options, useUTC: true },
      pool: { max: 4, ...config.pool },
    });
    // Idle-connection errors surface on the pool; the next request reconnects or fails.
    this.pool.on('error', () => undefined);
  }

  // -------------------------------------------------------------------------------------
  // Reads

  async checkTarget(request: TargetCheckRequest): Promise<void> {
    const { table } = assertTargetCheck(request);
    const rows = (await this.read(targetCheckStatement(table))).recordset as TargetCheckRow[];
    judgeTarget(request, targetObservationOf(rows, table), {
      engine: 'SQL Server',
      systemSchemas: ['sys', 'INFORMATION_SCHEMA'],
      receipts: this.receipts,
    });
  }

  async describeTable(table: TableRef): Promise<TableDescription> {
    assertTableRef(table);
    const rows = (await this.read(describeStatement(table))).recordset as Array<
      StageColumn & { is_nullable: boolean; object_id: number }
    >;
    const first = rows[0];
    if (!first) throw new TargetObjectMissingError(`table ${table.schema}.${table.table}`);
    return {
      table,
      objectId: String(first.object_id),
      columns: rows
        .filter((c) => c.name !== CHUNK_COLUMN)
        .map((c) => ({ name: c.name, type: typeSpelling(c), nullable: c.is_nullable })),
    };
  }

  async observeChunks(staging: StagingRef, range?: SeqRange): Promise<Array<{ seq: number; rows: number }>> {
    assertStagingRef(staging);
    if (range !== undefined) assertSeqRange(range);
    const result = await this.read(observeChunksBatch(staging, range));
    return (result.recordset as Array<{ seq: number; row_count: string | number }>).map((r) => ({
      seq: r.seq,
      rows: Number(r.row_count),
    }));
  }

  async stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts> {
    assertStagingRef(staging);
    const range = factsRange(facts);
    const keys = facts.keyColumns.length > 0 ? assertColumns(facts.keyColumns, 'keyColumns') : [];
    const notNull = facts.notNull.map(assertUserColumn);
    const names = new Set<string>();
    for (const a of facts.assertions) {
      if (typeof a.name !== 'string' || a.name.length === 0 || names.has(a.name)) {
        throw new ValidationError(
          'delivery.invalid_request',
          `assertion names must be unique and non-empty: ${String(a.name)}`,
        );
      }
      names.add(a.name);
    }
    const pool = await this.connected();
    const tx = new sql.Transaction(pool);
    try {
      await tx.begin(sql.ISOLATION_LEVEL.READ_COMMITTED);
    } catch (error) {
      throw this.readFailure(error);
    }
    try {
      const counts = (await this.run(tx, stagingFactsBatch(staging, keys, notNull, range))).recordset[0] as
        Record<string, unknown> | undefined;
      const assertions: Record<string, number | string | null> = {};
      for (const a of facts.assertions) {
        const result = await new sql.Request(tx).query(assertionStatement(a.sql, staging.table));
        const row = result.recordset?.[0] as Record<string, unknown> | undefined;
        assertions[a.name] = scalar(row ? Object.values(row)[0] : null);
      }
      const nulls: Record<string, number> = {};
      notNull.forEach((c, i) => (nulls[c] = Number(counts?.[`n${i}`] ?? 0)));
      return {
        rows: Number(counts?.row_count ?? 0),
        duplicateKeys: Number(counts?.duplicate_keys ?? 0),
        nulls,
        assertions,
      };
    } catch (error) {
      if (isMssqlUnrunnableStatement(error))
        throw new QualityCheckUnrunnableError(describeMssqlError(error, this.secrets));
      throw this.readFailure(error);
    } finally {
      // Always rolled back: an assertion can never change anything.
      await tx.rollback().catch(() => undefined);
    }
  }

  async identity(): Promise<TargetIdentity> {
    const result = await this.read(identityStatement());
    const row = (
      result.recordset as unknown as Array<{ server: string | null; database: string | null; principal: string | null }>
    )[0];
    if (!row?.server || !row.database || !row.principal)
      throw new TargetUnobservableError('the target did not report its identity');
    return { engine: 'mssql', server: row.server, database: row.database, principal: row.principal };
  }

  async probeReceipt(invocationId: string): Promise<PublicationReceipt | undefined> {
    assertInvocationId(invocationId);
    const result = await this.read(probeReceiptBatch(this.receipts, invocationId));
    const sets = result.recordsets as unknown as Array<Array<Record<string, unknown>>>;
    const meta = sets[0]?.[0];
    if (!meta?.present) {
      if (meta?.can_view_schema === 1) return undefined;
      throw new TargetUnobservableError(
        'the receipt table is not visible to this principal: absence of a receipt cannot be proved',
      );
    }
    const row = sets[1]?.[0] as ReceiptRecord | undefined;
    return row ? toReceipt(row) : undefined;
  }

  // -------------------------------------------------------------------------------------
  // Mutations

  async createStaging(request: CreateStagingRequest): Promise<StagingCreated> {
    assertInvocationId(request.invocationId);
    assertOwner(request.ownerBinding);
    assertTableRef(request.staging, 'staging');
    assertTableRef(request.likeTable, 'like table');
    const statement = createStagingBatch(
      request.staging,
      request.likeTable,
      request.invocationId,
      request.ownerBinding,
      this.lockTimeoutMs,
    );
    const result = await this.mutate(TARGET_CUT_POINTS.createStaging, statement);
    const row = result.recordset?.[0] as
      { created: boolean; object_id: number | null; marker: string | null } | undefined;
    if (!row || row.object_id === null)
      throw new TargetObjectMissingError(`stage ${request.staging.schema}.${request.staging.table}`);
    const identity = { invocationId: request.invocationId, owner: request.ownerBinding };
    if (!row.created && !markerMatches(row.marker, identity)) {
      throw new IdentityConflictError(
        'delivery.staging_identity_conflict',
        `${request.staging.schema}.${request.staging.table} exists and is not this invocation's stage`,
      );
    }
    return { table: request.staging, objectId: String(row.object_id), ...identity, created: row.created };
  }

  async loadChunk(request: LoadChunkRequest): Promise<ChunkReceipt> {
    assertStagingRef(request.staging);
    assertSeq(request.seq);
    const chunk = {
      seq: request.seq,
      columns: assertColumns(request.columns),
      json: chunkJsonArray(request),
      rows: request.rows,
    };
    const cutPoint = TARGET_CUT_POINTS.loadChunk;
    const pool = await this.connected();
    const tx = new sql.Transaction(pool);
    try {
      await tx.begin(sql.ISOLATION_LEVEL.READ_COMMITTED);
    } catch (error) {
      throw this.definite(cutPoint, error);
    }
    let committed = false;
    try {
      try {
        const stage = (await this.run(tx, prepareLoadBatch(request.staging))).recordset as StageColumn[];
        const loaded = (await this.run(tx, loadChunkBatch(request.staging, chunk, stage))).recordset as Array<{
          inserted: string | number;
        }>;
        const inserted = Number(loaded[0]?.inserted);
        if (inserted !== chunk.rows) throw new LoadCountMismatchError(chunk.seq, chunk.rows, inserted);
      } catch (error) {
        throw this.definite(cutPoint, error);
      }
      await this.faults.at(cutPoint, async () => {
        try {
          await tx.commit();
          committed = true;
        } catch (error) {
          throw this.atCommit(cutPoint, error);
        }
      });
      committed = true;
    } finally {
      // crash-before (or a definite failure, a count mismatch) leaves the transaction open: roll it back.
      if (!committed) await tx.rollback().catch(() => undefined);
    }
    return { seq: chunk.seq, rows: chunk.rows, digest: request.sha256 };
  }

  async publish(request: PublishRequest): Promise<PublishResult> {
    assertPublishRequest(request);
    assertStagingRef(request.staging);
    const described = await this.describeTable(request.target);
    const targetColumns = described.columns.map((c) => c.name);
    for (const k of [request.timeColumn, ...request.keyColumns]) {
      if (!targetColumns.includes(k)) throw new PublicationRefusedError(`target has no column ${k}`);
    }
    const planning = await this.swapPlanning(request);
    const swap = 'plan' in planning ? planning.plan : undefined;
    let result: sql.IResult<unknown>;
    try {
      result = await this.mutate(
        TARGET_CUT_POINTS.publishCommit,
        publishBatch(request, this.receipts, targetColumns, this.lockTimeoutMs, swap),
      );
    } catch (error) {
      // A concurrent publisher of the same invocation won the receipt's key: its receipt decides.
      if (
        error instanceof EffectFailedError &&
        [2627, 2601].includes((error.cause as { number?: number } | undefined)?.number ?? 0)
      ) {
        const receipt = await this.probeReceipt(request.invocationId);
        if (receipt) return this.existing(receipt, request);
      }
      throw error;
    }
    const row = result.recordset?.[0] as (ReceiptRecord & { applied: boolean }) | undefined;
    if (!row) throw new EffectFailedError(TARGET_CUT_POINTS.publishCommit, 'the publication batch returned no receipt');
    const receipt = toReceipt(row);
    return row.applied
      ? { receipt, applied: true, ...('declined' in planning ? { swapDeclined: planning.declined } : {}) }
      : this.existing(receipt, request);
  }

  /** replace_window into a target partitioned on the time column: can the stage be switched in (swap-plan.ts)? */
  private async swapPlanning(request: PublishRequest): Promise<MssqlSwapPlanning> {
    const result = await this.read(
      partitionLayoutStatement(request.target, request.staging, request.timeColumn, request.window),
    );
    const sets = result.recordsets as unknown as [PartitionLayoutRow[], ClusteredKeyRow[], StageColumn[]];
    const planning = mssqlSwapPlanOf(sets[0]?.[0], sets[1] ?? [], sets[2] ?? []);
    return request.mode === 'merge' && !('partitioned' in planning)
      ? { declined: 'merge publishes set-based' }
      : planning;
  }

  private existing(receipt: PublicationReceipt, request: PublishRequest): PublishResult {
    if (!receiptMatches(receipt, request)) {
      throw new IdentityConflictError(
        'delivery.receipt_identity_conflict',
        `a different publication receipt exists for invocation ${request.invocationId}`,
      );
    }
    return { receipt, applied: false };
  }

  async observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation> {
    assertTableRef(table, 'staging');
    assertInvocationId(owner.invocationId);
    assertOwner(owner.owner);
    const row = (await this.read(observeStagingStatement(table))).recordset[0] as
      { object_id: number | null; can_view_schema: number | null; marker: string | null } | undefined;
    if (!row || row.object_id === null) return { status: 'ABSENT', metadataVisible: row?.can_view_schema === 1 };
    return markerMatches(row.marker, owner)
      ? { status: 'OURS', objectId: String(row.object_id) }
      : { status: 'NOT_OURS' };
  }

  async dropStaging(staging: StagingRef, options: DropOptions = {}): Promise<DropResult> {
    assertStagingRef(staging);
    const batch = dropStagingBatch(
      staging,
      this.lockTimeoutMs,
      options.unlessPublished ? { receipts: this.receipts } : undefined,
    );
    const result = await this.mutate(TARGET_CUT_POINTS.dropStaging, batch);
    const first = result.recordset?.[0] as (Partial<ReceiptRecord> & { outcome?: string }) | undefined;
    const outcome = first?.outcome;
    if (outcome === 'PUBLISHED')
      return { status: 'PUBLISHED', dropped: false, receipt: toReceipt(first as ReceiptRecord) };
    if (outcome !== 'DROPPED' && outcome !== 'ALREADY_ABSENT' && outcome !== 'NOT_OURS') {
      throw new EffectFailedError(TARGET_CUT_POINTS.dropStaging, 'the retirement batch returned no outcome');
    }
    const proof = (await this.read(absenceProofStatement(staging))).recordset[0] as
      { can_view_schema: number | null; exact_exists: number } | undefined;
    return {
      status: classifyRetirement(outcome, {
        metadataVisible: proof?.can_view_schema === 1,
        exactObjectExists: proof?.exact_exists === 1,
      }),
      dropped: outcome === 'DROPPED',
    };
  }

  close(): Promise<void> {
    return (this.closing ??= this.pool.close().then(
      () => undefined,
      () => undefined,
    ));
  }

  // -------------------------------------------------------------------------------------
  // Execution

  private async connected(): Promise<sql.ConnectionPool> {
    this.connecting ??= this.pool.connect().catch((error: unknown) => {
      this.connecting = undefined;
      const code = (error as { code?: unknown } | undefined)?.code;
      throw new TargetUnavailableError(`cannot connect to SQL Server: ${describeMssqlError(error, this.secrets)}`, {
        cause: { number: serverErrorNumber(error), code: typeof code === 'string' ? code : undefined },
      });
    });
    return this.connecting;
  }

  private async run(executor: Executor, statement: Statement): Promise<sql.IResult<unknown>> {
    const request = new sql.Request(executor as sql.ConnectionPool);
    for (const p of statement.params) request.input(p.name, paramType(p.type, p.value), p.value);
    return request.query(statement.text);
  }

  /** A read: any failure is definite; permission failures say the principal cannot observe. */
  private async read(statement: Statement): Promise<sql.IResult<unknown>> {
    const pool = await this.connected();
    try {
      return await this.run(pool, statement);
    } catch (error) {
      throw this.readFailure(error);
    }
  }

  /**
   * A batch that holds its own BEGIN … COMMIT runs as the cut point's effect. A server
   * error rolled it back (XACT_ABORT ON): definite, mapped to its stable error. A lost
   * connection or a timeout may have followed the COMMIT: OutcomeUnknown.
   */
  private async mutate(cutPoint: string, statement: Statement): Promise<sql.IResult<unknown>> {
    const pool = await this.connected();
    return this.faults.at(cutPoint, async () => {
      try {
        return await this.run(pool, statement);
      } catch (error) {
        throw this.atCommit(cutPoint, error);
      }
    });
  }

  private atCommit(cutPoint: string, error: unknown): Error {
    if (error instanceof CutpointError) return error;
    if (classifyMssqlFailure(error) === 'unknown') {
      return new OutcomeUnknownError(cutPoint, `${cutPoint}: ${describeMssqlError(error, this.secrets)}`);
    }
    return this.definite(cutPoint, error);
  }

  private definite(cutPoint: string, error: unknown): Error {
    if (error instanceof CutpointError) return error;
    const mapped = thrownError(error);
    if (mapped) return mapped;
    const message = describeMssqlError(error, this.secrets);
    if (isMssqlPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    return new EffectFailedError(cutPoint, `${cutPoint}: ${message}`, { cause: { number: serverErrorNumber(error) } });
  }

  private readFailure(error: unknown): Error {
    if (error instanceof CutpointError) return error;
    const mapped = thrownError(error);
    if (mapped) return mapped;
    const message = describeMssqlError(error, this.secrets);
    if (isMssqlPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    return new TargetUnavailableError(message);
  }
}

export function openMssqlTarget(options: MssqlTargetOptions): MssqlTarget {
  return new MssqlTarget(options);
}

// ---------------------------------------------------------------------------------------

function paramType(type: Statement['params'][number]['type'], value: unknown): sql.ISqlType {
  switch (type) {
    case 'nvarchar':
      return sql.NVarChar(typeof value === 'string' && value.length > 4000 ? sql.MAX : 4000);
    case 'int':
      return sql.Int();
    case 'bigint':
      return sql.BigInt();
    case 'datetime2':
      return sql.DateTime2(3);
  }
}
