import type pg from 'pg';
import { EffectFailedError, ValidationError } from '../../domain/errors.js';
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
  assertPublishRequest,
  assertInvocationId,
  assertOwner,
  assertSeq,
  assertStagingRef,
  assertTableRef,
  assertSeqRange,
  markerMatches,
  RECEIPT_TABLE,
  TARGET_CUT_POINTS,
} from '../../domain/delivery/target-rules.js';
import { assertTargetCheck, judgeTarget, type TargetCheckRequest } from '../../domain/delivery/target-check.js';
import { TargetObjectMissingError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
import { verifyChunkBytes } from '../../domain/delivery/chunk-json.js';
import { copyIngest, loadChunkBody } from './chunk-load.js';
import { PgTransactions } from './transactions.js';
import { postgresStagingFacts } from './stage-facts.js';
import { absenceProof, createStagingIn, dropStagingIn, receiptIn } from './stage-lifecycle.js';
import { lookup, recheckLocked } from './locks.js';
import { existingPublication, publishBody } from './publication.js';
import { QUOTED_CHUNK, TARGET_CANDIDATES, DESCRIBE_COLUMNS, quoteTable } from './sql.js';

/**
 * `TargetPort` on PostgreSQL through `pg`: any real server, or embedded PGlite over the
 * wire. The class is the port's map; each job lives in its own file: the transaction
 * skeleton and failure classification (transactions.ts), a stage's creation and drop
 * (stage-lifecycle.ts), chunk loads by COPY (chunk-load.ts), quality facts
 * (stage-facts.ts), publication (publication.ts, partition-swap.ts), locks and rechecks
 * (locks.ts), statements (sql.ts), outcome classification (outcome.ts).
 */
export interface PostgresTargetOptions {
  /** `postgres://…`; never printed. Either this or `pool`. */
  connectionString?: string;
  /** Extra pool settings (host, user, password, ssl, max, …). */
  pool?: pg.PoolConfig;
  faults: FaultInjector;
  /** Where receipts live; defaults to `public.cutpoint_receipts`. */
  receiptTable?: TableRef;
  /**
   * Act as this role inside every transaction (`SET LOCAL ROLE`): a login that holds a
   * narrower role for delivery. Also how tests exercise an under-privileged principal on
   * single-user embedded PostgreSQL.
   */
  role?: string;
  /** `lock_timeout` for every transaction (default 30 s): a held lock fails definitely. */
  lockTimeoutMs?: number;
}

/** `TargetPort` on PostgreSQL through `pg`: any real server, or embedded PGlite over the wire. */
export class PostgresTarget implements TargetPort {
  private readonly tx: PgTransactions;
  private readonly receipts: TableRef;
  /** How this server takes a chunk (chunk-load.ts), asked once. */
  private ingest: { copy: boolean } | undefined;

  constructor(options: PostgresTargetOptions) {
    this.receipts = assertTableRef(options.receiptTable ?? { schema: 'public', table: RECEIPT_TABLE }, 'receipt table');
    this.tx = new PgTransactions(options);
  }

  // -------------------------------------------------------------------------------------
  // Reads

  async checkTarget(request: TargetCheckRequest): Promise<void> {
    const { table } = assertTargetCheck(request);
    const found = await this.tx.run({ readOnly: true }, async (client) => ({
      commit: false,
      value: (
        await client.query<{ schema: string; name: string; kind: string; columns: string[] | null }>(
          TARGET_CANDIDATES,
          [table.schema, table.table],
        )
      ).rows,
    }));
    const exact = found.find((f) => f.columns !== null);
    judgeTarget(
      request,
      {
        found: found.map((f) => ({
          schema: f.schema,
          table: f.name,
          kind: f.kind === 'r' || f.kind === 'p' ? 'table' : f.kind === 'v' || f.kind === 'm' ? 'view' : 'other',
        })),
        columns: exact?.columns ?? [],
      },
      { engine: 'PostgreSQL', systemSchemas: ['information_schema'], systemPrefixes: ['pg_'], receipts: this.receipts },
    );
  }

  async describeTable(table: TableRef): Promise<TableDescription> {
    assertTableRef(table);
    return this.tx.run({ readOnly: true }, async (client) => {
      const found = await lookup(client, table);
      if (!found) throw new TargetObjectMissingError(`table ${table.schema}.${table.table}`);
      const columns = await client.query<{ name: string; type: string; nullable: boolean }>(DESCRIBE_COLUMNS, [
        found.objectId,
      ]);
      return {
        commit: false,
        value: {
          table,
          objectId: found.objectId,
          columns: columns.rows
            .filter((c) => c.name !== '_cutpoint_seq')
            .map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
        },
      };
    });
  }

  async observeChunks(staging: StagingRef, range?: SeqRange): Promise<Array<{ seq: number; rows: number }>> {
    assertStagingRef(staging);
    if (range !== undefined) assertSeqRange(range);
    return this.tx.run({ readOnly: true }, async (client) => {
      await recheckLocked(client, staging, 'ACCESS SHARE');
      const where = range === undefined ? '' : ` WHERE ${QUOTED_CHUNK} >= $1 AND ${QUOTED_CHUNK} < $2`;
      const result = await client.query<{ seq: number; rows: string }>(
        `SELECT ${QUOTED_CHUNK} AS seq, count(*)::text AS rows FROM ${quoteTable(staging.table)}${where} GROUP BY 1 ORDER BY 1`,
        range === undefined ? [] : [range.from, range.to],
      );
      return { commit: false, value: result.rows.map((r) => ({ seq: Number(r.seq), rows: Number(r.rows) })) };
    });
  }

  stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts> {
    return postgresStagingFacts(this.tx, staging, facts);
  }

  async identity(): Promise<TargetIdentity> {
    return this.tx.run({ readOnly: true }, async (client) => {
      // The cluster's system identifier survives restarts and renames; a restored copy or
      // a replica promoted elsewhere keeps it, which is why database and principal are
      // sealed too. Never the host or port: the same server may be reached many ways.
      const result = await client.query<{ system_id: string; database: string; principal: string }>(
        'SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system_id, current_database() AS database, current_user AS principal',
      );
      const row = result.rows[0];
      if (!row) throw new TargetUnobservableError('the target did not report its identity');
      return {
        commit: false,
        value: { engine: 'postgres', system: row.system_id, database: row.database, principal: row.principal },
      };
    });
  }

  async probeReceipt(invocationId: string): Promise<PublicationReceipt | undefined> {
    assertInvocationId(invocationId);
    return this.tx.run({ readOnly: true }, async (client) => ({
      commit: false,
      value: await receiptIn(client, this.receipts, invocationId),
    }));
  }

  async observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation> {
    assertTableRef(table, 'staging');
    assertInvocationId(owner.invocationId);
    assertOwner(owner.owner);
    return this.tx.run<StageObservation>({ readOnly: true }, async (client) => {
      const found = await lookup(client, table);
      if (!found)
        return {
          commit: false,
          value: { status: 'ABSENT', metadataVisible: (await absenceProof(client, table.schema, '0')).metadataVisible },
        };
      return {
        commit: false,
        value: markerMatches(found.marker, owner)
          ? { status: 'OURS', objectId: found.objectId }
          : { status: 'NOT_OURS' },
      };
    });
  }

  // -------------------------------------------------------------------------------------
  // Mutations

  createStaging(request: CreateStagingRequest): Promise<StagingCreated> {
    return createStagingIn(this.tx, request);
  }

  async loadChunk(request: LoadChunkRequest): Promise<ChunkReceipt> {
    assertStagingRef(request.staging);
    assertSeq(request.seq);
    const columns = assertColumns(request.columns);
    if (!Number.isSafeInteger(request.rows) || request.rows < 0) {
      throw new ValidationError(
        'delivery.invalid_request',
        `chunk rows must be a non-negative integer: ${String(request.rows)}`,
      );
    }
    // Verified before the transaction: a chunk that is not the declared bytes touches nothing.
    const chunk = verifyChunkBytes(request);
    return this.tx.run<ChunkReceipt>({ cutPoint: TARGET_CUT_POINTS.loadChunk }, async (client) => {
      this.ingest ??= { copy: await copyIngest(client) };
      const { rows } = await loadChunkBody(client, request, columns, chunk, this.ingest);
      return { commit: true, value: { seq: request.seq, rows, digest: request.sha256 } };
    });
  }

  async publish(request: PublishRequest): Promise<PublishResult> {
    assertPublishRequest(request);
    assertStagingRef(request.staging);
    try {
      return await this.tx.run({ cutPoint: TARGET_CUT_POINTS.publishCommit }, (client) =>
        publishBody(client, request, this.receipts),
      );
    } catch (error) {
      // A concurrent publisher of the same invocation won the receipt's primary key: its
      // receipt is the answer (or a conflict when it is not the same publication).
      if (error instanceof EffectFailedError && (error.cause as { code?: string } | undefined)?.code === '23505') {
        const receipt = await this.probeReceipt(request.invocationId);
        if (receipt) return existingPublication(receipt, request);
      }
      throw error;
    }
  }

  dropStaging(staging: StagingRef, options: DropOptions = {}): Promise<DropResult> {
    return dropStagingIn(this.tx, this.receipts, staging, options);
  }

  close(): Promise<void> {
    return this.tx.close();
  }
}

export function openPostgresTarget(options: PostgresTargetOptions): PostgresTarget {
  return new PostgresTarget(options);
}
