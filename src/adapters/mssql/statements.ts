// Longer than ~300 lines: every T-SQL statement the SQL Server adapter sends, as text with
// its parameters, in one file so the offline grammar test (test/unit/mssql-statements.test.ts)
// parses all of them and a reviewer reads the whole SQL surface in one place.
import { ValidationError } from '../../domain/errors.js';
import type { PublishRequest, StagingRef, TableRef } from '../../ports/target.js';
import { assertIdentifier, assertTableRef, CHUNK_COLUMN, ownerMarker, publicationLockOf } from '../../domain/delivery/target-rules.js';

/**
 * The T-SQL the SQL Server adapter sends, built by small pure functions so that the unit
 * tests can check it offline (SQL Server cannot run on these machines). Identifiers are
 * validated and bracket-quoted; every value is a named parameter (`@name`), never text
 * in the statement.
 */

export type ParamType = 'nvarchar' | 'int' | 'bigint' | 'datetime2';

export interface Param {
  name: string;
  type: ParamType;
  value: string | number | Date | null;
}

export interface Statement {
  text: string;
  params: Param[];
}

/** Extended property that carries the owner marker on a stage. */
export const OWNER_PROPERTY = 'cutpoint.owner';

/** User-defined error numbers the batches THROW; the adapter maps them to stable errors. */
export const THROWN = {
  lockNotGranted: 51000,
  stagingObjectChanged: 51001,
  stagingOwnerChanged: 51002,
  rowCountMismatch: 51003,
  rowsOutsideWindow: 51004,
  mergeKeysInvalid: 51005,
  objectMissing: 51006,
  stageLacksColumns: 51007,
  receiptUnobservable: 51008,
} as const;

/** `[name]` with `]` doubled: safe for any string, and applied after validation anyway. */
export function bracket(name: string): string {
  return `[${name.replace(/]/g, ']]')}]`;
}

export function qualified(ref: TableRef): string {
  assertTableRef(ref);
  return `${bracket(ref.schema)}.${bracket(ref.table)}`;
}

export function column(name: string): string {
  return bracket(assertIdentifier(name, 'column'));
}

const CHUNK = bracket(CHUNK_COLUMN);
const PROLOGUE = 'SET XACT_ABORT ON;\nSET NOCOUNT ON;';

function nameParam(param: string, ref: TableRef): Param {
  return { name: param, type: 'nvarchar', value: qualified(ref) };
}

/** The exact-object predicate: the name resolves to the recorded id and carries our marker. */
function ownedCheck(): string {
  return `IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id
  THROW ${THROWN.stagingObjectChanged}, N'cutpoint: the stage is not the recorded object', 1;
IF NOT EXISTS (
  SELECT 1 FROM sys.extended_properties
   WHERE class = 1 AND major_id = @staging_object_id AND minor_id = 0
     AND name = N'${OWNER_PROPERTY}' AND CAST(value AS nvarchar(4000)) = @owner_marker)
  THROW ${THROWN.stagingOwnerChanged}, N'cutpoint: the stage has a different owner binding', 1;`;
}

function stagingParams(staging: StagingRef): Param[] {
  return [
    nameParam('staging_name', staging.table),
    { name: 'staging_object_id', type: 'int', value: Number(staging.objectId) },
    { name: 'owner_marker', type: 'nvarchar', value: ownerMarker(staging.invocationId, staging.owner) },
  ];
}

function applock(resourceParam: string, declare = true): string {
  return `${declare ? 'DECLARE @lock_result int;\n' : ''}EXEC @lock_result = sys.sp_getapplock @Resource = @${resourceParam}, @LockMode = N'Exclusive', @LockOwner = N'Transaction', @LockTimeout = @lock_timeout_ms;
IF @lock_result < 0 THROW ${THROWN.lockNotGranted}, N'cutpoint: application lock not granted', 1;`;
}

export function describeStatement(ref: TableRef): Statement {
  return {
    text: `SET NOCOUNT ON;
SELECT c.name, t.name AS type_name, c.max_length, c.precision, c.scale, c.is_nullable, c.object_id
  FROM sys.columns AS c
  JOIN sys.types AS t ON t.user_type_id = c.user_type_id
 WHERE c.object_id = OBJECT_ID(@name, N'U')
 ORDER BY c.column_id;`,
    params: [nameParam('name', ref)],
  };
}

/**
 * Creates the stage in one transaction, under an application lock on its name: the
 * columns of the like table, all nullable and without identity (the LEFT JOIN makes every
 * column nullable and drops IDENTITY), the chunk column, and the owner marker as an
 * extended property. An existing object under the name is returned for the adapter to
 * compare, never replaced.
 */
export function createStagingBatch(staging: TableRef, like: TableRef, invocationId: string, owner: string, lockTimeoutMs: number): Statement {
  const stage = qualified(staging);
  return {
    text: `${PROLOGUE}
BEGIN TRANSACTION;
${applock('lock_resource')}
DECLARE @existing int = OBJECT_ID(@staging_name, N'U');
IF @existing IS NOT NULL
BEGIN
  SELECT CAST(0 AS bit) AS created, @existing AS object_id, CAST(ep.value AS nvarchar(4000)) AS marker
    FROM (SELECT 1 AS one) AS d
    LEFT JOIN sys.extended_properties AS ep
      ON ep.class = 1 AND ep.major_id = @existing AND ep.minor_id = 0 AND ep.name = N'${OWNER_PROPERTY}';
  COMMIT TRANSACTION;
  RETURN;
END;
IF OBJECT_ID(@like_name, N'U') IS NULL
  THROW ${THROWN.objectMissing}, N'cutpoint: the like table does not exist', 1;
SELECT TOP (0) l.* INTO ${stage} FROM (SELECT 1 AS one) AS d LEFT JOIN ${qualified(like)} AS l ON 1 = 0;
ALTER TABLE ${stage} ADD ${CHUNK} int NOT NULL;
EXEC sys.sp_addextendedproperty @name = N'${OWNER_PROPERTY}', @value = @owner_marker,
  @level0type = N'SCHEMA', @level0name = @staging_schema, @level1type = N'TABLE', @level1name = @staging_table;
SELECT CAST(1 AS bit) AS created, OBJECT_ID(@staging_name, N'U') AS object_id, @owner_marker AS marker;
COMMIT TRANSACTION;`,
    params: [
      nameParam('staging_name', staging),
      nameParam('like_name', like),
      { name: 'staging_schema', type: 'nvarchar', value: staging.schema },
      { name: 'staging_table', type: 'nvarchar', value: staging.table },
      { name: 'owner_marker', type: 'nvarchar', value: ownerMarker(invocationId, owner) },
      { name: 'lock_resource', type: 'nvarchar', value: `cutpoint.stage:${staging.schema}.${staging.table}` },
      { name: 'lock_timeout_ms', type: 'int', value: lockTimeoutMs },
    ],
  };
}

/**
 * First request of a chunk load's transaction: recheck the exact stage, lock it
 * (TABLOCKX: loads of one stage run one at a time and a drop waits), recheck again under
 * the lock, and delete the seq's rows. The bulk load follows in the same transaction.
 */
export function prepareLoadBatch(staging: StagingRef, seq: number): Statement {
  const stage = qualified(staging.table);
  return {
    text: `${PROLOGUE}
${ownedCheck()}
DECLARE @locked int;
SELECT @locked = COUNT(*) FROM (SELECT TOP (1) 1 AS one FROM ${stage} WITH (TABLOCKX, HOLDLOCK)) AS l;
${ownedCheck()}
DELETE FROM ${stage} WHERE ${CHUNK} = @seq;`,
    params: [...stagingParams(staging), { name: 'seq', type: 'int', value: seq }],
  };
}

export function observeChunksBatch(staging: StagingRef): Statement {
  return {
    text: `${PROLOGUE}
${ownedCheck()}
SELECT ${CHUNK} AS seq, COUNT_BIG(*) AS row_count FROM ${qualified(staging.table)} WITH (HOLDLOCK) GROUP BY ${CHUNK} ORDER BY ${CHUNK};`,
    params: stagingParams(staging),
  };
}

/** Counts for the quality probes; the adapter runs it in a transaction it rolls back. */
export function stagingFactsBatch(staging: StagingRef, keyColumns: readonly string[], notNull: readonly string[]): Statement {
  const stage = qualified(staging.table);
  const nulls = notNull.map((c, i) => `, SUM(CASE WHEN ${column(c)} IS NULL THEN 1 ELSE 0 END) AS n${i}`).join('');
  const duplicates =
    keyColumns.length > 0
      ? `(SELECT COUNT_BIG(*) FROM (SELECT 1 AS one FROM ${stage} GROUP BY ${keyColumns.map(column).join(', ')} HAVING COUNT_BIG(*) > 1) AS d)`
      : 'CAST(0 AS bigint)';
  return {
    text: `${PROLOGUE}
${ownedCheck()}
SELECT COUNT_BIG(*) AS row_count, ${duplicates} AS duplicate_keys${nulls} FROM ${stage} WITH (HOLDLOCK);`,
    params: stagingParams(staging),
  };
}

/** An operator's assertion with `{staging}` replaced by the bracket-quoted stage name. */
export function assertionStatement(sql: string, staging: TableRef): string {
  return sql.split('{staging}').join(qualified(staging));
}

export function receiptTableDdl(receipts: TableRef): string {
  return `IF OBJECT_ID(@receipts_name, N'U') IS NULL
  CREATE TABLE ${qualified(receipts)} (
    invocation_id nvarchar(200) NOT NULL PRIMARY KEY,
    target_schema nvarchar(128) NOT NULL,
    target_table nvarchar(128) NOT NULL,
    mode nvarchar(16) NOT NULL,
    window_start datetime2(3) NOT NULL,
    window_end datetime2(3) NOT NULL,
    [rows] bigint NOT NULL,
    digest nvarchar(64) NOT NULL,
    staging_object_id nvarchar(20) NOT NULL,
    published_at datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME()
  );`;
}

const RECEIPT_SELECT =
  'invocation_id, target_schema, target_table, mode, window_start, window_end, [rows] AS row_count, digest, staging_object_id, published_at';

/**
 * The publication: ONE batch, ONE transaction, XACT_ABORT ON so any error rolls it all
 * back. Under an application lock on the invocation: an existing receipt is returned
 * (applied = 0) without publishing again; otherwise the stage is rechecked (exact object
 * id and owner marker) and locked, guarded (row count, window or key uniqueness), the
 * window is applied, and the receipt row is inserted before COMMIT.
 */
export function publishBatch(request: PublishRequest, receipts: TableRef, targetColumns: readonly string[], lockTimeoutMs: number): Statement {
  const target = qualified(request.target);
  const stage = qualified(request.staging.table);
  const cols = targetColumns.map(column).join(', ');
  const time = column(request.timeColumn);
  let apply: string;
  if (request.mode === 'replace_window') {
    apply = `IF EXISTS (SELECT 1 FROM ${stage} WHERE ${time} IS NULL OR ${time} < @window_start OR ${time} >= @window_end)
  THROW ${THROWN.rowsOutsideWindow}, N'cutpoint: staged rows fall outside the window', 1;
DELETE FROM ${target} WITH (TABLOCKX) WHERE ${time} >= @window_start AND ${time} < @window_end;
INSERT INTO ${target} (${cols}) SELECT ${cols} FROM ${stage};`;
  } else {
    const keys = request.keyColumns.map(column);
    const join = keys.map((k) => `t.${k} = s.${k}`).join(' AND ');
    const nonKeys = targetColumns.filter((c) => !request.keyColumns.includes(c));
    const update =
      nonKeys.length > 0
        ? `UPDATE t SET ${nonKeys.map((c) => `t.${column(c)} = s.${column(c)}`).join(', ')}
  FROM ${target} AS t WITH (TABLOCKX) INNER JOIN ${stage} AS s ON ${join};
`
        : '';
    apply = `IF EXISTS (SELECT 1 FROM ${stage} WHERE ${keys.map((k) => `${k} IS NULL`).join(' OR ')})
   OR EXISTS (SELECT 1 FROM ${stage} GROUP BY ${keys.join(', ')} HAVING COUNT_BIG(*) > 1)
  THROW ${THROWN.mergeKeysInvalid}, N'cutpoint: merge keys in the stage are null or not unique', 1;
${update}INSERT INTO ${target} WITH (TABLOCKX) (${cols})
SELECT ${targetColumns.map((c) => `s.${column(c)}`).join(', ')} FROM ${stage} AS s
 WHERE NOT EXISTS (SELECT 1 FROM ${target} AS t WHERE ${join});`;
  }
  return {
    text: `${PROLOGUE}
BEGIN TRANSACTION;
${receiptTableDdl(receipts)}
${applock('lock_resource')}
IF EXISTS (SELECT 1 FROM ${qualified(receipts)} WITH (UPDLOCK, HOLDLOCK) WHERE invocation_id = @invocation_id)
BEGIN
  SELECT CAST(0 AS bit) AS applied, ${RECEIPT_SELECT} FROM ${qualified(receipts)} WHERE invocation_id = @invocation_id;
  COMMIT TRANSACTION;
  RETURN;
END;
IF OBJECT_ID(@target_name, N'U') IS NULL
  THROW ${THROWN.objectMissing}, N'cutpoint: the target table does not exist', 1;
${ownedCheck()}
DECLARE @staged bigint;
SELECT @staged = COUNT_BIG(*) FROM ${stage} WITH (TABLOCKX, HOLDLOCK);
${ownedCheck()}
IF EXISTS (SELECT name FROM sys.columns WHERE object_id = OBJECT_ID(@target_name, N'U')
           EXCEPT SELECT name FROM sys.columns WHERE object_id = @staging_object_id)
  THROW ${THROWN.stageLacksColumns}, N'cutpoint: the stage lacks target columns', 1;
IF @staged <> @rows
  THROW ${THROWN.rowCountMismatch}, N'cutpoint: the stage row count differs from the journal', 1;
${apply}
INSERT INTO ${qualified(receipts)}
  (invocation_id, target_schema, target_table, mode, window_start, window_end, [rows], digest, staging_object_id)
  VALUES (@invocation_id, @target_schema, @target_table, @mode, @window_start, @window_end, @rows, @digest, @staging_object_id_text);
SELECT CAST(1 AS bit) AS applied, ${RECEIPT_SELECT} FROM ${qualified(receipts)} WHERE invocation_id = @invocation_id;
COMMIT TRANSACTION;`,
    params: [
      nameParam('receipts_name', receipts),
      nameParam('target_name', request.target),
      ...stagingParams(request.staging),
      { name: 'lock_resource', type: 'nvarchar', value: publicationLockOf(request.invocationId) },
      { name: 'lock_timeout_ms', type: 'int', value: lockTimeoutMs },
      { name: 'invocation_id', type: 'nvarchar', value: request.invocationId },
      { name: 'target_schema', type: 'nvarchar', value: request.target.schema },
      { name: 'target_table', type: 'nvarchar', value: request.target.table },
      { name: 'mode', type: 'nvarchar', value: request.mode },
      { name: 'window_start', type: 'datetime2', value: request.window.start },
      { name: 'window_end', type: 'datetime2', value: request.window.end },
      { name: 'rows', type: 'bigint', value: request.rows },
      { name: 'digest', type: 'nvarchar', value: request.digest },
      { name: 'staging_object_id_text', type: 'nvarchar', value: request.staging.objectId },
    ],
  };
}

/**
 * What the server says it is: its name, the current database and the login the connection
 * runs as. No parameters, no host or port (the same server may be reached many ways).
 */
export function identityStatement(): Statement {
  return {
    text: "SET NOCOUNT ON; SELECT CAST(SERVERPROPERTY(N'ServerName') AS nvarchar(256)) AS server, DB_NAME() AS [database], SUSER_SNAME() AS principal;",
    params: [],
  };
}

/**
 * The receipt probe. When the receipt table is absent it reports whether the principal
 * may see the schema's definitions (otherwise "absent" may be "hidden").
 */
export function probeReceiptBatch(receipts: TableRef, invocationId: string): Statement {
  return {
    text: `SET NOCOUNT ON;
IF OBJECT_ID(@receipts_name, N'U') IS NULL
BEGIN
  SELECT CAST(0 AS bit) AS present, HAS_PERMS_BY_NAME(@receipts_schema, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema;
  RETURN;
END;
SELECT CAST(1 AS bit) AS present, CAST(NULL AS int) AS can_view_schema;
SELECT ${RECEIPT_SELECT} FROM ${qualified(receipts)} WHERE invocation_id = @invocation_id;`,
    params: [
      nameParam('receipts_name', receipts),
      { name: 'receipts_schema', type: 'nvarchar', value: receipts.schema },
      { name: 'invocation_id', type: 'nvarchar', value: invocationId },
    ],
  };
}

/**
 * Retirement, one transaction: take the retire application lock, then the invocation's
 * publication lock (the one `publishBatch` takes: a drop and a publication of the same
 * invocation never overlap), resolve the name, and drop only the exact recorded object
 * carrying our marker, locked (TABLOCKX) and rechecked under the lock. With `receipts`
 * (a retirement: the journal says nothing was published) the receipt is re-probed under
 * the publication lock first: one found → PUBLISHED with the receipt, nothing dropped.
 * Reports DROPPED, ALREADY_ABSENT, NOT_OURS or PUBLISHED; the absence proof is
 * `absenceProofStatement`, run after the COMMIT.
 */
export function dropStagingBatch(staging: StagingRef, lockTimeoutMs: number, unlessPublished?: { receipts: TableRef }): Statement {
  const stage = qualified(staging.table);
  const owned = `OBJECT_ID(@staging_name, N'U') = @staging_object_id AND EXISTS (
    SELECT 1 FROM sys.extended_properties
     WHERE class = 1 AND major_id = @staging_object_id AND minor_id = 0
       AND name = N'${OWNER_PROPERTY}' AND CAST(value AS nvarchar(4000)) = @owner_marker)`;
  const receiptProbe = unlessPublished
    ? `
IF OBJECT_ID(@receipts_name, N'U') IS NULL
BEGIN
  IF ISNULL(HAS_PERMS_BY_NAME(@receipts_schema, N'SCHEMA', N'VIEW DEFINITION'), 0) <> 1
    THROW ${THROWN.receiptUnobservable}, N'cutpoint: the receipt table is not visible to this principal', 1;
END
ELSE IF EXISTS (SELECT 1 FROM ${qualified(unlessPublished.receipts)} WITH (HOLDLOCK) WHERE invocation_id = @invocation_id)
BEGIN
  SELECT N'PUBLISHED' AS outcome, ${RECEIPT_SELECT} FROM ${qualified(unlessPublished.receipts)} WHERE invocation_id = @invocation_id;
  COMMIT TRANSACTION;
  RETURN;
END;`
    : '';
  return {
    text: `${PROLOGUE}
BEGIN TRANSACTION;
${applock('lock_resource')}
${applock('publish_lock_resource', false)}${receiptProbe}
DECLARE @outcome nvarchar(16);
IF OBJECT_ID(@staging_name, N'U') IS NULL
  SET @outcome = N'ALREADY_ABSENT';
ELSE IF NOT (${owned})
  SET @outcome = N'NOT_OURS';
ELSE
BEGIN
  DECLARE @locked int;
  SELECT @locked = COUNT(*) FROM (SELECT TOP (1) 1 AS one FROM ${stage} WITH (TABLOCKX, HOLDLOCK)) AS l;
  IF ${owned}
  BEGIN
    DROP TABLE ${stage};
    SET @outcome = N'DROPPED';
  END
  ELSE
    SET @outcome = N'NOT_OURS';
END;
SELECT @outcome AS outcome;
COMMIT TRANSACTION;`,
    params: [
      ...stagingParams(staging),
      { name: 'lock_resource', type: 'nvarchar', value: `cutpoint.retire:${staging.table.schema}.${staging.table.table}` },
      { name: 'publish_lock_resource', type: 'nvarchar', value: publicationLockOf(staging.invocationId) },
      { name: 'lock_timeout_ms', type: 'int', value: lockTimeoutMs },
      ...(unlessPublished
        ? [
            nameParam('receipts_name', unlessPublished.receipts),
            { name: 'receipts_schema', type: 'nvarchar' as const, value: unlessPublished.receipts.schema },
            { name: 'invocation_id', type: 'nvarchar' as const, value: staging.invocationId },
          ]
        : []),
    ],
  };
}

/**
 * The stage under its derived name, read-only: the object id, its owner marker (the
 * adapter compares it), and whether the principal may see the schema's definitions (so
 * that "no object" is absence, not denial).
 */
export function observeStagingStatement(table: TableRef): Statement {
  return {
    text: `SET NOCOUNT ON;
SELECT OBJECT_ID(@staging_name, N'U') AS object_id,
       HAS_PERMS_BY_NAME(@schema_name, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema,
       (SELECT CAST(ep.value AS nvarchar(4000)) FROM sys.extended_properties AS ep
         WHERE ep.class = 1 AND ep.major_id = OBJECT_ID(@staging_name, N'U') AND ep.minor_id = 0 AND ep.name = N'${OWNER_PROPERTY}') AS marker;`,
    params: [nameParam('staging_name', table), { name: 'schema_name', type: 'nvarchar', value: table.schema }],
  };
}

/**
 * Can this principal tell absence from denial? OBJECT_ID and sys.objects hide what the
 * principal may not see, so absence counts only with VIEW DEFINITION on the schema
 * (HAS_PERMS_BY_NAME is NULL for a schema it cannot see at all).
 */
export function absenceProofStatement(staging: StagingRef): Statement {
  return {
    text: `SET NOCOUNT ON;
SELECT HAS_PERMS_BY_NAME(@schema_name, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema,
       CASE WHEN EXISTS (SELECT 1 FROM sys.objects WHERE object_id = @staging_object_id) THEN 1 ELSE 0 END AS exact_exists;`,
    params: [
      { name: 'schema_name', type: 'nvarchar', value: staging.table.schema },
      { name: 'staging_object_id', type: 'int', value: Number(staging.objectId) },
    ],
  };
}

/**
 * How a column of the stage is declared to the bulk loader, from sys.columns / sys.types.
 * Lengths are in characters for n-types (max_length is bytes), -1 meaning MAX.
 */
export type BulkType =
  | { type: 'Int' | 'BigInt' | 'SmallInt' | 'TinyInt' | 'Bit' | 'Float' | 'Real' | 'Money' | 'SmallMoney' | 'Date' | 'DateTime' | 'SmallDateTime' | 'UniqueIdentifier' }
  | { type: 'Decimal'; precision: number; scale: number }
  | { type: 'NVarChar' | 'NChar' | 'VarChar' | 'Char' | 'VarBinary' | 'Binary'; length: number | 'MAX' }
  | { type: 'DateTime2' | 'DateTimeOffset' | 'Time'; scale: number };

export interface SqlColumn {
  name: string;
  type_name: string;
  max_length: number;
  precision: number;
  scale: number;
}

export function bulkTypeOf(col: SqlColumn): BulkType {
  const len = (bytesPerChar: number): number | 'MAX' => (col.max_length === -1 ? 'MAX' : col.max_length / bytesPerChar);
  switch (col.type_name) {
    case 'int':
      return { type: 'Int' };
    case 'bigint':
      return { type: 'BigInt' };
    case 'smallint':
      return { type: 'SmallInt' };
    case 'tinyint':
      return { type: 'TinyInt' };
    case 'bit':
      return { type: 'Bit' };
    case 'float':
      return { type: 'Float' };
    case 'real':
      return { type: 'Real' };
    case 'money':
      return { type: 'Money' };
    case 'smallmoney':
      return { type: 'SmallMoney' };
    case 'date':
      return { type: 'Date' };
    case 'datetime':
      return { type: 'DateTime' };
    case 'smalldatetime':
      return { type: 'SmallDateTime' };
    case 'uniqueidentifier':
      return { type: 'UniqueIdentifier' };
    case 'decimal':
    case 'numeric':
      return { type: 'Decimal', precision: col.precision, scale: col.scale };
    case 'nvarchar':
      return { type: 'NVarChar', length: len(2) };
    case 'nchar':
      return { type: 'NChar', length: len(2) };
    case 'varchar':
      return { type: 'VarChar', length: len(1) };
    case 'char':
      return { type: 'Char', length: len(1) };
    case 'varbinary':
      return { type: 'VarBinary', length: len(1) };
    case 'binary':
      return { type: 'Binary', length: len(1) };
    case 'datetime2':
      return { type: 'DateTime2', scale: col.scale };
    case 'datetimeoffset':
      return { type: 'DateTimeOffset', scale: col.scale };
    case 'time':
      return { type: 'Time', scale: col.scale };
    default:
      throw new ValidationError('delivery.unsupported_column_type', `column ${col.name}: type ${col.type_name} cannot be bulk-loaded`);
  }
}

/** The engine's spelling of a column type, for `describeTable`. */
export function typeSpelling(col: SqlColumn): string {
  const t = bulkTypeOf(col);
  if ('length' in t) return `${col.type_name}(${t.length === 'MAX' ? 'max' : t.length})`;
  if (t.type === 'Decimal') return `${col.type_name}(${t.precision},${t.scale})`;
  if ('scale' in t) return `${col.type_name}(${t.scale})`;
  return col.type_name;
}
