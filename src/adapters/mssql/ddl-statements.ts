import type { StagingRef, TableRef } from '../../domain/delivery/target-types.js';
import { assertTableRef, ownerMarker, publicationLockOf } from '../../domain/delivery/target-rules.js';
import {
  applock,
  bracket,
  BRACKETED_CHUNK,
  CHUNK_INDEX,
  nameParam,
  OWNER_PROPERTY,
  PROLOGUE,
  qualified,
  RECEIPT_SELECT,
  stagingParams,
  THROWN,
  type Statement,
} from './sql-text.js';

/** The SQL Server adapter's statements about objects: describe, create, observe and drop a stage, and the target's identity. */

export function describeStatement(ref: TableRef): Statement {
  return {
    text: `SET NOCOUNT ON;
SELECT c.name, TYPE_NAME(c.system_type_id) AS type_name, c.max_length, c.precision, c.scale, c.collation_name, c.is_nullable, c.object_id
  FROM sys.columns AS c
 WHERE c.object_id = OBJECT_ID(@name, N'U')
 ORDER BY c.column_id;`,
    params: [nameParam('name', ref)],
  };
}

/**
 * Creates the stage in one transaction, under an application lock on its name: the
 * columns of the like table, all nullable and without identity (the LEFT JOIN makes every
 * column nullable and drops IDENTITY), the chunk column with a nonclustered index (a
 * load's DELETE of its seq and a part's `observeChunks` range are index seeks), and the owner marker as an
 * extended property. An existing object under the name is returned for the adapter to
 * compare, never replaced.
 */
export function createStagingBatch(
  staging: TableRef,
  like: TableRef,
  invocationId: string,
  owner: string,
  lockTimeoutMs: number,
): Statement {
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
ALTER TABLE ${stage} ADD ${BRACKETED_CHUNK} int NOT NULL;
CREATE NONCLUSTERED INDEX ${bracket(CHUNK_INDEX)} ON ${stage} (${BRACKETED_CHUNK});
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
 * Retirement, one transaction: take the retire application lock, then the invocation's
 * publication lock (the one `publishBatch` takes: a drop and a publication of the same
 * invocation never overlap), resolve the name, and drop only the exact recorded object
 * carrying our marker, locked (TABLOCKX) and rechecked under the lock. With `receipts`
 * (a retirement: the journal says nothing was published) the receipt is re-probed under
 * the publication lock first: one found → PUBLISHED with the receipt, nothing dropped.
 * Reports DROPPED, ALREADY_ABSENT, NOT_OURS or PUBLISHED; the absence proof is
 * `absenceProofStatement`, run after the COMMIT.
 */
export function dropStagingBatch(
  staging: StagingRef,
  lockTimeoutMs: number,
  unlessPublished?: { receipts: TableRef },
): Statement {
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
  SELECT @outcome = N'ALREADY_ABSENT';
ELSE IF NOT (${owned})
  SELECT @outcome = N'NOT_OURS';
ELSE
BEGIN
  DECLARE @locked int;
  SELECT @locked = COUNT(*) FROM (SELECT TOP (1) 1 AS one FROM ${stage} WITH (TABLOCKX, HOLDLOCK)) AS l;
  IF ${owned}
  BEGIN
    DROP TABLE ${stage};
    SELECT @outcome = N'DROPPED';
  END
  ELSE
    SELECT @outcome = N'NOT_OURS';
END;
SELECT @outcome AS outcome;
COMMIT TRANSACTION;`,
    params: [
      ...stagingParams(staging),
      {
        name: 'lock_resource',
        type: 'nvarchar',
        value: `cutpoint.retire:${staging.table.schema}.${staging.table.table}`,
      },
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
  assertTableRef(staging.table, 'staging');
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
 * The target check (`TargetPort.checkTarget`), read-only: every object whose schema and name
 * equal the route's ignoring case (so that a name differing only in case can be named, and
 * a case-insensitive collation cannot stand in for the exact name), its type, whether SQL
 * Server shipped it, and its columns — one row per column. The adapter judges the rows
 * (results.ts `targetObservationOf`).
 */
export function targetCheckStatement(ref: TableRef): Statement {
  assertTableRef(ref, 'target');
  return {
    text: `SET NOCOUNT ON;
SELECT s.name AS schema_name, o.name AS table_name, o.type AS object_type, o.is_ms_shipped, c.name AS column_name
  FROM sys.objects AS o
  JOIN sys.schemas AS s ON s.schema_id = o.schema_id
  LEFT JOIN sys.columns AS c ON c.object_id = o.object_id
 WHERE UPPER(s.name) = UPPER(@schema_name) AND UPPER(o.name) = UPPER(@table_name)
 ORDER BY o.object_id, c.column_id;`,
    params: [
      { name: 'schema_name', type: 'nvarchar', value: ref.schema },
      { name: 'table_name', type: 'nvarchar', value: ref.table },
    ],
  };
}
