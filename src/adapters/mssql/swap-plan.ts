import { assertIdentifier } from '../../domain/delivery/target-rules.js';
import { typeSpelling, type StageColumn } from './bulk-types.js';

/**
 * Publication by partition SWITCH on SQL Server, the plan (pure): from what
 * `partitionLayoutStatement` read, whether a replace_window can switch the stage in as the
 * window's partition, and how. The publication batch (publish-statements.ts) rechecks the
 * layout under its locks and THROWs `partitionLayoutChanged` when it moved (nothing
 * applied; a retry plans again).
 *
 * A swap needs: the target partitioned (RANGE RIGHT) on the time column, a datetime2 or
 * datetime key, the window's start and end consecutive boundary values (exactly one
 * partition, number = start's boundary_id + 1), the stage on that partition's filegroup,
 * and no nonclustered index on the target (SWITCH needs identical indexes on the stage;
 * a clustered index is rebuilt on the stage before the switch). Anything else publishes
 * set-based, and the result says why.
 */

/** The first result set of `partitionLayoutStatement` (absent when the target is not partitioned on the time column). */
export interface PartitionLayoutRow {
  function_name: string;
  range_right: boolean;
  key_type: string;
  start_boundary: number | null;
  end_boundary: number | null;
  partition_space: number | null;
  stage_space: number | null;
  nonclustered: number;
}

/** The clustered index's key columns (second result set; none for a heap). */
export interface ClusteredKeyRow {
  column_name: string;
  is_descending_key: boolean;
  is_unique: boolean;
}

export interface MssqlSwapPlan {
  /** The partition function (a validated identifier). */
  functionName: string;
  /** The window's partition number. */
  partition: number;
  /** `[name] type NOT NULL` spellings for the stage's columns the target has NOT NULL. */
  notNull: Array<{ name: string; type: string }>;
  /** The target's clustered index, rebuilt on the stage (absent for a heap). */
  clustered?: { unique: boolean; keys: Array<{ name: string; descending: boolean }> };
  /** The key's type, for the window CHECK's literals. */
  keyType: 'datetime2' | 'datetime';
}

export type MssqlSwapPlanning = { plan: MssqlSwapPlan } | { declined: string } | { partitioned: false };

export function mssqlSwapPlanOf(
  layout: PartitionLayoutRow | undefined,
  clustered: readonly ClusteredKeyRow[],
  notNull: ReadonlyArray<StageColumn>,
): MssqlSwapPlanning {
  if (!layout) return { partitioned: false };
  if (!layout.range_right)
    return {
      declined: 'the partition function is RANGE LEFT: a window [start, end) is never exactly one of its partitions',
    };
  const keyType = layout.key_type.toLowerCase();
  if (keyType !== 'datetime2' && keyType !== 'datetime')
    return { declined: `the partition key is ${layout.key_type}, not datetime2 or datetime` };
  if (layout.start_boundary === null || layout.end_boundary !== layout.start_boundary + 1)
    return { declined: "the window is not exactly one partition's range" };
  if (layout.nonclustered > 0)
    return { declined: 'the target has nonclustered indexes (SWITCH needs the same on the stage)' };
  if (layout.partition_space === null || layout.partition_space !== layout.stage_space)
    return { declined: "the stage is not on the window partition's filegroup" };
  let functionName: string;
  try {
    functionName = assertIdentifier(layout.function_name, 'partition function');
  } catch {
    return { declined: 'the partition function name is not a plain identifier' };
  }
  let spelled: Array<{ name: string; type: string }>;
  try {
    spelled = notNull.map((c) => ({
      name: assertIdentifier(c.name, 'column'),
      type: `${typeSpelling(c)}${c.collation_name ? ` COLLATE ${assertIdentifier(c.collation_name, 'collation')}` : ''}`,
    }));
  } catch {
    return { declined: 'a NOT NULL column of the target has a type the stage cannot be given' };
  }
  const keys = clustered.map((k) => ({
    name: assertIdentifier(k.column_name, 'column'),
    descending: k.is_descending_key,
  }));
  return {
    plan: {
      functionName,
      partition: layout.start_boundary + 1,
      notNull: spelled,
      keyType,
      ...(keys.length > 0 ? { clustered: { unique: clustered[0]!.is_unique, keys } } : {}),
    },
  };
}
