// Over ~300 lines since the formatter wrapped it at 120 columns (280 lines before), kept whole:
// one adapter: the ExchangeTargetPort (candidate, EXCHANGE, observation by UUID, fence rename,
// drop); one contract over one handle.
import type { ClickHouseClient } from '@clickhouse/client';
import { IdentityConflictError, ValidationError } from '../../domain/errors.js';
import { assertChName, assertUuidText, type ExchangeNames } from '../../domain/publication/candidate.js';
import { PUBLICATION_CUT_POINTS } from '../../domain/publication/cut-points.js';
import { CandidateMismatchError } from '../../domain/publication/errors.js';
import { TargetObjectMissingError } from '../../domain/delivery/target-errors.js';
import { scalarOf } from '../../domain/delivery/target-rules.js';
import type { FaultInjector } from '../../ports/faults.js';
import type {
  CreateCandidateRequest,
  DropByUuidStatus,
  ExchangeTargetPort,
  FillCandidateRequest,
  FillResult,
  ObservedTable,
  ScalarOptions,
  ScalarStatement,
  TableInventory,
} from '../../ports/exchange-target.js';
import type { ClickHouseHandle } from './client.js';
import { STAGE_DEDUPLICATION_WINDOW } from './publication-load.js';
import {
  assertEnclosedSelect,
  catalogColumns,
  countAndDigest,
  databaseVisible,
  effectFailure,
  insertableColumns,
  quoteName,
  quoteClickHouseTable,
  readFailure,
  runCommand,
  selectRows,
  settingsClause,
  stringLiteral,
  tableUnderName,
} from './publication-sql.js';

const CP = PUBLICATION_CUT_POINTS;
const TOKEN = /^[A-Za-z0-9_.:-]{1,200}$/;
/** MergeTree engines that keep no Keeper deduplication log of their own. */
const NON_REPLICATED_MERGE_TREE = /^(?!Replicated|Shared)[A-Za-z]*MergeTree$/;

/**
 * `ExchangeTargetPort` over a ClickHouse handle (embedded chdb or a server over HTTP).
 * Effects run at their cut points; reads that conclude something run fresh and are
 * never cached. See src/ports/exchange-target.ts for the contract.
 */
export function createClickHouseExchangeTarget(handle: ClickHouseHandle, faults: FaultInjector): ExchangeTargetPort {
  return new ClickHouseExchangeTarget(handle.client, faults);
}

class ClickHouseExchangeTarget implements ExchangeTargetPort {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly faults: FaultInjector,
  ) {}

  async databaseEngine(database: string): Promise<string | undefined> {
    assertChName(database, 'database');
    const rows = await this.read('database engine', () =>
      selectRows<{ engine: string }>(this.client, 'SELECT engine FROM system.databases WHERE name = {db:String}', {
        db: database,
      }),
    );
    return rows[0]?.engine;
  }

  async createCandidate(request: CreateCandidateRequest): Promise<{ created: boolean }> {
    const { names, uuid, marker } = checkedCandidate(request);
    const existing = await this.read('candidate lookup', () =>
      tableUnderName(this.client, names.database, names.candidate),
    );
    if (existing) return { created: sameCandidate(existing, uuid, marker, names) };
    const elsewhere = await this.read('candidate uuid lookup', () => this.whereIsUuid(uuid));
    if (elsewhere.length > 0) {
      throw new IdentityConflictError(
        'publication.candidate_identity_conflict',
        `the candidate UUID already names ${elsewhere.map((t) => `${t.database}.${t.name}`).join(', ')}; no second CREATE`,
      );
    }
    // A non-replicated MergeTree ignores insert_deduplication_token unless it keeps a
    // deduplication log, so the candidate is created with one: a duplicate or zombie fill
    // of the same token is then dropped by the server itself (measured on chdb: two
    // concurrent fills with one token leave the rows once). Replicated engines deduplicate
    // tokens through Keeper already.
    const engine = (await this.read('target lookup', () => tableUnderName(this.client, names.database, names.target)))
      ?.engine;
    const dedup =
      engine !== undefined && NON_REPLICATED_MERGE_TREE.test(engine)
        ? ` ${settingsClause({ non_replicated_deduplication_window: STAGE_DEDUPLICATION_WINDOW })}`
        : '';
    const ddl = `CREATE TABLE ${quoteClickHouseTable(names.database, names.candidate)} UUID ${stringLiteral(uuid)} AS ${quoteClickHouseTable(names.database, names.target)}${dedup} COMMENT ${stringLiteral(marker)}`;
    await this.effect(CP.candidateCreate, () => runCommand(this.client, ddl));
    return { created: true };
  }

  async fillCandidate(request: FillCandidateRequest): Promise<FillResult> {
    const { names, uuid, marker } = checkedCandidate(request);
    if (!Number.isSafeInteger(request.expectedRows) || request.expectedRows < 0)
      throw new ValidationError('publication.invalid_request', 'expectedRows must be a non-negative integer');
    if (typeof request.token !== 'string' || !TOKEN.test(request.token))
      throw new ValidationError('publication.invalid_request', 'the fill token must be 1..200 of [A-Za-z0-9_.:-]');
    const columns = await this.read('target columns', () => this.targetColumns(names));
    const state = () =>
      this.read('candidate and stage digests', async () => {
        await this.ownedUnpublished(names, uuid, marker);
        const [stage, candidate] = await Promise.all([
          countAndDigest(this.client, names.database, names.stage, columns),
          countAndDigest(this.client, names.database, names.candidate, columns),
        ]);
        return { stage, candidate };
      });
    const before = await state();
    if (before.stage.rows !== request.expectedRows) {
      throw new CandidateMismatchError(
        `the stage holds ${before.stage.rows} rows, the journal proved ${request.expectedRows}; nothing filled`,
      );
    }
    if (before.candidate.rows === before.stage.rows && before.candidate.digest === before.stage.digest)
      return { ...before.candidate, filled: false };
    const list = columns.map((c) => quoteName(c, 'column')).join(', ');
    // optimize_on_insert = 0: a Replacing/Collapsing target would otherwise collapse rows of
    // one key inside the inserted block (measured), and the candidate could never be shown
    // to hold exactly the stage's rows; merges collapse them later as the engine intends.
    const settings = settingsClause({
      insert_deduplication_token: request.token,
      insert_null_as_default: 0,
      optimize_on_insert: 0,
    });
    const fill = `INSERT INTO ${quoteClickHouseTable(names.database, names.candidate)} (${list}) ${settings} SELECT ${list} FROM ${quoteClickHouseTable(names.database, names.stage)}`;
    await this.effect(CP.candidateFill, async () => {
      // A partial or foreign fill of our unpublished candidate: emptied, then filled again
      // with the same token (TRUNCATE forgets the deduplication log's blocks: measured).
      if (before.candidate.rows > 0)
        await runCommand(this.client, `TRUNCATE TABLE ${quoteClickHouseTable(names.database, names.candidate)}`);
      await runCommand(this.client, fill);
    });
    const after = await state();
    if (after.candidate.rows !== after.stage.rows || after.candidate.digest !== after.stage.digest) {
      throw new CandidateMismatchError(
        `the candidate holds ${after.candidate.rows} rows (digest ${after.candidate.digest}), the stage ${after.stage.rows} (digest ${after.stage.digest}) after the fill`,
      );
    }
    return { ...after.candidate, filled: true };
  }

  async candidateContents(request: CreateCandidateRequest): Promise<{ rows: number; digest: string }> {
    const { names, uuid, marker } = checkedCandidate(request);
    return this.read('candidate digest', async () => {
      const columns = await this.targetColumns(names);
      await this.ownedUnpublished(names, uuid, marker);
      return countAndDigest(this.client, names.database, names.candidate, columns);
    });
  }

  async observeTables(names: ExchangeNames): Promise<ObservedTable[]> {
    checkedNames(names);
    return this.faults.at(CP.observe, () =>
      this.read('publication observation', () =>
        selectRows<ObservedTable>(
          this.client,
          'SELECT database, name, toString(uuid) AS uuid, comment FROM system.tables WHERE database = {db:String} AND name IN ({t:String}, {c:String}, {x:String}) ORDER BY name',
          { db: names.database, t: names.target, c: names.candidate, x: names.tombstone },
        ),
      ),
    );
  }

  async exchange(names: ExchangeNames): Promise<void> {
    checkedNames(names);
    const statement = `EXCHANGE TABLES ${quoteClickHouseTable(names.database, names.target)} AND ${quoteClickHouseTable(names.database, names.candidate)}`;
    await this.effect(CP.exchange, () => runCommand(this.client, statement));
  }

  async fenceRename(names: ExchangeNames): Promise<void> {
    checkedNames(names);
    const statement = `RENAME TABLE ${quoteClickHouseTable(names.database, names.candidate)} TO ${quoteClickHouseTable(names.database, names.tombstone)}`;
    await this.effect(CP.fenceRename, () => runCommand(this.client, statement));
  }

  async dropByUuid(table: { database: string; name: string; uuid: string }): Promise<DropByUuidStatus> {
    assertChName(table.database, 'database');
    assertChName(table.name, 'table');
    assertUuidText(table.uuid);
    // Rechecked immediately before the DROP (ClickHouse has no lock to hold across the
    // two; the window is one round trip, and a table renamed into the name in between
    // would need an operator racing the predecessor's own cleanup).
    const found = await this.read('predecessor lookup', () => tableUnderName(this.client, table.database, table.name));
    if (!found) return 'ALREADY_ABSENT';
    if (found.uuid !== table.uuid) return 'NOT_OURS';
    await this.effect(CP.predecessorDrop, () =>
      runCommand(this.client, `DROP TABLE ${quoteClickHouseTable(table.database, table.name)} SYNC`),
    );
    return 'DROPPED';
  }

  async uuidAbsence(database: string, uuid: string): Promise<{ absent: boolean; metadataVisible: boolean }> {
    assertChName(database, 'database');
    assertUuidText(uuid);
    return this.read('uuid absence', async () => {
      const [where, metadataVisible] = await Promise.all([
        this.whereIsUuid(uuid),
        databaseVisible(this.client, database),
      ]);
      return { absent: where.length === 0, metadataVisible };
    });
  }

  async inventory(database: string, table: string): Promise<TableInventory> {
    assertChName(database, 'database');
    assertChName(table, 'table');
    return this.read('table inventory', async () => {
      const rows = await selectRows<{ uuid: string; engine: string; sorting_key: string }>(
        this.client,
        'SELECT toString(uuid) AS uuid, engine, sorting_key FROM system.tables WHERE database = {db:String} AND name = {t:String}',
        { db: database, t: table },
      );
      const found = rows[0];
      if (!found) throw new TargetObjectMissingError(`table ${database}.${table}`);
      const columns = (await catalogColumns(this.client, database, table)).map((c) => ({
        name: c.name,
        type: c.type,
        position: c.position,
      }));
      return { database, table, uuid: found.uuid, engine: found.engine, sortingKey: found.sorting_key, columns };
    });
  }

  async scalars(
    statements: readonly ScalarStatement[],
    options: ScalarOptions = {},
  ): Promise<Record<string, number | string | null>> {
    const seconds = options.maxExecutionSeconds ?? 60;
    if (!Number.isSafeInteger(seconds) || seconds < 1)
      throw new ValidationError('publication.invalid_request', 'maxExecutionSeconds must be a positive integer');
    const names = new Set<string>();
    for (const s of statements) {
      if (typeof s.name !== 'string' || s.name.length === 0 || names.has(s.name))
        throw new ValidationError(
          'publication.invalid_request',
          `statement names must be unique and non-empty: ${String(s.name)}`,
        );
      if (typeof s.sql !== 'string' || s.sql.trim().length === 0)
        throw new ValidationError('publication.invalid_request', `statement ${s.name}: sql must be non-empty`);
      assertEnclosedSelect(s.sql, `statement ${s.name}`);
      names.add(s.name);
    }
    const out: Record<string, number | string | null> = {};
    for (const s of statements) {
      // Wrapped as a subquery (only a SELECT parses there) and run with readonly = 2 in the
      // statement's own SETTINGS (chdb refuses writes with Code 164 READONLY: measured);
      // 64-bit integers as text, so a large count is never rounded.
      const settings = settingsClause({
        readonly: 2,
        max_execution_time: seconds,
        output_format_json_quote_64bit_integers: 1,
      });
      const query = `SELECT * FROM (\n${s.sql}\n) LIMIT 1 ${settings}`;
      const select = async () => (await this.client.query({ query, format: 'JSONCompactEachRow' })).json<unknown[]>();
      const rows = await this.read(`scalar ${s.name}`, () =>
        options.cutPoint ? this.faults.at(options.cutPoint, select) : select(),
      );
      out[s.name] = scalarOf(rows[0]?.[0]);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------

  private async whereIsUuid(uuid: string): Promise<Array<{ database: string; name: string }>> {
    return selectRows<{ database: string; name: string }>(
      this.client,
      'SELECT database, name FROM system.tables WHERE uuid = toUUID({u:String})',
      { u: uuid },
    );
  }

  /** The target's insertable column names: what the fill copies and the digest covers (none: the target is missing). */
  private async targetColumns(names: ExchangeNames): Promise<string[]> {
    const columns = insertableColumns(await catalogColumns(this.client, names.database, names.target)).map(
      (c) => c.name,
    );
    if (columns.length === 0) throw new TargetObjectMissingError(`table ${names.database}.${names.target}`);
    return columns;
  }

  /** The candidate name holds UUID `C` with our marker (still unpublished and ours), else a conflict. */
  private async ownedUnpublished(names: ExchangeNames, uuid: string, marker: string): Promise<void> {
    const found = await tableUnderName(this.client, names.database, names.candidate);
    if (!found)
      throw new IdentityConflictError(
        'publication.candidate_missing',
        `${names.database}.${names.candidate} does not exist: not filled (published, fenced or never created)`,
      );
    sameCandidate(found, uuid, marker, names);
  }

  private async read<T>(what: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      throw readFailure(what, error);
    }
  }

  private async effect(cutPoint: string, body: () => Promise<void>): Promise<void> {
    try {
      await this.faults.at(cutPoint, body);
    } catch (error) {
      throw effectFailure(cutPoint, error);
    }
  }
}

function checkedNames(names: ExchangeNames): ExchangeNames {
  for (const key of ['database', 'target', 'stage', 'candidate', 'tombstone'] as const) assertChName(names[key], key);
  return names;
}

function checkedCandidate(request: { names: ExchangeNames; uuid: string; marker: string }): {
  names: ExchangeNames;
  uuid: string;
  marker: string;
} {
  checkedNames(request.names);
  assertUuidText(request.uuid, 'candidate uuid');
  if (
    typeof request.marker !== 'string' ||
    request.marker.length === 0 ||
    request.marker.length > 1024 ||
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    /[\u0000-\u001f]/.test(request.marker)
  ) {
    throw new ValidationError(
      'publication.invalid_request',
      'the candidate marker must be 1..1024 characters without control characters',
    );
  }
  return request;
}

/** True when the row is exactly our candidate (already created); anything else under the name is a conflict. */
function sameCandidate(
  found: { uuid: string; comment: string },
  uuid: string,
  marker: string,
  names: ExchangeNames,
): false {
  if (found.uuid !== uuid || found.comment !== marker) {
    throw new IdentityConflictError(
      'publication.candidate_identity_conflict',
      `${names.database}.${names.candidate} exists and is not this operation's candidate`,
    );
  }
  return false;
}
