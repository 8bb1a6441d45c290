import { describe, expect, it } from 'vitest';
import { publishBatch } from '../../src/adapters/mssql/publish-statements.js';
import { THROWN } from '../../src/adapters/mssql/sql-text.js';
import { mssqlSwapPlanOf, type MssqlSwapPlan, type PartitionLayoutRow } from '../../src/adapters/mssql/swap-plan.js';
import { partitionLayoutStatement } from '../../src/adapters/mssql/swap-statements.js';
import type { PublishRequest, StagingRef } from '../../src/domain/delivery/target-types.js';

/**
 * SQL Server publication by partition SWITCH, offline (no server here): the plan from the
 * layout read, and the batch's order — the layout rechecked, the stage checked and made
 * the partition's equal, TRUNCATE of the window's partition, SWITCH, the receipt. Every
 * statement is also parsed by the T-SQL grammar (mssql-grammar.test.ts).
 */

const staging: StagingRef = {
  table: { schema: 'dbo', table: 'stg_inv1' },
  objectId: '1234567',
  invocationId: 'inv-1',
  owner: 'owner-1',
};
const request: PublishRequest = {
  invocationId: 'inv-1',
  target: { schema: 'sales', table: 'events' },
  window: { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-11-02T00:00:00Z') },
  mode: 'replace_window',
  keyColumns: [],
  timeColumn: 'ts',
  staging,
  rows: 42,
  digest: 'a'.repeat(64),
};
const layout: PartitionLayoutRow = {
  function_name: 'pf_daily',
  range_right: true,
  key_type: 'datetime2',
  start_boundary: 4,
  end_boundary: 5,
  partition_space: 1,
  stage_space: 1,
  nonclustered: 0,
};
const notNull = [{ name: 'ts', type_name: 'datetime2', max_length: 8, precision: 27, scale: 3, collation_name: null }];

describe('SQL Server switch plan', () => {
  it('switches when the window is exactly one RANGE RIGHT partition on the stage filegroup: partition = start boundary + 1', () => {
    expect(mssqlSwapPlanOf(layout, [], notNull)).toEqual({
      plan: {
        functionName: 'pf_daily',
        partition: 5,
        notNull: [{ name: 'ts', type: 'datetime2(3)' }],
        keyType: 'datetime2',
      },
    });
    expect(
      mssqlSwapPlanOf(layout, [{ column_name: 'ts', is_descending_key: false, is_unique: true }], []),
    ).toMatchObject({
      plan: { clustered: { unique: true, keys: [{ name: 'ts', descending: false }] } },
    });
  });

  it('declines (set-based, with the reason) anything else; a target not partitioned on the time column is not a decline', () => {
    expect(mssqlSwapPlanOf(undefined, [], [])).toEqual({ partitioned: false });
    const declined = (over: Partial<PartitionLayoutRow>) =>
      (mssqlSwapPlanOf({ ...layout, ...over }, [], []) as { declined?: string }).declined;
    expect(declined({ range_right: false })).toMatch(/RANGE LEFT/);
    expect(declined({ key_type: 'datetimeoffset' })).toMatch(/not datetime2 or datetime/);
    expect(declined({ start_boundary: null })).toBe("the window is not exactly one partition's range");
    expect(declined({ end_boundary: 6 })).toBe("the window is not exactly one partition's range");
    expect(declined({ nonclustered: 1 })).toMatch(/nonclustered indexes/);
    expect(declined({ stage_space: 2 })).toMatch(/filegroup/);
    expect(declined({ function_name: 'pf]x' })).toMatch(/not a plain identifier/);
  });
});

describe('SQL Server switch batch', () => {
  const plan: MssqlSwapPlan = {
    functionName: 'pf_daily',
    partition: 5,
    notNull: [{ name: 'ts', type: 'datetime2(3)' }],
    clustered: { unique: false, keys: [{ name: 'ts', descending: false }] },
    keyType: 'datetime2',
  };

  it('rechecks the layout, checks and shapes the stage, truncates the partition and switches the stage in, then writes the receipt; no row is copied', () => {
    const s = publishBatch(request, { schema: 'dbo', table: 'cutpoint_receipts' }, ['id', 'ts'], 30_000, plan);
    const order = [
      'IF @staged <> @rows',
      'f.name = @swap_function)',
      'v.boundary_id = 4 AND CAST(v.value AS datetime2(7)) = @window_start',
      'v.boundary_id = 5 AND CAST(v.value AS datetime2(7)) = @window_end',
      '$PARTITION.[pf_daily](@window_start) <> 5 OR $PARTITION.[pf_daily](@window_end) <> 6',
      `THROW ${THROWN.partitionLayoutChanged}`,
      `THROW ${THROWN.rowsOutsideWindow}`,
      'IF EXISTS (SELECT 1 FROM [dbo].[stg_inv1] WHERE [ts] IS NULL)',
      `THROW ${THROWN.stageNullsRequired}`,
      'DROP INDEX [cutpoint_chunk_seq] ON [dbo].[stg_inv1];',
      'ALTER TABLE [dbo].[stg_inv1] DROP COLUMN [_cutpoint_seq];',
      'ALTER TABLE [dbo].[stg_inv1] ALTER COLUMN [ts] datetime2(3) NOT NULL;',
      'CREATE CLUSTERED INDEX [cutpoint_switch] ON [dbo].[stg_inv1] ([ts] ASC);',
      "ALTER TABLE [dbo].[stg_inv1] ADD CONSTRAINT [cutpoint_window] CHECK ([ts] IS NOT NULL AND [ts] >= '2026-11-01T00:00:00.000' AND [ts] < '2026-11-02T00:00:00.000');",
      'TRUNCATE TABLE [sales].[events] WITH (PARTITIONS (5));',
      'ALTER TABLE [dbo].[stg_inv1] SWITCH TO [sales].[events] PARTITION 5;',
      'INSERT INTO [dbo].[cutpoint_receipts]',
      'COMMIT TRANSACTION;',
    ];
    let at = 0;
    for (const part of order) {
      const found = s.text.indexOf(part, at);
      expect(found, part).toBeGreaterThanOrEqual(0);
      at = found + part.length;
    }
    expect(s.text).not.toMatch(/DELETE FROM \[sales\]|INSERT INTO \[sales\]/);
    expect(s.params).toContainEqual({ name: 'method', type: 'nvarchar', value: 'partition_swap' });
    expect(s.params).toContainEqual({ name: 'swap_function', type: 'nvarchar', value: 'pf_daily' });
  });

  it('merge never switches; the layout read binds every value', () => {
    const merge = publishBatch(
      { ...request, mode: 'merge', keyColumns: ['id'] },
      { schema: 'dbo', table: 'r' },
      ['id', 'ts'],
      30_000,
      plan,
    );
    expect(merge.text).not.toContain('SWITCH');
    expect(merge.params).toContainEqual({ name: 'method', type: 'nvarchar', value: 'set_based' });
    const read = partitionLayoutStatement(request.target, staging, 'ts', request.window);
    expect(read.text).not.toContain('2026-11');
    expect(read.params.map((p) => p.name).sort()).toEqual([
      'staging_object_id',
      'target_name',
      'time_column',
      'window_end',
      'window_start',
    ]);
    expect(() => partitionLayoutStatement(request.target, staging, 'ts]--', request.window)).toThrow(
      expect.objectContaining({ code: 'delivery.invalid_identifier' }),
    );
  });
});
