import type { StagingRef, TableRef, TimeWindow } from '../../domain/delivery/target-types.js';
import { assertUserColumn } from '../../domain/delivery/target-rules.js';
import { nameParam, type Statement } from './sql-text.js';

/** The SQL Server adapter's read of a target's partition layout, for publication by SWITCH (swap-plan.ts decides). */

/**
 * Three result sets, read-only: (1) the target's partitioning on `timeColumn` (absent when
 * it is not partitioned on it): the function, RANGE RIGHT or not, the key's type, the
 * boundary ids whose values are the window's start and end (sys.partition_range_values),
 * the filegroup of the partition the start falls in and the stage's, and the count of
 * nonclustered indexes; (2) the clustered index's key columns; (3) the target's NOT NULL
 * columns as sys.columns describes them.
 */
export function partitionLayoutStatement(
  target: TableRef,
  staging: StagingRef,
  timeColumn: string,
  window: TimeWindow,
): Statement {
  assertUserColumn(timeColumn);
  return {
    text: `SET NOCOUNT ON;
DECLARE @target_id int = OBJECT_ID(@target_name, N'U');
SELECT pf.name AS function_name, CAST(pf.boundary_value_on_right AS bit) AS range_right, TYPE_NAME(c.system_type_id) AS key_type,
       lo.boundary_id AS start_boundary, hi.boundary_id AS end_boundary,
       (SELECT dds.data_space_id FROM sys.destination_data_spaces AS dds
         WHERE dds.partition_scheme_id = ps.data_space_id AND dds.destination_id = lo.boundary_id + 1) AS partition_space,
       (SELECT si.data_space_id FROM sys.indexes AS si WHERE si.object_id = @staging_object_id AND si.index_id IN (0, 1)) AS stage_space,
       (SELECT COUNT(*) FROM sys.indexes AS x WHERE x.object_id = @target_id AND x.index_id > 1) AS nonclustered
  FROM sys.indexes AS i
  INNER JOIN sys.partition_schemes AS ps ON ps.data_space_id = i.data_space_id
  INNER JOIN sys.partition_functions AS pf ON pf.function_id = ps.function_id
  INNER JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id AND ic.partition_ordinal = 1
  INNER JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
  LEFT JOIN sys.partition_range_values AS lo ON lo.function_id = pf.function_id AND CAST(lo.value AS datetime2(7)) = @window_start
  LEFT JOIN sys.partition_range_values AS hi ON hi.function_id = pf.function_id AND CAST(hi.value AS datetime2(7)) = @window_end
 WHERE i.object_id = @target_id AND i.index_id IN (0, 1) AND c.name = @time_column;
SELECT c.name AS column_name, ic.is_descending_key, i.is_unique
  FROM sys.indexes AS i
  INNER JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id AND ic.key_ordinal > 0
  INNER JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
 WHERE i.object_id = @target_id AND i.index_id = 1
 ORDER BY ic.key_ordinal;
SELECT c.name, TYPE_NAME(c.system_type_id) AS type_name, c.max_length, c.precision, c.scale, c.collation_name
  FROM sys.columns AS c
 WHERE c.object_id = @target_id AND c.is_nullable = 0
 ORDER BY c.column_id;`,
    params: [
      nameParam('target_name', target),
      { name: 'staging_object_id', type: 'int', value: Number(staging.objectId) },
      { name: 'time_column', type: 'nvarchar', value: timeColumn },
      { name: 'window_start', type: 'datetime2', value: window.start },
      { name: 'window_end', type: 'datetime2', value: window.end },
    ],
  };
}
