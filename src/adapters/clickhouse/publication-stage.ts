// Over ~300 lines since the formatter wrapped it at 120 columns (262 lines before), kept whole:
// one adapter: the ClickHouse stage as a TargetPort (stage DDL, chunk loads, observation); its
// methods share the handle, the SQL builders and the fault wrapping, so a split would scatter one
// contract.
import type { ClickHouseClient } from '@clickhouse/client';
import { CutpointError, IdentityConflictError, ValidationError } from '../../domain/errors.js';
import type { TargetIdentity } from '../../domain/delivery/sealed-authority.js';
import {
  QualityCheckUnrunnableError,
  StagingBindingChangedError,
  TargetObjectMissingError,
  TargetUnavailableError,
} from '../../domain/delivery/target-errors.js';
import {
  assertColumns,
  assertInvocationId,
  assertOwner,
  assertSeq,
  assertSeqRange,
  assertUserColumn,
  CHUNK_COLUMN,
  classifyRetirement,
  factsRange,
  markerMatches,
  ownerMarker,
  scalarOf,
  TARGET_CUT_POINTS,
} from '../../domain/delivery/target-rules.js';
import { assertChName, assertUuidText } from '../../domain/publication/candidate.js';
import type { FaultInjector } from '../../ports/faults.js';
import type {
  CreateStagingRequest,
  DropResult,
  LoadChunkRequest,
  PublishResult,
  StageObservation,
  StagingCreated,
  StagingFacts,
  TableDescription,
  TargetPort,
} from '../../ports/target.js';
import type {
  ChunkReceipt,
  PublicationReceipt,
  SeqRange,
  StagingFactsRequest,
  StagingRef,
  TableRef,
} from '../../domain/delivery/target-types.js';
import type { ClickHouseHandle } from './client.js';
import { judgeTarget, type TargetCheckRequest } from '../../domain/delivery/target-check.js';
import {
  CHUNK_DIGEST_COLUMN,
  loadStageChunk,
  STAGE_DEDUPLICATION_WINDOW,
  stageColumnType,
} from './publication-load.js';
import {
  assertEnclosedSelect,
  catalogColumns,
  databaseVisible,
  describeClickHouseError,
  effectFailure,
  insertableColumns,
  quoteName,
  quoteClickHouseTable,
  runCommand,
  selectRows,
  serverErrorOf,
  settingsClause,
  stringLiteral,
  tableUnderName,
} from './publication-sql.js';

/**
 * The stage side of `TargetPort` for a ClickHouse target published by EXCHANGE
 * (docs/rules.md#exchange-loading): the owned stage is a MergeTree with the target's insertable
 * columns (each Nullable where ClickHouse allows it, so the quality probes see nulls) plus
 * `_cutpoint_seq UInt32` and `_cutpoint_chunk String`, the owner marker as its COMMENT,
 * ordered by seq, with a deduplication window for tokenised chunk INSERTs. Its object id
 * is its UUID (lower-case text). The delivery steps — create-staging, the parts' loads,
 * VerifyEof's observations, quality, cleanup, retire — run on it unchanged.
 *
 * `publish()` and `probeReceipt()` are not this target's way: the candidate, the single
 * EXCHANGE and its observation are (src/ports/exchange-target.ts). Both throw
 * `publication.exchange_mode`. `dropStaging`'s `unlessPublished` needs no lock here: the
 * stage itself is never published (the candidate is, and a late EXCHANGE of it is fenced).
 */
export function createClickHouseStageTarget(handle: ClickHouseHandle, faults: FaultInjector): TargetPort {
  return new ClickHouseStageTarget(handle, faults);
}

class ClickHouseStageTarget implements TargetPort {
  private readonly client: ClickHouseClient;
  constructor(
    private readonly handle: ClickHouseHandle,
    private readonly faults: FaultInjector,
  ) {
    this.client = handle.client;
  }

  async identity(): Promise<TargetIdentity> {
    return this.guard(async () => {
      // serverUUID() survives restarts (chdb reports all zeros); database and principal are sealed too.
      const [row] = await selectRows<{ system: string; database: string; principal: string }>(
        this.client,
        'SELECT toString(serverUUID()) AS system, currentDatabase() AS database, currentUser() AS principal',
      );
      if (!row) throw new TargetUnavailableError('the target did not report its identity');
      return { engine: 'clickhouse', system: row.system, database: row.database, principal: row.principal };
    });
  }

  /** The exchange target: a table (not a view or dictionary) outside ClickHouse's system databases, with the route's columns. */
  async checkTarget(request: TargetCheckRequest): Promise<void> {
    const { schema, table } = checkedTable(request.table);
    for (const c of request.columns) assertUserColumn(c.name);
    const { found, columns } = await this.guard(async () => {
      const rows = await selectRows<{ database: string; name: string; engine: string }>(
        this.client,
        'SELECT database, name, engine FROM system.tables WHERE lower(database) = lower({db:String}) AND lower(name) = lower({n:String})',
        { db: schema, n: table },
      );
      const exact = rows.some((r) => r.database === schema && r.name === table);
      return {
        found: rows,
        columns: exact ? (await catalogColumns(this.client, schema, table)).map((c) => c.name) : [],
      };
    });
    const kind = (engine: string) =>
      /View$/.test(engine) ? 'view' : /^(Dictionary|Null|Buffer|Distributed|Merge)$/.test(engine) ? 'other' : 'table';
    judgeTarget(
      request,
      { found: found.map((f) => ({ schema: f.database, table: f.name, kind: kind(f.engine) })), columns },
      { engine: 'ClickHouse', systemSchemas: ['system', 'information_schema'] },
    );
  }

  async describeTable(table: TableRef): Promise<TableDescription> {
    checkedTable(table);
    return this.guard(async () => {
      const found = await tableUnderName(this.client, table.schema, table.table);
      if (!found) throw new TargetObjectMissingError(`table ${table.schema}.${table.table}`);
      const columns = insertableColumns(await catalogColumns(this.client, table.schema, table.table)).filter(
        (c) => !c.name.startsWith('_cutpoint'),
      );
      return {
        table,
        objectId: found.uuid,
        columns: columns.map((c) => ({
          name: c.name,
          type: c.type,
          nullable: /^(LowCardinality\()?Nullable\(/.test(c.type),
        })),
      };
    });
  }

  async createStaging(request: CreateStagingRequest): Promise<StagingCreated> {
    assertInvocationId(request.invocationId);
    assertOwner(request.ownerBinding);
    checkedTable(request.staging);
    checkedTable(request.likeTable);
    const identity = { invocationId: request.invocationId, owner: request.ownerBinding };
    const { schema, table } = request.staging;
    return this.guard(async () => {
      const existing = await tableUnderName(this.client, schema, table);
      if (existing)
        return {
          table: request.staging,
          objectId: this.ours(existing, identity, request.staging),
          ...identity,
          created: false,
        };
      const like = insertableColumns(
        await catalogColumns(this.client, request.likeTable.schema, request.likeTable.table),
      );
      if (like.length === 0)
        throw new TargetObjectMissingError(`table ${request.likeTable.schema}.${request.likeTable.table}`);
      const columns = [
        ...like.map((c) => `${quoteName(c.name, 'column')} ${stageColumnType(c.type)}`),
        `${CHUNK_COLUMN} UInt32`,
        `${CHUNK_DIGEST_COLUMN} String`,
      ];
      const ddl =
        `CREATE TABLE ${quoteClickHouseTable(schema, table)} (${columns.join(', ')}) ENGINE = MergeTree ORDER BY ${CHUNK_COLUMN} ` +
        `${settingsClause({ non_replicated_deduplication_window: STAGE_DEDUPLICATION_WINDOW })} COMMENT ${stringLiteral(ownerMarker(request.invocationId, request.ownerBinding))}`;
      await this.effect(TARGET_CUT_POINTS.createStaging, () => runCommand(this.client, ddl));
      const created = await tableUnderName(this.client, schema, table);
      if (!created) throw new TargetObjectMissingError(`created stage ${schema}.${table}`);
      return {
        table: request.staging,
        objectId: this.ours(created, identity, request.staging),
        ...identity,
        created: true,
      };
    });
  }

  async loadChunk(request: LoadChunkRequest): Promise<ChunkReceipt> {
    checkedStaging(request.staging);
    assertSeq(request.seq);
    assertColumns(request.columns);
    return this.guard(async () => {
      await this.recheck(request.staging);
      return loadStageChunk(
        this.client,
        this.faults,
        { database: request.staging.table.schema, table: request.staging.table.table },
        request,
        request.staging.invocationId,
      );
    });
  }

  async observeChunks(staging: StagingRef, range?: SeqRange): Promise<Array<{ seq: number; rows: number }>> {
    checkedStaging(staging);
    if (range !== undefined) assertSeqRange(range);
    return this.guard(async () => {
      await this.recheck(staging);
      const rows = await selectRows<{ _cutpoint_seq: number | string; _cutpoint_rows: number | string }>(
        this.client,
        `SELECT ${CHUNK_COLUMN}, count() AS _cutpoint_rows FROM ${quoteClickHouseTable(staging.table.schema, staging.table.table)}${seqWhere(range)} GROUP BY ${CHUNK_COLUMN} ORDER BY ${CHUNK_COLUMN}`,
      );
      return rows.map((r) => ({ seq: Number(r._cutpoint_seq), rows: Number(r._cutpoint_rows) }));
    });
  }

  async stagingFacts(staging: StagingRef, facts: StagingFactsRequest): Promise<StagingFacts> {
    checkedStaging(staging);
    const keys = facts.keyColumns.length > 0 ? assertColumns(facts.keyColumns, 'keyColumns') : [];
    const notNull = facts.notNull.map(assertUserColumn);
    const names = new Set<string>();
    for (const a of facts.assertions) {
      if (typeof a.name !== 'string' || a.name.length === 0 || names.has(a.name))
        throw new ValidationError(
          'delivery.invalid_request',
          `assertion names must be unique and non-empty: ${String(a.name)}`,
        );
      assertEnclosedSelect(a.sql, `assertion ${a.name}`);
      names.add(a.name);
    }
    const range = factsRange(facts);
    const table = quoteClickHouseTable(staging.table.schema, staging.table.table);
    const where = seqWhere(range);
    const readOnly = settingsClause({ readonly: 2, output_format_json_quote_64bit_integers: 1 });
    return this.guard(async () => {
      await this.recheck(staging);
      // Aliases in the reserved _cutpoint prefix: an alias named like a user column would shadow it.
      const nullCounts = notNull.map((c, i) => `countIf(${quoteName(c, 'column')} IS NULL) AS _cutpoint_n${i}`);
      const [row] = await selectRows<Record<string, string | number>>(
        this.client,
        `SELECT count() AS _cutpoint_total${nullCounts.map((n) => `, ${n}`).join('')} FROM ${table}${where}`,
      );
      let duplicateKeys = 0;
      if (keys.length > 0) {
        const [dup] = await selectRows<{ _cutpoint_groups: string | number }>(
          this.client,
          `SELECT count() AS _cutpoint_groups FROM (SELECT 1 FROM ${table}${where} GROUP BY ${keys.map((k) => quoteName(k, 'column')).join(', ')} HAVING count() > 1)`,
        );
        duplicateKeys = Number(dup?._cutpoint_groups ?? 0);
      }
      const assertions: Record<string, number | string | null> = {};
      for (const a of facts.assertions) {
        const result = await this.client.query({
          query: `SELECT * FROM (\n${a.sql.split('{staging}').join(table)}\n) LIMIT 1 ${readOnly}`,
          format: 'JSONCompactEachRow',
        });
        assertions[a.name] = scalarOf((await result.json<unknown[]>())[0]?.[0]);
      }
      const nulls: Record<string, number> = {};
      notNull.forEach((c, i) => (nulls[c] = Number(row?.[`_cutpoint_n${i}`] ?? 0)));
      return { rows: Number(row?._cutpoint_total ?? 0), duplicateKeys, nulls, assertions };
    }).catch((error: unknown) => {
      // A column the stage lacks, an assertion that does not compile: no retry makes it run.
      const code = serverErrorOf((error as { cause?: unknown }).cause ?? error)?.code;
      throw code !== undefined && UNRUNNABLE_CODES.has(code)
        ? new QualityCheckUnrunnableError((error as Error).message)
        : error;
    });
  }

  async publish(): Promise<PublishResult> {
    throw exchangeMode();
  }

  async probeReceipt(): Promise<PublicationReceipt | undefined> {
    throw exchangeMode();
  }

  async observeStaging(table: TableRef, owner: Pick<StagingRef, 'invocationId' | 'owner'>): Promise<StageObservation> {
    checkedTable(table);
    assertInvocationId(owner.invocationId);
    assertOwner(owner.owner);
    return this.guard(async (): Promise<StageObservation> => {
      const found = await tableUnderName(this.client, table.schema, table.table);
      if (!found) return { status: 'ABSENT', metadataVisible: await databaseVisible(this.client, table.schema) };
      return markerMatches(found.comment, owner) ? { status: 'OURS', objectId: found.uuid } : { status: 'NOT_OURS' };
    });
  }

  async dropStaging(staging: StagingRef): Promise<DropResult> {
    checkedStaging(staging);
    const { schema, table } = staging.table;
    return this.guard(async () => {
      const found = await tableUnderName(this.client, schema, table);
      let outcome: 'DROPPED' | 'ALREADY_ABSENT' | 'NOT_OURS' = 'ALREADY_ABSENT';
      if (found && (found.uuid !== staging.objectId || !markerMatches(found.comment, staging))) outcome = 'NOT_OURS';
      else if (found) {
        await this.effect(TARGET_CUT_POINTS.dropStaging, () =>
          runCommand(this.client, `DROP TABLE ${quoteClickHouseTable(schema, table)} SYNC`),
        );
        outcome = 'DROPPED';
      }
      const [exact, metadataVisible] = await Promise.all([
        selectRows<{ n: string | number }>(
          this.client,
          'SELECT count() AS n FROM system.tables WHERE uuid = toUUID({u:String})',
          { u: staging.objectId },
        ),
        databaseVisible(this.client, schema),
      ]);
      const proof = { metadataVisible, exactObjectExists: Number(exact[0]?.n ?? 0) > 0 };
      return { status: classifyRetirement(outcome, proof), dropped: outcome === 'DROPPED' };
    });
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  // -------------------------------------------------------------------------------------

  private ours(
    found: { uuid: string; comment: string },
    identity: Pick<StagingRef, 'invocationId' | 'owner'>,
    table: TableRef,
  ): string {
    if (!markerMatches(found.comment, identity)) {
      throw new IdentityConflictError(
        'delivery.staging_identity_conflict',
        `${table.schema}.${table.table} exists and is not this invocation's stage`,
      );
    }
    return found.uuid;
  }

  /** The stage under its name is still the journaled one: same UUID, same owner marker. */
  private async recheck(staging: StagingRef): Promise<void> {
    const found = await tableUnderName(this.client, staging.table.schema, staging.table.table);
    if (!found) throw new StagingBindingChangedError(`${staging.table.schema}.${staging.table.table} no longer exists`);
    if (found.uuid !== staging.objectId || !markerMatches(found.comment, staging))
      throw new StagingBindingChangedError(`${staging.table.schema}.${staging.table.table} is another table now`);
  }

  private async effect(cutPoint: string, body: () => Promise<void>): Promise<void> {
    try {
      await this.faults.at(cutPoint, body);
    } catch (error) {
      throw effectFailure(cutPoint, error);
    }
  }

  /** Driver failures outside a cut point: the target is unavailable (never a conclusion). */
  private async guard<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      if (error instanceof CutpointError) throw error;
      throw new TargetUnavailableError(`ClickHouse: ${describeClickHouseError(error)}`, {
        cause: serverErrorOf(error),
      });
    }
  }
}

function exchangeMode(): ValidationError {
  return new ValidationError(
    'publication.exchange_mode',
    'a ClickHouse target publishes by EXCHANGE (candidate, dispatch intent, one EXCHANGE, observation), not by publish()/probeReceipt()',
  );
}

/** NO_SUCH_COLUMN_IN_TABLE, ILLEGAL_TYPE_OF_ARGUMENT, UNKNOWN_FUNCTION, UNKNOWN_IDENTIFIER, UNKNOWN_TABLE, SYNTAX_ERROR. */
const UNRUNNABLE_CODES = new Set([16, 43, 46, 47, 60, 62]);

function checkedTable(table: TableRef): TableRef {
  assertChName(table.schema, 'database');
  assertChName(table.table, 'table');
  return table;
}

function checkedStaging(staging: StagingRef): void {
  checkedTable(staging.table);
  assertInvocationId(staging.invocationId);
  assertOwner(staging.owner);
  assertUuidText(staging.objectId, 'staging objectId');
}

function seqWhere(range: SeqRange | undefined): string {
  return range === undefined ? '' : ` WHERE ${CHUNK_COLUMN} >= ${range.from} AND ${CHUNK_COLUMN} < ${range.to}`;
}
