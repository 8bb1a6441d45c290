import {
  PublicationRefusedError,
  StagingBindingChangedError,
  TargetObjectMissingError,
  TargetUnobservableError,
} from '../../domain/delivery/target-errors.js';
import type { TargetObservation } from '../../domain/delivery/target-check.js';
import { serverErrorNumber } from './connection.js';
import { THROWN } from './sql-text.js';

/** What the SQL Server adapter reads back: receipts, assertion scalars, its own THROWs; and the seq-range check. */

/**
 * The batches' own THROW numbers as stable errors; undefined for any other failure, and for
 * `lockNotGranted` and `partitionLayoutChanged`, which stay the cut point's definite
 * EffectFailed (nothing applied; a retry plans the publication again).
 */
export function thrownError(error: unknown): Error | undefined {
  switch (serverErrorNumber(error)) {
    case THROWN.stagingObjectChanged:
      return new StagingBindingChangedError('the stage is not the recorded object');
    case THROWN.stagingOwnerChanged:
      return new StagingBindingChangedError('the stage has a different owner binding');
    case THROWN.rowCountMismatch:
      return new PublicationRefusedError('the stage row count differs from the journal');
    case THROWN.rowsOutsideWindow:
      return new PublicationRefusedError('staged rows fall outside the window');
    case THROWN.mergeKeysInvalid:
      return new PublicationRefusedError('merge keys in the stage are null or not unique');
    case THROWN.stageNullsRequired:
      return new PublicationRefusedError('staged rows hold NULL in columns the target requires');
    case THROWN.stageLacksColumns:
      return new PublicationRefusedError('the stage lacks target columns');
    case THROWN.receiptUnobservable:
      return new TargetUnobservableError(
        'the receipt table is not visible to this principal: absence of a receipt cannot be proved',
      );
    case THROWN.objectMissing:
      return new TargetObjectMissingError('a table the statement needs');
    default:
      return undefined;
  }
}

/** A row of `targetCheckStatement`: one column of one object whose name matches ignoring case. */
export interface TargetCheckRow {
  schema_name: string;
  table_name: string;
  object_type: string;
  is_ms_shipped: boolean;
  column_name: string | null;
}

/**
 * What `targetCheckStatement` saw: each object once (a user table `U` is a table, a view `V`
 * a view, anything else — a synonym, an internal or system table — not a regular table;
 * shipped objects are the system's), and the columns of the exactly named one.
 */
export function targetObservationOf(
  rows: readonly TargetCheckRow[],
  table: { schema: string; table: string },
): TargetObservation {
  const found = new Map<string, TargetObservation['found'][number]>();
  const columns: string[] = [];
  for (const row of rows) {
    const type = row.object_type.trim();
    const key = `${row.schema_name}.${row.table_name}`;
    if (!found.has(key))
      found.set(key, {
        schema: row.schema_name,
        table: row.table_name,
        kind: type === 'U' ? 'table' : type === 'V' ? 'view' : 'other',
        system: row.is_ms_shipped || type === 'S' || type === 'IT',
      });
    if (row.column_name !== null && row.schema_name === table.schema && row.table_name === table.table)
      columns.push(row.column_name);
  }
  return { found: [...found.values()], columns };
}
