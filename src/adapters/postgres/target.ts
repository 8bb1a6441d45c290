// Longer than ~300 lines: one class implementing the whole TargetPort over `pg` (the
// methods share the pool, the fault injector and the error classification). Split by job
// around it: quoting and statements in sql.ts, outcome classification in outcome.ts, the
// locks and stage rechecks in locks.ts, the publication transaction in publication.ts, the
// partition swap in partition-swap.ts.
import pg from 'pg';
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
  assertIdentifier,
  assertPublishRequest,
  assertInvocationId,
  assertOwner,
  assertSeq,
  assertStagingRef,
  assertTableRef,
  assertUserColumn,
  classifyRetirement,
  markerMatches,
  ownerMarker,
  publicationLockOf,
  RECEIPT_TABLE,
  TARGET_CUT_POINTS,
} from '../../domain/delivery/target-rules.js';
import {
  assertSeqRange,
  factsRange,
  receiptOfRecord as toReceipt,
  scalarOf as scalar,
  type ReceiptRecord,
} from '../../domain/delivery/target-rules.js';
import { assertTargetCheck, judgeTarget, type TargetCheckRequest } from '../../domain/delivery/target-check.js';
import {
  QualityCheckUnrunnableError,
  TargetObjectMissingError,
  TargetUnavailableError,
  TargetUnobservableError,
} from '../../domain/delivery/target-errors.js';
import { verifyChunkBytes } from '../../domain/delivery/chunk-json.js';
import { copyIngest, loadChunkBody } from './chunk-load.js';
import { advisoryLock, lookup, recheckLocked, type Client, type TxResult } from './locks.js';
import { existingPublication, publishBody } from './publication.js';
import { attachedPartitionOf } from './partition-swap.js';
import {
  classifyPgCommitFailure,
  describePgError,
  isPostgresPermissionFailure,
  isPostgresUnrunnableStatement,
  sqlStateOf,
} from './outcome.js';
import {
  ABSENCE_PROOF,
  QUOTED_CHUNK,
  TARGET_CANDIDATES,
  DESCRIBE_COLUMNS,
  FORMAT_COMMENT,
  quoteColumn,
  quoteIdent,
  quoteTable,
  RECEIPT_COLUMNS,
} from './sql.js';

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

interface TxOptions {
  /** The cut point whose effect is this transaction's COMMIT; read-only when absent. */
  cutPoint?: string;
  readOnly?: boolean;
}

/** A row of the receipt table as the driver returns it. */
/** `TargetPort` on PostgreSQL through `pg`: any real server, or embedded PGlite over the wire. */
export class PostgresTarget implements TargetPort {
  private readonly pool: pg.Pool;
  private readonly faults: FaultInjector;
  private readonly receipts: TableRef;
  private readonly role: string | undefined;
  private readonly lockTimeoutMs: number;
  private readonly secrets: string[];
  private closing: Promise<void> | undefined;
  /** How this server takes a chunk (chunk-load.ts), asked once. */
  private ingest: { copy: boolean } | undefined;

  constructor(options: PostgresTargetOptions) {
    this.faults = options.faults;
    this.receipts = assertTableRef(options.receiptTable ?? { schema: 'public', table: RECEIPT_TABLE }, 'receipt table');
    this.role = options.role === undefined ? undefined : assertIdentifier(options.role, 'role');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
    if (!Number.isSafeInteger(this.lockTimeoutMs) || this.lockTimeoutMs < 1) {
      throw new ValidationError('delivery.invalid_option', 'lockTimeoutMs must be a positive integer');
    }
    this.secrets = [options.connectionString, options.pool?.password, options.pool?.connectionString].filter(
      (s): s is string => typeof s === 'string',
    );
    this.pool = new pg.Pool({
      max: 4,
      ...options.pool,
      ...(options.connectionString !== undefined ? { connectionString: options.connectionString } : {}),
    });
    // An idle client whose server went away emits 'error' on the pool; without a listener
    // Node would crash the process. The next checkout reconnects or fails definitely.
    this.pool.on('error', () => undefined);
  }

  // -------------------------------------------------------------------------------------
  // Reads

  async checkTarget(request: TargetCheckRequest): Promise<void> {
    const { table } = assertTargetCheck(request);
    const found = await this.transaction({ readOnly: true }, async (client) => ({
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
    return this.transaction({ readOnly: true }, async (client) => {
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
    return this.transaction({ readOnly: true }, async (client) => {
      await recheckLocked(client, staging, 'ACCESS SHARE');
      const where = range === undefined ? '' : ` WHERE ${QUOTED_CHUNK} >= $1 AND ${QUOTED_CHUNK} < $2`;
      const result = await client.query<{ seq: number; rows: string }>(
        `SELECT ${QUOTED_CHUNK} AS seq, count(*)::text AS rows FROM ${quoteTable(staging.table)}${where} GROUP BY 1 ORDER BY 1`,
        range === undefined ? [] : [range.from, range.to],
      );
      return { commit: false, value: result.rows.map((r) => ({ seq: Number(r.seq), rows: Number(r.rows) })) };
    });
  }

  async stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts> {
    assertStagingRef(staging);
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
    const range = factsRange(facts);
    const table = quoteTable(staging.table);
    const where = range ? ` WHERE ${QUOTED_CHUNK} >= $1 AND ${QUOTED_CHUNK} < $2` : '';
    const bounds = range ? [range.from, range.to] : [];
    const probe = this.transaction({ readOnly: true }, async (client) => {
      await recheckLocked(client, staging, 'ACCESS SHARE');
      const nullSums = notNull.map(
        (c, i) => `sum(CASE WHEN ${quoteColumn(c)} IS NULL THEN 1 ELSE 0 END)::text AS n${i}`,
      );
      const counts = await client.query<Record<string, string | null>>(
        `SELECT count(*)::text AS total${nullSums.length ? ', ' + nullSums.join(', ') : ''} FROM ${table}${where}`,
        bounds,
      );
      const row = counts.rows[0] ?? {};
      let duplicateKeys = 0;
      if (keys.length > 0) {
        const dup = await client.query<{ groups: string }>(
          `SELECT count(*)::text AS groups FROM (SELECT 1 FROM ${table}${where} GROUP BY ${keys.map(quoteColumn).join(', ')} HAVING count(*) > 1) d`,
          bounds,
        );
        duplicateKeys = Number(dup.rows[0]?.groups ?? 0);
      }
      const assertions: Record<string, number | string | null> = {};
      for (const a of facts.assertions) {
        const result = await client.query({ text: a.sql.split('{staging}').join(table), rowMode: 'array' });
        const first = (result.rows[0] as unknown[] | undefined)?.[0];
        assertions[a.name] = scalar(first);
      }
      const nulls: Record<string, number> = {};
      notNull.forEach((c, i) => (nulls[c] = Number(row[`n${i}`] ?? 0)));
      return { commit: false, value: { rows: Number(row.total ?? 0), duplicateKeys, nulls, assertions } };
    });
    return probe.catch((error: unknown) => {
      const cause = (error as { cause?: unknown }).cause;
      throw isPostgresUnrunnableStatement(cause) ? new QualityCheckUnrunnableError((error as Error).message) : error;
    });
  }

  async identity(): Promise<TargetIdentity> {
    return this.transaction({ readOnly: true }, async (client) => {
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
    return this.transaction({ readOnly: true }, async (client) => ({
      commit: false,
      value: await this.receiptIn(client, invocationId),
    }));
  }

  /** The receipt as this transaction sees it; a receipt table the principal cannot see is unobservable. */
  private async receiptIn(client: Client, invocationId: string): Promise<PublicationReceipt | undefined> {
    const table = await lookup(client, this.receipts);
    if (!table) {
      const proof = await absenceProof(client, this.receipts.schema, '0');
      if (!proof.metadataVisible) {
        throw new TargetUnobservableError(
          'the receipt table is not visible to this principal: absence of a receipt cannot be proved',
        );
      }
      return undefined;
    }
    const result = await client.query<ReceiptRecord>(
      `SELECT ${RECEIPT_COLUMNS} FROM ${quoteTable(this.receipts)} AS r WHERE invocation_id = $1`,
      [invocationId],
    );
    const row = result.rows[0];
    return row ? toReceipt(row) : undefined;
  }

  async observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation> {
    assertTableRef(table, 'staging');
    assertInvocationId(owner.invocationId);
    assertOwner(owner.owner);
    return this.transaction<StageObservation>({ readOnly: true }, async (client) => {
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

  async createStaging(request: CreateStagingRequest): Promise<StagingCreated> {
    assertInvocationId(request.invocationId);
    assertOwner(request.ownerBinding);
    assertTableRef(request.staging, 'staging');
    assertTableRef(request.likeTable, 'like table');
    const identity = { invocationId: request.invocationId, owner: request.ownerBinding };
    return this.transaction<StagingCreated>({ cutPoint: TARGET_CUT_POINTS.createStaging }, async (client) => {
      await advisoryLock(client, `cutpoint.stage:${request.staging.schema}.${request.staging.table}`);
      const existing = await lookup(client, request.staging);
      if (existing) {
        if (!markerMatches(existing.marker, identity)) {
          throw new IdentityConflictError(
            'delivery.staging_identity_conflict',
            `${request.staging.schema}.${request.staging.table} exists and is not this invocation's stage`,
          );
        }
        return {
          commit: false,
          value: { table: request.staging, objectId: existing.objectId, ...identity, created: false },
        };
      }
      const like = await lookup(client, request.likeTable);
      if (!like) throw new TargetObjectMissingError(`table ${request.likeTable.schema}.${request.likeTable.table}`);
      const stage = quoteTable(request.staging);
      // CREATE TABLE AS copies column names and types but no NOT NULL, default or constraint:
      // the stage accepts whatever arrives, and the quality probes report it.
      await client.query(`CREATE TABLE ${stage} AS SELECT l.* FROM ${quoteTable(request.likeTable)} l WITH NO DATA`);
      await client.query(`ALTER TABLE ${stage} ADD COLUMN ${QUOTED_CHUNK} integer NOT NULL`);
      // A chunk's re-load deletes by seq and a part's observation reads a seq range: both
      // are index range scans, never a scan of the whole stage.
      await client.query(`CREATE INDEX ON ${stage} (${QUOTED_CHUNK})`);
      const comment = await client.query<{ statement: string }>(FORMAT_COMMENT, [
        request.staging.schema,
        request.staging.table,
        ownerMarker(request.invocationId, request.ownerBinding),
      ]);
      await client.query(comment.rows[0]!.statement);
      const created = await lookup(client, request.staging);
      if (!created)
        throw new TargetObjectMissingError(`created stage ${request.staging.schema}.${request.staging.table}`);
      return {
        commit: true,
        value: { table: request.staging, objectId: created.objectId, ...identity, created: true },
      };
    });
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
    return this.transaction<ChunkReceipt>({ cutPoint: TARGET_CUT_POINTS.loadChunk }, async (client) => {
      this.ingest ??= { copy: await copyIngest(client) };
      const { rows } = await loadChunkBody(client, request, columns, chunk, this.ingest);
      return { commit: true, value: { seq: request.seq, rows, digest: request.sha256 } };
    });
  }

  async publish(request: PublishRequest): Promise<PublishResult> {
    assertPublishRequest(request);
    assertStagingRef(request.staging);
    try {
      return await this.transaction({ cutPoint: TARGET_CUT_POINTS.publishCommit }, (client) =>
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

  async dropStaging(staging: StagingRef, options: DropOptions = {}): Promise<DropResult> {
    assertStagingRef(staging);
    let receipt: PublicationReceipt | undefined;
    let partition: TableRef | undefined;
    const outcome = await this.transaction<'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS' | 'PUBLISHED' | 'ATTACHED'>(
      { cutPoint: TARGET_CUT_POINTS.dropStaging },
      async (client) => {
        await advisoryLock(client, `cutpoint.retire:${staging.table.schema}.${staging.table.table}`);
        // Serialized with every publication of the invocation (publishBody takes the same
        // lock first); READ COMMITTED gives the next statement a snapshot taken after it.
        await advisoryLock(client, publicationLockOf(staging.invocationId));
        if (options.unlessPublished) {
          receipt = await this.receiptIn(client, staging.invocationId);
          if (receipt) return { commit: false, value: 'PUBLISHED' };
        }
        const before = await lookup(client, staging.table);
        if (!before) {
          // Gone from its name: maybe swapped in as the receipt's partition (published data, never dropped).
          partition = await attachedPartitionOf(client, staging.objectId, staging.invocationId, () =>
            this.receiptIn(client, staging.invocationId),
          );
          return { commit: false, value: partition ? 'ATTACHED' : 'ALREADY_ABSENT' };
        }
        if (before.objectId !== staging.objectId || !markerMatches(before.marker, staging))
          return { commit: false, value: 'NOT_OURS' };
        await client.query(`LOCK TABLE ${quoteTable(staging.table)} IN ACCESS EXCLUSIVE MODE`);
        const locked = await lookup(client, staging.table);
        if (!locked || locked.objectId !== staging.objectId || !markerMatches(locked.marker, staging)) {
          return { commit: false, value: 'NOT_OURS' };
        }
        await client.query(`DROP TABLE ${quoteTable(staging.table)}`);
        return { commit: true, value: 'DROPPED' };
      },
    );
    const proof = await this.transaction({ readOnly: true }, async (client) => ({
      commit: false,
      value: await absenceProof(client, staging.table.schema, staging.objectId),
    }));
    return {
      status: classifyRetirement(outcome, proof),
      dropped: outcome === 'DROPPED',
      ...(receipt ? { receipt } : {}),
      ...(partition ? { partition } : {}),
    };
  }

  close(): Promise<void> {
    return (this.closing ??= this.pool.end());
  }

  // -------------------------------------------------------------------------------------
  // Transactions

  /**
   * Runs `body` in one transaction on one connection. A read-only or no-op body is rolled
   * back. A mutation's COMMIT runs as the cut point's effect: a lost answer there is
   * OutcomeUnknown; any failure before COMMIT rolls back and is definite.
   */
  private async transaction<T>(options: TxOptions, body: (client: Client) => Promise<TxResult<T>>): Promise<T> {
    let client: Client;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new TargetUnavailableError(`cannot connect to PostgreSQL: ${describePgError(error, this.secrets)}`, {
        cause: { code: sqlStateOf(error) },
      });
    }
    let healthy = true;
    try {
      const settings = [
        `BEGIN ISOLATION LEVEL READ COMMITTED${options.readOnly ? ' READ ONLY' : ''}`,
        `SET LOCAL TimeZone = 'UTC'`,
        `SET LOCAL lock_timeout = ${this.lockTimeoutMs}`,
        ...(this.role !== undefined ? [`SET LOCAL ROLE ${quoteIdent(this.role)}`] : []),
      ];
      let result: TxResult<T>;
      try {
        await client.query(settings.join('; '));
        result = await body(client);
      } catch (error) {
        healthy = await rollback(client);
        throw this.beforeCommitFailure(error, options);
      }
      if (!result.commit || options.cutPoint === undefined) {
        healthy = await rollback(client);
        return result.value;
      }
      const cutPoint = options.cutPoint;
      try {
        await this.faults.at(cutPoint, () => this.commit(client, cutPoint));
      } catch (error) {
        // crash-before leaves the transaction open: roll it back as a dying worker's
        // connection would. After an applied COMMIT this is a harmless no-op.
        healthy = false;
        await rollback(client);
        throw error;
      }
      return result.value;
    } finally {
      client.release(!healthy);
    }
  }

  private async commit(client: Client, cutPoint: string): Promise<void> {
    let result: pg.QueryResult;
    try {
      result = await client.query('COMMIT');
    } catch (error) {
      const message = `COMMIT at ${cutPoint}: ${describePgError(error, this.secrets)}`;
      if (classifyPgCommitFailure(error) === 'unknown') throw new OutcomeUnknownError(cutPoint, message);
      throw new EffectFailedError(cutPoint, message, { cause: { code: sqlStateOf(error) } });
    }
    // An aborted transaction answers COMMIT with ROLLBACK: definitely not applied.
    if (result.command !== 'COMMIT') throw new EffectFailedError(cutPoint, `transaction rolled back at ${cutPoint}`);
  }

  private beforeCommitFailure(error: unknown, options: TxOptions): Error {
    if (error instanceof CutpointError) return error;
    const message = describePgError(error, this.secrets);
    if (isPostgresPermissionFailure(error)) return new TargetUnobservableError(`permission denied: ${message}`);
    if (options.cutPoint !== undefined) {
      // Nothing can have committed: COMMIT was never sent. Only the SQLSTATE is kept as cause.
      return new EffectFailedError(options.cutPoint, `${options.cutPoint}: ${message}`, {
        cause: { code: sqlStateOf(error) },
      });
    }
    return new TargetUnavailableError(message, { cause: { code: sqlStateOf(error) } });
  }
}

export function openPostgresTarget(options: PostgresTargetOptions): PostgresTarget {
  return new PostgresTarget(options);
}

// ---------------------------------------------------------------------------------------

async function absenceProof(
  client: Client,
  schema: string,
  objectId: string,
): Promise<{ metadataVisible: boolean; exactObjectExists: boolean }> {
  const result = await client.query<{
    catalog_readable: boolean;
    namespace_readable: boolean;
    schema_usage: boolean | null;
    exact_exists: boolean;
  }>(ABSENCE_PROOF, [schema, objectId]);
  const row = result.rows[0];
  if (!row) return { metadataVisible: false, exactObjectExists: false };
  // schema_usage is NULL when the schema does not exist: then readable catalogs prove it.
  const schemaVisible = row.schema_usage === null ? row.namespace_readable : row.schema_usage;
  return { metadataVisible: row.catalog_readable && schemaVisible, exactObjectExists: row.exact_exists };
}

/** Ends the transaction; false when the connection is no longer usable. */
async function rollback(client: Client): Promise<boolean> {
  try {
    await client.query('ROLLBACK');
    return true;
  } catch {
    return false;
  }
}
