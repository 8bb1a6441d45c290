import type { RecoveryOutcome } from './metric-names.js';

/**
 * RecoveryOutcome {Flow, Outcome}: how one delivery recovery action ended, read from what
 * its step returned or threw (src/delivery/recovery/flow-steps.ts `recoveryFlowStep`:
 * a finished action returns `retained: false`; a RecoveryRetainedError becomes an answer
 * with `retained: true` and the journal state; every refusal throws its stable name).
 * The rows are matched top to bottom; the first match decides. docs/deploy.md "Logs, metrics and
 * traces" shows the same table.
 */

/** The registry steps that run one live recovery action, and the flow each belongs to. */
export const RECOVERY_STEP_FLOWS: Readonly<Record<string, string>> = {
  DeliveryRecoverReconcile: 'delivery-reconcile',
  DeliveryRecoverResume: 'delivery-resume',
  DeliveryRecoverRetire: 'delivery-retire',
};

/** Refusals: nothing was changed and an operator must act (a confirmation, another session's custody, a forbidden action). */
const REFUSALS: ReadonlySet<string> = new Set([
  'Cutpoint.ValidationError',
  'Cutpoint.ConfigError',
  'Cutpoint.IdentityConflict',
  'Delivery.ConfirmationRequired',
  'Delivery.ActionNotPermitted',
  'Delivery.SourceForbidden',
  'Delivery.AuthorityMismatch',
  'Delivery.CustodyHeld',
  'Delivery.Fenced',
  'Delivery.CustodyNotRetained',
  'Delivery.JournalUnavailable',
]);

/** What the step ended with: its result, or the stable name of the error it threw. */
export type RecoveryEnd = { result: unknown } | { errorName: string };

export interface RecoveryOutcomeRow {
  /** The step's end, in the words of the docs/deploy.md "Logs, metrics and traces" table. */
  when: string;
  outcome: RecoveryOutcome;
  matches: (end: RecoveryEnd) => boolean;
}

function resultOf(end: RecoveryEnd): { retained?: unknown; state?: unknown } | undefined {
  return 'result' in end && typeof end.result === 'object' && end.result !== null
    ? (end.result as { retained?: unknown; state?: unknown })
    : undefined;
}
const errorNameOf = (end: RecoveryEnd): string | undefined => ('errorName' in end ? end.errorName : undefined);

export const RECOVERY_OUTCOME_TABLE: readonly RecoveryOutcomeRow[] = [
  {
    when: 'returned `retained: false` (the action reached its goal)',
    outcome: 'resolved',
    matches: (e) => resultOf(e)?.retained === false,
  },
  {
    when: 'returned `retained: true` in INCIDENT_RETAINED (contradicting evidence, custody kept)',
    outcome: 'incident-retained',
    matches: (e) => resultOf(e)?.retained === true && resultOf(e)?.state === 'INCIDENT_RETAINED',
  },
  {
    when: 'returned `retained: true` in any other state (resume stopped short, absence unprovable)',
    outcome: 'escalated',
    matches: (e) => resultOf(e)?.retained === true,
  },
  {
    when: 'threw Quality.TargetPending (the target observation is not final yet)',
    outcome: 'target-pending',
    matches: (e) => errorNameOf(e) === 'Quality.TargetPending',
  },
  {
    when: 'threw a refusal (confirmation, permitted action, custody or fence held elsewhere, bad input) or another Quality.* stop',
    outcome: 'escalated',
    matches: (e) => {
      const n = errorNameOf(e);
      return n !== undefined && (REFUSALS.has(n) || n.startsWith('Quality.'));
    },
  },
  {
    when: 'threw anything else (an effect ended unknown/failed/crashed, a target was unavailable, a defect)',
    outcome: 'failed',
    matches: (e) => errorNameOf(e) !== undefined,
  },
];

/** The recovery outcome of a recovery step's end; undefined for a result that is not a recovery answer. */
export function recoveryOutcomeOf(end: RecoveryEnd): RecoveryOutcome | undefined {
  return RECOVERY_OUTCOME_TABLE.find((row) => row.matches(end))?.outcome;
}
