import { EffectFailedError, IdentityConflictError, ValidationError } from '../../domain/errors.js';
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
  assertInvocationId,
  assertOwner,
  assertStagingRef,
  assertTableRef,
  CHUNK_COLUMN,
  classifyRetirement,
  markerMatches,
  RECEIPT_TABLE,
  TARGET_CUT_POINTS,
} from '../../domain/delivery/target-rules.js';
import { TargetObjectMissingError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
import { typeSpelling, type StageColumn } from './bulk-types.js';
import {
  absenceProofStatement,
  createStagingBatch,
  describeStatement,
  dropStagingBatch,
  identityStatement,
  observeStagingStatement,
  targetCheckStatement,
} from './ddl-statements.js';
import { observeChunksBatch } from './load-statements.js';
import { probeReceiptBatch } from './publish-statements.js';
import { targetObservationOf, type TargetCheckRow } from './results.js';
import { assertTargetCheck, judgeTarget, type TargetCheckRequest } from '../../domain/delivery/target-check.js';
import {
  assertSeqRange,
  receiptOfRecord as toReceipt,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import { MssqlExecution } from './execution.js';
import { mssqlStagingFacts } from './stage-facts.js';
import { loadChunkIn } from './chunk-load.js';
import { publishIn } from './publication.js';

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

/**
 * `TargetPort` on SQL Server through `mssql` (tedious). The class is the port's map; each
 * job lives in its own file: how a statement runs and how its failure is classified
 * (execution.ts), quality facts (stage-facts.ts), the SQL text (the *-statements.ts files,
 * sql-text.ts says which), the column type mapping (bulk-types.ts), what is read back
 * (results.ts) and the connection parsing (connection.ts).
 */
export class MssqlTarget implements TargetPort {
  private readonly exec: MssqlExecution;
  private readonly receipts: TableRef;
  private readonly lockTimeoutMs: number;

  constructor(options: MssqlTargetOptions) {
    this.receipts = assertTableRef(options.receiptTable ?? { schema: 'dbo', table: RECEIPT_TABLE }, 'receipt table');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    if (!Number.isSafeInteger(this.lockTimeoutMs) || this.lockTimeoutMs < 1) {
      throw new ValidationError('delivery.invalid_option', 'lockTimeoutMs must be a positive integer');
    }
    this.exec = new MssqlExecution(options);
  }

  // -------------------------------------------------------------------------------------
  // Reads

  async checkTarget(request: TargetCheckRequest): Promise<void> {
    const { table } = assertTargetCheck(request);
    const rows = (await this.exec.read(targetCheckStatement(table))).recordset as TargetCheckRow[];
    judgeTarget(request, targetObservationOf(rows, table), {
      engine: 'SQL Server',
      systemSchemas: ['sys', 'INFORMATION_SCHEMA'],
      receipts: this.receipts,
    });
  }

  async describeTable(table: TableRef): Promise<TableDescription> {
    assertTableRef(table);
    const rows = (await this.exec.read(describeStatement(table))).recordset as Array<
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
    const result = await this.exec.read(observeChunksBatch(staging, range));
    return (result.recordset as Array<{ seq: number; row_count: string | number }>).map((r) => ({
      seq: r.seq,
      rows: Number(r.row_count),
    }));
  }

  stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts> {
    return mssqlStagingFacts(this.exec, staging, facts);
  }

  async identity(): Promise<TargetIdentity> {
    const result = await this.exec.read(identityStatement());
    const row = (
      result.recordset as unknown as Array<{ server: string | null; database: string | null; principal: string | null }>
    )[0];
    if (!row?.server || !row.database || !row.principal)
      throw new TargetUnobservableError('the target did not report its identity');
    return { engine: 'mssql', server: row.server, database: row.database, principal: row.principal };
  }

  async probeReceipt(invocationId: string): Promise<PublicationReceipt | undefined> {
    assertInvocationId(invocationId);
    const result = await this.exec.read(probeReceiptBatch(this.receipts, invocationId));
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
    const result = await this.exec.mutate(TARGET_CUT_POINTS.createStaging, statement);
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

  loadChunk(request: LoadChunkRequest): Promise<ChunkReceipt> {
    return loadChunkIn(this.exec, request);
  }

  publish(request: PublishRequest): Promise<PublishResult> {
    return publishIn(this.exec, this, this.receipts, this.lockTimeoutMs, request);
  }

  async observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation> {
    assertTableRef(table, 'staging');
    assertInvocationId(owner.invocationId);
    assertOwner(owner.owner);
    const row = (await this.exec.read(observeStagingStatement(table))).recordset[0] as
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
    const result = await this.exec.mutate(TARGET_CUT_POINTS.dropStaging, batch);
    const first = result.recordset?.[0] as (Partial<ReceiptRecord> & { outcome?: string }) | undefined;
    const outcome = first?.outcome;
    if (outcome === 'PUBLISHED')
      return { status: 'PUBLISHED', dropped: false, receipt: toReceipt(first as ReceiptRecord) };
    if (outcome !== 'DROPPED' && outcome !== 'ALREADY_ABSENT' && outcome !== 'NOT_OURS') {
      throw new EffectFailedError(TARGET_CUT_POINTS.dropStaging, 'the retirement batch returned no outcome');
    }
    const proof = (await this.exec.read(absenceProofStatement(staging))).recordset[0] as
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
    return this.exec.close();
  }
}

export function openMssqlTarget(options: MssqlTargetOptions): MssqlTarget {
  return new MssqlTarget(options);
}
