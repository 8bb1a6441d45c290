import { PublicationRefusedError, StagingBindingChangedError, TargetObjectMissingError, TargetUnobservableError } from '../../domain/delivery/target-errors.js';
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
      return new TargetUnobservableError('the receipt table is not visible to this principal: absence of a receipt cannot be proved');
    case THROWN.objectMissing:
      return new TargetObjectMissingError('a table the statement needs');
    default:
      return undefined;
  }
}
