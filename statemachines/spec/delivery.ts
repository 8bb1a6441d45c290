import { onError } from './task.js';

/**
 * What every deliver-window and publish-clickhouse step after Begin is given: the invocation
 * and the custody fence Begin returned, the execution input's manifest and selector, the
 * journal state the previous step left (`known`, versions included: every write is
 * conditioned on it) and the Task's retry count (a retry reloads the journal).
 */
export const CARRIED_STATE = {
  'invocationId.$': '$.delivery.invocationId',
  'fence.$': '$.delivery.fence',
  'manifestText.$': '$.manifestText',
  'selector.$': '$.selector',
  'known.$': '$.delivery.known',
  'retry.$': '$$.State.RetryCount',
} as const;

/** A step that left the journal in a state only reconcile resolves: the flow ends at StoppedForRecovery. */
export const STOPPED_FOR_RECOVERY = onError('StoppedForRecovery', ['Delivery.NeedsRecovery'], '$.stop');
