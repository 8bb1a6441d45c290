import type { StagingRef, TableRef } from '../../domain/delivery/target-types.js';
import { assertIdentifier, assertTableRef, CHUNK_COLUMN, ownerMarker } from '../../domain/delivery/target-rules.js';

/**
 * What every T-SQL statement of the SQL Server adapter is made of: the statement shape,
 * quoting, the THROW numbers, and the fragments several batches share (the exact-object
 * recheck, the application lock). The statements themselves are built by small pure
 * functions, one file per job — ddl-statements.ts (stage and receipt objects, identity),
 * load-statements.ts (chunk loads and stage reads), publish-statements.ts (publication and
 * receipt probe) — so that test/unit/mssql-grammar.test.ts can enumerate every builder and
 * parse what it emits offline (SQL Server cannot run on these machines). Identifiers are
 * validated and bracket-quoted; every value is a named parameter (`@name`), never text in
 * the statement.
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

/** Name of the nonclustered index on a stage's chunk column (index names are per table). */
export const CHUNK_INDEX = 'cutpoint_chunk_seq';

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
  partitionLayoutChanged: 51009,
  stageNullsRequired: 51010,
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

/** An operator's assertion (trusted manifest SQL, not the adapter's) with `{staging}` replaced by the quoted stage name. */
export function assertionStatement(sql: string, staging: TableRef): string {
  return sql.split('{staging}').join(qualified(staging));
}

export const BRACKETED_CHUNK = bracket(CHUNK_COLUMN);
export const PROLOGUE = 'SET XACT_ABORT ON;\nSET NOCOUNT ON;';

export function nameParam(param: string, ref: TableRef): Param {
  return { name: param, type: 'nvarchar', value: qualified(ref) };
}

/** The exact-object predicate: the name resolves to the recorded id and carries our marker. */
export function ownedCheck(): string {
  return `IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id
  THROW ${THROWN.stagingObjectChanged}, N'cutpoint: the stage is not the recorded object', 1;
IF NOT EXISTS (
  SELECT 1 FROM sys.extended_properties
   WHERE class = 1 AND major_id = @staging_object_id AND minor_id = 0
     AND name = N'${OWNER_PROPERTY}' AND CAST(value AS nvarchar(4000)) = @owner_marker)
  THROW ${THROWN.stagingOwnerChanged}, N'cutpoint: the stage has a different owner binding', 1;`;
}

export function stagingParams(staging: StagingRef): Param[] {
  return [
    nameParam('staging_name', staging.table),
    { name: 'staging_object_id', type: 'int', value: Number(staging.objectId) },
    { name: 'owner_marker', type: 'nvarchar', value: ownerMarker(staging.invocationId, staging.owner) },
  ];
}

export function applock(resourceParam: string, declare = true): string {
  return `${declare ? 'DECLARE @lock_result int;\n' : ''}EXEC @lock_result = sys.sp_getapplock @Resource = @${resourceParam}, @LockMode = N'Exclusive', @LockOwner = N'Transaction', @LockTimeout = @lock_timeout_ms;
IF @lock_result < 0 THROW ${THROWN.lockNotGranted}, N'cutpoint: application lock not granted', 1;`;
}

export const RECEIPT_SELECT =
  'invocation_id, target_schema, target_table, mode, window_start, window_end, [rows] AS row_count, digest, staging_object_id, published_at, method';
