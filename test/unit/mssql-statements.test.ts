import { describe, expect, it } from 'vitest';
import {
  absenceProofStatement,
  createStagingBatch,
  describeStatement,
  dropStagingBatch,
  identityStatement,
  observeStagingStatement,
} from '../../src/adapters/mssql/ddl-statements.js';
import { observeChunksBatch, prepareLoadBatch, stagingFactsBatch } from '../../src/adapters/mssql/load-statements.js';
import { probeReceiptBatch, publishBatch } from '../../src/adapters/mssql/publish-statements.js';
import { assertionStatement, bracket, qualified, THROWN, type Statement } from '../../src/adapters/mssql/sql-text.js';
import type { PublishRequest, StagingRef } from '../../src/domain/delivery/target-types.js';
import { ownerMarker } from '../../src/domain/delivery/target-rules.js';

/**
 * SQL Server cannot run on these machines, so the T-SQL the adapter sends is checked here,
 * offline: quoting, parameters (never interpolated values), transaction shape, the exact
 * object rechecks, the absence proof and the locks.
 */
const NASTY = "x'); DROP TABLE dbo.events; --";
const staging: StagingRef = {
  table: { schema: 'dbo', table: 'stg_inv1' },
  objectId: '1234567',
  invocationId: `inv-${NASTY}`,
  owner: `owner-${NASTY}`,
};
const request: PublishRequest = {
  invocationId: `inv-${NASTY}`,
  target: { schema: 'sales', table: 'events' },
  window: { start: new Date('2024-03-01T10:00:00.000Z'), end: new Date('2024-03-01T11:00:00.000Z') },
  mode: 'replace_window',
  keyColumns: ['id'],
  timeColumn: 'ts',
  staging,
  rows: 42,
  digest: 'a'.repeat(64),
};
const receipts = { schema: 'dbo', table: 'cutpoint_receipts' };
const COLUMNS = ['id', 'ts', 'body', 'amount'];

/** Local variables the batches DECLARE themselves; every other @name must be a bound parameter. */
const LOCALS = new Set(['lock_result', 'existing', 'staged', 'locked', 'outcome']);
const PROC_ARGS = new Set([
  'Resource',
  'LockMode',
  'LockOwner',
  'LockTimeout',
  'name',
  'value',
  'level0type',
  'level0name',
  'level1type',
  'level1name',
]);

function expectParameterized(statement: Statement, values: unknown[]): void {
  const text = statement.text.replace(/N'[^']*'/g, "N''");
  // Argument names are excluded from "used"; their values (after `=`) still count.
  const used = new Set(
    [
      ...text
        .replace(/@([A-Za-z_][A-Za-z0-9_]*)\s*=(?=\s*(N'|@))/g, (m, n: string) => (PROC_ARGS.has(n) ? '' : m))
        .matchAll(/@([A-Za-z_][A-Za-z0-9_]*)/g),
    ].map((m) => m[1]!),
  );
  // `@Name = …` named arguments inside EXEC sys.sp_getapplock / sp_addextendedproperty are not parameters.
  const named = new Set(
    [...statement.text.matchAll(/EXEC[^;]*;/g)].flatMap((call) =>
      [...call[0].matchAll(/@([A-Za-z_][A-Za-z0-9_]*)\s*=/g)].map((m) => m[1]!),
    ),
  );
  const bound = new Set(statement.params.map((p) => p.name));
  for (const name of used) {
    if (LOCALS.has(name) || (PROC_ARGS.has(name) && named.has(name))) continue;
    expect(bound, `@${name} is referenced but not bound`).toContain(name);
  }
  for (const name of bound) expect(used, `@${name} is bound but unused`).toContain(name);
  for (const value of values) {
    expect(statement.text).not.toContain(String(value));
    expect(
      statement.params.some(
        (p) =>
          p.value === value ||
          (p.value instanceof Date && value instanceof Date && p.value.getTime() === value.getTime()),
      ),
    ).toBe(true);
  }
}

/** Positions of fragments in order: each must appear after the previous. */
function expectInOrder(text: string, fragments: string[]): void {
  let from = 0;
  for (const fragment of fragments) {
    const at = text.indexOf(fragment, from);
    expect(at, `"${fragment}" after position ${from}`).toBeGreaterThanOrEqual(0);
    from = at + fragment.length;
  }
}

describe('T-SQL quoting', () => {
  it('bracket-quotes with ] doubled, and qualified names refuse what validation refuses', () => {
    expect(bracket('events')).toBe('[events]');
    expect(bracket('a]b')).toBe('[a]]b]');
    expect(bracket('x]; DROP TABLE y; --')).toBe('[x]]; DROP TABLE y; --]');
    expect(qualified({ schema: 'dbo', table: 'events' })).toBe('[dbo].[events]');
    for (const bad of ['a]b', 'x;y', '[x]', '', 'a b', 'a.b', "o'k", '1x', 'a'.repeat(64)]) {
      expect(() => qualified({ schema: 'dbo', table: bad })).toThrow(
        expect.objectContaining({ code: 'delivery.invalid_identifier' }),
      );
      expect(() => qualified({ schema: bad, table: 'events' })).toThrow(
        expect.objectContaining({ code: 'delivery.invalid_identifier' }),
      );
    }
  });

  it('substitutes {staging} in an operator assertion with the quoted stage name', () => {
    expect(assertionStatement('SELECT COUNT(*) FROM {staging} WHERE amount < 0', staging.table)).toBe(
      'SELECT COUNT(*) FROM [dbo].[stg_inv1] WHERE amount < 0',
    );
  });
});

describe('target identity', () => {
  it('reads server name, database and login, with no parameters and no host or port', () => {
    const statement = identityStatement();
    expect(statement.params).toEqual([]);
    expect(statement.text).toContain("SERVERPROPERTY(N'ServerName')");
    expect(statement.text).toContain('DB_NAME() AS [database]');
    expect(statement.text).toContain('SUSER_SNAME() AS principal');
    expect(statement.text).not.toMatch(/@@SERVERNAME|host|port/i);
  });
});

describe('exact object identity', () => {
  it('describes a table by exact name through OBJECT_ID(@name, U), the name bound as a parameter', () => {
    const s = describeStatement(staging.table);
    expect(s.text).toContain("WHERE c.object_id = OBJECT_ID(@name, N'U')");
    expect(s.params).toEqual([{ name: 'name', type: 'nvarchar', value: '[dbo].[stg_inv1]' }]);
    expectParameterized(s, []);
  });

  it('creates the stage in one transaction under an applock: nullable copy without identity, indexed chunk column, owner property', () => {
    const s = createStagingBatch(staging.table, request.target, staging.invocationId, staging.owner, 30_000);
    expectInOrder(s.text, [
      'SET XACT_ABORT ON;',
      'BEGIN TRANSACTION;',
      "EXEC @lock_result = sys.sp_getapplock @Resource = @lock_resource, @LockMode = N'Exclusive', @LockOwner = N'Transaction', @LockTimeout = @lock_timeout_ms;",
      'IF @lock_result < 0 THROW 51000',
      "DECLARE @existing int = OBJECT_ID(@staging_name, N'U');",
      'IF @existing IS NOT NULL',
      'COMMIT TRANSACTION;\n  RETURN;',
      'SELECT TOP (0) l.* INTO [dbo].[stg_inv1] FROM (SELECT 1 AS one) AS d LEFT JOIN [sales].[events] AS l ON 1 = 0;',
      'ALTER TABLE [dbo].[stg_inv1] ADD [_cutpoint_seq] int NOT NULL;',
      'CREATE NONCLUSTERED INDEX [cutpoint_chunk_seq] ON [dbo].[stg_inv1] ([_cutpoint_seq]);',
      "EXEC sys.sp_addextendedproperty @name = N'cutpoint.owner', @value = @owner_marker",
      'COMMIT TRANSACTION;',
    ]);
    const marker = ownerMarker(staging.invocationId, staging.owner);
    expectParameterized(s, [marker, 'cutpoint.stage:dbo.stg_inv1']);
    expect(s.text).not.toContain(NASTY);
  });

  it('a chunk load first rechecks the exact object and owner, locks it, rechecks under the lock, and reads the stage columns: nothing written', () => {
    const s = prepareLoadBatch(staging);
    expectInOrder(s.text, [
      'SET XACT_ABORT ON;',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id",
      `THROW ${THROWN.stagingObjectChanged}`,
      "AND name = N'cutpoint.owner' AND CAST(value AS nvarchar(4000)) = @owner_marker",
      `THROW ${THROWN.stagingOwnerChanged}`,
      'FROM [dbo].[stg_inv1] WITH (TABLOCKX, HOLDLOCK)',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id",
      `THROW ${THROWN.stagingOwnerChanged}`,
      'SELECT c.name, TYPE_NAME(c.system_type_id) AS type_name, c.max_length, c.precision, c.scale, c.collation_name',
      'WHERE c.object_id = @staging_object_id',
    ]);
    expect(s.text).not.toMatch(/DELETE|INSERT|UPDATE|DROP/);
    expect(s.params).toContainEqual({ name: 'staging_object_id', type: 'int', value: 1234567 });
    expectParameterized(s, [ownerMarker(staging.invocationId, staging.owner)]);
  });

  it('observes chunks of the rechecked stage, all of them or only the seqs in [from, to)', () => {
    const all = observeChunksBatch(staging);
    expect(all.text).toContain(
      'SELECT [_cutpoint_seq] AS seq, COUNT_BIG(*) AS row_count FROM [dbo].[stg_inv1] WITH (HOLDLOCK) GROUP BY [_cutpoint_seq]',
    );
    expect(all.text).not.toContain('@seq_from');
    expectParameterized(all, []);
    const part = observeChunksBatch(staging, { from: 300_000, to: 400_000 });
    expectInOrder(part.text, [
      `THROW ${THROWN.stagingOwnerChanged}`,
      'FROM [dbo].[stg_inv1] WITH (HOLDLOCK) WHERE [_cutpoint_seq] >= @seq_from AND [_cutpoint_seq] < @seq_to GROUP BY',
    ]);
    expect(part.params).toContainEqual({ name: 'seq_from', type: 'bigint', value: 300_000 });
    expect(part.params).toContainEqual({ name: 'seq_to', type: 'bigint', value: 400_000 });
    expectParameterized(part, []);
  });

  it('quality facts count rows, duplicate key groups and nulls per column on the rechecked stage', () => {
    const s = stagingFactsBatch(staging, ['id', 'ts'], ['amount', 'body']);
    expect(s.text).toContain('COUNT_BIG(*) AS row_count');
    expect(s.text).toContain('GROUP BY [id], [ts] HAVING COUNT_BIG(*) > 1');
    expect(s.text).toContain('SUM(CASE WHEN [amount] IS NULL THEN 1 ELSE 0 END) AS n0');
    expect(s.text).toContain('SUM(CASE WHEN [body] IS NULL THEN 1 ELSE 0 END) AS n1');
    expect(s.text).toContain(`THROW ${THROWN.stagingOwnerChanged}`);
    expectParameterized(s, []);
    expect(() => stagingFactsBatch(staging, ['id]--'], [])).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_identifier' }),
    );
  });
});

describe('the publication batch', () => {
  it('replace_window: one transaction with XACT_ABORT ON, the receipt check first, rechecks, guards, DELETE + INSERT, the receipt row, COMMIT', () => {
    const s = publishBatch(request, receipts, COLUMNS, 30_000);
    expectInOrder(s.text, [
      'SET XACT_ABORT ON;',
      'BEGIN TRANSACTION;',
      "IF OBJECT_ID(@receipts_name, N'U') IS NULL\n  CREATE TABLE [dbo].[cutpoint_receipts]",
      'invocation_id nvarchar(200) NOT NULL PRIMARY KEY',
      'sys.sp_getapplock @Resource = @lock_resource',
      'IF EXISTS (SELECT 1 FROM [dbo].[cutpoint_receipts] WITH (UPDLOCK, HOLDLOCK) WHERE invocation_id = @invocation_id)',
      'SELECT CAST(0 AS bit) AS applied',
      'COMMIT TRANSACTION;\n  RETURN;',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id",
      'SELECT @staged = COUNT_BIG(*) FROM [dbo].[stg_inv1] WITH (TABLOCKX, HOLDLOCK);',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL OR OBJECT_ID(@staging_name, N'U') <> @staging_object_id",
      `THROW ${THROWN.stageLacksColumns}`,
      'IF @staged <> @rows',
      `THROW ${THROWN.rowCountMismatch}`,
      'WHERE [ts] IS NULL OR [ts] < @window_start OR [ts] >= @window_end',
      `THROW ${THROWN.rowsOutsideWindow}`,
      'DELETE FROM [sales].[events] WITH (TABLOCKX) WHERE [ts] >= @window_start AND [ts] < @window_end;',
      'INSERT INTO [sales].[events] ([id], [ts], [body], [amount]) SELECT [id], [ts], [body], [amount] FROM [dbo].[stg_inv1];',
      'INSERT INTO [dbo].[cutpoint_receipts]',
      'VALUES (@invocation_id, @target_schema, @target_table, @mode, @window_start, @window_end, @rows, @digest, @staging_object_id_text, @method);',
      'SELECT CAST(1 AS bit) AS applied',
      'COMMIT TRANSACTION;',
    ]);
    expect(s.params).toContainEqual({ name: 'method', type: 'nvarchar', value: 'set_based' });
    expect(s.text.trimEnd().endsWith('COMMIT TRANSACTION;')).toBe(true);
    expect(s.params).toContainEqual({ name: 'window_start', type: 'datetime2', value: request.window.start });
    expect(s.params).toContainEqual({ name: 'window_end', type: 'datetime2', value: request.window.end });
    expect(s.params).toContainEqual({ name: 'rows', type: 'bigint', value: 42 });
    expectParameterized(s, [
      request.invocationId,
      request.digest,
      ownerMarker(staging.invocationId, staging.owner),
      `cutpoint.publish:${request.invocationId}`,
    ]);
    expect(s.text).not.toContain(NASTY);
    expect(s.text).not.toContain('2024-03-01');
  });

  it('merge: refuses null or duplicate keys, updates non-key columns on key match, inserts the rest', () => {
    const s = publishBatch({ ...request, mode: 'merge', keyColumns: ['id'] }, receipts, COLUMNS, 30_000);
    expectInOrder(s.text, [
      'BEGIN TRANSACTION;',
      'WHERE [id] IS NULL',
      'GROUP BY [id] HAVING COUNT_BIG(*) > 1',
      `THROW ${THROWN.mergeKeysInvalid}`,
      'UPDATE t SET t.[ts] = s.[ts], t.[body] = s.[body], t.[amount] = s.[amount]',
      'FROM [sales].[events] AS t WITH (TABLOCKX) INNER JOIN [dbo].[stg_inv1] AS s ON t.[id] = s.[id];',
      'INSERT INTO [sales].[events] WITH (TABLOCKX) ([id], [ts], [body], [amount])',
      'WHERE NOT EXISTS (SELECT 1 FROM [sales].[events] AS t WHERE t.[id] = s.[id]);',
      'INSERT INTO [dbo].[cutpoint_receipts]',
      'COMMIT TRANSACTION;',
    ]);
    expect(s.text).not.toContain('DELETE FROM [sales].[events]');
    expectParameterized(s, [request.invocationId]);
  });

  it('probes the receipt, and when its table is absent asks whether the principal may see the schema', () => {
    const s = probeReceiptBatch(receipts, request.invocationId);
    expectInOrder(s.text, [
      "IF OBJECT_ID(@receipts_name, N'U') IS NULL",
      "HAS_PERMS_BY_NAME(@receipts_schema, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema",
      'RETURN;',
      'FROM [dbo].[cutpoint_receipts] WHERE invocation_id = @invocation_id;',
    ]);
    expectParameterized(s, [request.invocationId]);
  });
});

describe('retirement', () => {
  it('takes the retire applock, drops only the exact object with our marker, locked and rechecked', () => {
    const s = dropStagingBatch(staging, 5_000);
    expectInOrder(s.text, [
      'SET XACT_ABORT ON;',
      'BEGIN TRANSACTION;',
      "sys.sp_getapplock @Resource = @lock_resource, @LockMode = N'Exclusive', @LockOwner = N'Transaction', @LockTimeout = @lock_timeout_ms;",
      "IF OBJECT_ID(@staging_name, N'U') IS NULL\n  SELECT @outcome = N'ALREADY_ABSENT';",
      "ELSE IF NOT (OBJECT_ID(@staging_name, N'U') = @staging_object_id AND EXISTS (",
      "SELECT @outcome = N'NOT_OURS';",
      'FROM [dbo].[stg_inv1] WITH (TABLOCKX, HOLDLOCK)',
      "IF OBJECT_ID(@staging_name, N'U') = @staging_object_id AND EXISTS (",
      'DROP TABLE [dbo].[stg_inv1];',
      "SELECT @outcome = N'DROPPED';",
      'SELECT @outcome AS outcome;',
      'COMMIT TRANSACTION;',
    ]);
    expect(s.text.match(/DROP TABLE/g)).toHaveLength(1);
    expect(s.params).toContainEqual({ name: 'lock_resource', type: 'nvarchar', value: 'cutpoint.retire:dbo.stg_inv1' });
    expect(s.params).toContainEqual({ name: 'lock_timeout_ms', type: 'int', value: 5_000 });
    expectParameterized(s, [ownerMarker(staging.invocationId, staging.owner)]);
  });

  it('takes the publication applock after the retire applock, in every drop (a drop and a publication of one invocation never overlap)', () => {
    const s = dropStagingBatch(staging, 5_000);
    expectInOrder(s.text, [
      'BEGIN TRANSACTION;',
      'sys.sp_getapplock @Resource = @lock_resource,',
      'sys.sp_getapplock @Resource = @publish_lock_resource,',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL",
      'DROP TABLE [dbo].[stg_inv1];',
    ]);
    expect(s.text.match(/DECLARE @lock_result int;/g)).toHaveLength(1);
    expect(s.params).toContainEqual({
      name: 'publish_lock_resource',
      type: 'nvarchar',
      value: `cutpoint.publish:${staging.invocationId}`,
    });
    // The same resource the publication batch locks.
    expect(publishBatch(request, receipts, COLUMNS, 5_000).params).toContainEqual({
      name: 'lock_resource',
      type: 'nvarchar',
      value: `cutpoint.publish:${request.invocationId}`,
    });
    expect(s.text).not.toContain('cutpoint_receipts');
    expectParameterized(s, [ownerMarker(staging.invocationId, staging.owner)]);
  });

  it('a retirement drop re-probes the receipt under the publication lock: found → PUBLISHED with the receipt, committed without dropping', () => {
    const s = dropStagingBatch(staging, 5_000, { receipts });
    expectInOrder(s.text, [
      'sys.sp_getapplock @Resource = @publish_lock_resource,',
      "IF OBJECT_ID(@receipts_name, N'U') IS NULL",
      `THROW ${THROWN.receiptUnobservable},`,
      'ELSE IF EXISTS (SELECT 1 FROM [dbo].[cutpoint_receipts] WITH (HOLDLOCK) WHERE invocation_id = @invocation_id)',
      "SELECT N'PUBLISHED' AS outcome,",
      'COMMIT TRANSACTION;',
      'RETURN;',
      "IF OBJECT_ID(@staging_name, N'U') IS NULL",
      'DROP TABLE [dbo].[stg_inv1];',
    ]);
    expect(s.text.match(/DROP TABLE/g)).toHaveLength(1);
    expectParameterized(s, [ownerMarker(staging.invocationId, staging.owner), staging.invocationId]);
  });

  it('observes a stage by name: object id, owner marker and schema visibility, read-only', () => {
    const s = observeStagingStatement(staging.table);
    expect(s.text).toContain("OBJECT_ID(@staging_name, N'U') AS object_id");
    expect(s.text).toContain("HAS_PERMS_BY_NAME(@schema_name, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema");
    expect(s.text).toContain("ep.name = N'cutpoint.owner'");
    expect(s.text).not.toMatch(/BEGIN TRANSACTION|DROP|INSERT|UPDATE|DELETE/);
    expect(s.params).toEqual([
      { name: 'staging_name', type: 'nvarchar', value: '[dbo].[stg_inv1]' },
      { name: 'schema_name', type: 'nvarchar', value: 'dbo' },
    ]);
    expectParameterized(s, []);
  });

  it('proves absence only with VIEW DEFINITION on the schema (HAS_PERMS_BY_NAME), and looks for the exact id', () => {
    const s = absenceProofStatement(staging);
    expect(s.text).toContain("HAS_PERMS_BY_NAME(@schema_name, N'SCHEMA', N'VIEW DEFINITION') AS can_view_schema");
    expect(s.text).toContain('sys.objects WHERE object_id = @staging_object_id');
    expect(s.params).toEqual([
      { name: 'schema_name', type: 'nvarchar', value: 'dbo' },
      { name: 'staging_object_id', type: 'int', value: 1234567 },
    ]);
  });
});
