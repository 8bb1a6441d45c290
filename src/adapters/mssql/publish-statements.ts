import type { PublishRequest, TableRef } from '../../domain/delivery/target-types.js';
import { publicationLockOf } from '../../domain/delivery/target-rules.js';
import {
  applock,
  bracket,
  BRACKETED_CHUNK,
  CHUNK_INDEX,
  column,
  nameParam,
  ownedCheck,
  PROLOGUE,
  qualified,
  RECEIPT_SELECT,
  stagingParams,
  THROWN,
  type Statement,
} from './sql-text.js';
import type { MssqlSwapPlan } from './swap-plan.js';

/** The SQL Server adapter's publication: the one publishing transaction and the receipt probe. */

function receiptTableDdl(receipts: TableRef): string {
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
    published_at datetime2(3) NOT NULL DEFAULT SYSUTCDATETIME(),
    method nvarchar(16) NULL
  );`;
}

/**
 * replace_window by SWITCH (swap-plan.ts): the layout the plan was made on rechecked under
 * the locks (the function still the target's, RANGE RIGHT, the window's bounds still the
 * consecutive boundaries of partition n, $PARTITION agreeing), the stage's rows checked
 * (in the window, NOT NULL where the target requires), the stage made the partition's
 * equal (chunk column and its index dropped, NOT NULL columns, the clustered index, a
 * trusted window CHECK), the old partition emptied (TRUNCATE … WITH (PARTITIONS (n)),
 * metadata only) and the stage switched in (metadata only). The stage stays, empty: cleanup
 * drops it as it drops any stage.
 */
function switchApply(
  request: PublishRequest,
  target: string,
  stage: string,
  time: string,
  swap: MssqlSwapPlan,
): string {
  const n = swap.partition;
  const fn = `$PARTITION.${bracket(swap.functionName)}`;
  const boundary = (
    id: number,
    param: string,
  ) => `NOT EXISTS (SELECT 1 FROM sys.partition_range_values AS v INNER JOIN sys.partition_functions AS f ON f.function_id = v.function_id
                  WHERE f.name = @swap_function AND f.boundary_value_on_right = 1 AND v.boundary_id = ${id} AND CAST(v.value AS datetime2(7)) = ${param})`;
  const literal = (d: Date) => `'${d.toISOString().slice(0, 23)}'`; // ISO 8601 with T: language-independent, only digits - : . T
  const nulls = swap.notNull.map((c) => `${column(c.name)} IS NULL`).join(' OR ');
  const clustered = swap.clustered
    ? `CREATE ${swap.clustered.unique ? 'UNIQUE ' : ''}CLUSTERED INDEX [cutpoint_switch] ON ${stage} (${swap.clustered.keys.map((k) => `${column(k.name)} ${k.descending ? 'DESC' : 'ASC'}`).join(', ')});
`
    : '';
  return `IF NOT EXISTS (SELECT 1 FROM sys.indexes AS i
                 INNER JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id
                 INNER JOIN sys.partition_functions AS f ON f.function_id = ps.function_id
                WHERE i.object_id = OBJECT_ID(@target_name, N'U') AND i.index_id IN (0, 1) AND f.name = @swap_function)
  OR ${boundary(n - 1, '@window_start')}
  OR ${boundary(n, '@window_end')}
  OR ${fn}(@window_start) <> ${n} OR ${fn}(@window_end) <> ${n + 1}
  THROW ${THROWN.partitionLayoutChanged}, N'cutpoint: the target partition layout changed', 1;
IF EXISTS (SELECT 1 FROM ${stage} WHERE ${time} IS NULL OR ${time} < @window_start OR ${time} >= @window_end)
  THROW ${THROWN.rowsOutsideWindow}, N'cutpoint: staged rows fall outside the window', 1;
${
  nulls
    ? `IF EXISTS (SELECT 1 FROM ${stage} WHERE ${nulls})
  THROW ${THROWN.stageNullsRequired}, N'cutpoint: staged rows hold null in columns the target requires', 1;
`
    : ''
}DROP INDEX ${bracket(CHUNK_INDEX)} ON ${stage};
ALTER TABLE ${stage} DROP COLUMN ${BRACKETED_CHUNK};
${swap.notNull
  .map(
    (c) => `ALTER TABLE ${stage} ALTER COLUMN ${column(c.name)} ${c.type} NOT NULL;
`,
  )
  .join(
    '',
  )}${clustered}ALTER TABLE ${stage} ADD CONSTRAINT [cutpoint_window] CHECK (${time} IS NOT NULL AND ${time} >= ${literal(request.window.start)} AND ${time} < ${literal(request.window.end)});
TRUNCATE TABLE ${target} WITH (PARTITIONS (${n}));
ALTER TABLE ${stage} SWITCH TO ${target} PARTITION ${n};`;
}

/**
 * The publication: ONE batch, ONE transaction, XACT_ABORT ON so any error rolls it all
 * back. Under an application lock on the invocation: an existing receipt is returned
 * (applied = 0) without publishing again; otherwise the stage is rechecked (exact object
 * id and owner marker) and locked, guarded (row count, window or key uniqueness), the
 * window is applied, and the receipt row is inserted before COMMIT.
 */
export function publishBatch(
  request: PublishRequest,
  receipts: TableRef,
  targetColumns: readonly string[],
  lockTimeoutMs: number,
  swap?: MssqlSwapPlan,
): Statement {
  const target = qualified(request.target);
  const stage = qualified(request.staging.table);
  const cols = targetColumns.map(column).join(', ');
  const time = column(request.timeColumn);
  let apply: string;
  if (request.mode === 'replace_window' && swap) {
    apply = switchApply(request, target, stage, time, swap);
  } else if (request.mode === 'replace_window') {
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
    const invalidKeys = `THROW ${THROWN.mergeKeysInvalid}, N'cutpoint: merge keys in the stage are null or not unique', 1;`;
    apply = `IF EXISTS (SELECT 1 FROM ${stage} WHERE ${keys.map((k) => `${k} IS NULL`).join(' OR ')})
  ${invalidKeys}
IF EXISTS (SELECT 1 FROM ${stage} GROUP BY ${keys.join(', ')} HAVING COUNT_BIG(*) > 1)
  ${invalidKeys}
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
IF EXISTS (SELECT 1 FROM sys.columns AS tc WHERE tc.object_id = OBJECT_ID(@target_name, N'U')
              AND NOT EXISTS (SELECT 1 FROM sys.columns AS sc WHERE sc.object_id = @staging_object_id AND sc.name = tc.name))
  THROW ${THROWN.stageLacksColumns}, N'cutpoint: the stage lacks target columns', 1;
IF @staged <> @rows
  THROW ${THROWN.rowCountMismatch}, N'cutpoint: the stage row count differs from the journal', 1;
${apply}
INSERT INTO ${qualified(receipts)}
  (invocation_id, target_schema, target_table, mode, window_start, window_end, [rows], digest, staging_object_id, method)
  VALUES (@invocation_id, @target_schema, @target_table, @mode, @window_start, @window_end, @rows, @digest, @staging_object_id_text, @method);
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
      {
        name: 'method',
        type: 'nvarchar',
        value: request.mode === 'replace_window' && swap ? 'partition_swap' : 'set_based',
      },
      ...(request.mode === 'replace_window' && swap
        ? [{ name: 'swap_function', type: 'nvarchar' as const, value: swap.functionName }]
        : []),
    ],
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
