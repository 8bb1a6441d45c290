/**
 * The telemetry contract between what runs (handlers and the recovery dispatcher emit
 * these as CloudWatch Embedded Metric Format through Powertools) and what watches
 * (infra/ builds alarms and dashboards on exactly these names). Pure constants: a name
 * changed here changes both sides at once, and a test on each side reads it from here.
 */

/** The CloudWatch namespace of every cutpoint metric. */
export const METRIC_NAMESPACE = 'Cutpoint';

/** Powertools service name (logs' `service` key, metrics' `service` dimension is disabled). */
export const SERVICE_NAME = 'cutpoint';

/** Environment variable CDK sets on each step function: the registry step's name (`GenerationWriteObject`). */
export const STEP_NAME_ENV = 'CUTPOINT_STEP';

/** Dimension names. A dimension's values are always from a closed set (no route, lane or id). */
export const DIMENSIONS = {
  /** The registry step (placeholder without `FunctionArn`). */
  step: 'Step',
  /** A registry flow name (`deliver-window`). */
  flow: 'Flow',
  /** One of CUT_POINT_OUTCOMES, EXECUTION_OUTCOMES or RECOVERY_OUTCOMES, per metric. */
  outcome: 'Outcome',
  /** A stable error `name` (`Delivery.NeedsRecovery`), never a message. */
  errorName: 'ErrorName',
  /** What a retained item holds: `custody` (a delivery journal) or `governance` (a quality capsule). */
  kind: 'Kind',
  /** A durable state with a runbook page (`INCIDENT_RETAINED`), from the retained-items sweep's closed set. */
  state: 'State',
} as const;

export const METRICS = {
  /** Count, dims {Step, Outcome}: one per cut point a handler crossed (the cut point's name is a log key, not a dimension). */
  cutPointOutcome: 'CutPointOutcome',
  /** Count, dims {Step, ErrorName}: a handler ended with a named (designed) error. */
  stepError: 'StepError',
  /** Count, dims {Step}: a handler ended with an error that has no stable name (a defect, or an SDK/driver fault). */
  unexpectedError: 'UnexpectedError',
  /** Count, dims {Flow, Outcome}: an execution ended (the dispatcher classifies it; see EXECUTION_OUTCOMES). */
  executionOutcome: 'ExecutionOutcome',
  /** Count, dims {Flow, Outcome}: a recovery action's result (see RECOVERY_OUTCOMES). */
  recoveryOutcome: 'RecoveryOutcome',
  /** Count, dims {Flow}: a recovery execution the dispatcher started (a duplicate event starts none and is not counted). */
  recoveryStarted: 'RecoveryStarted',
  /** Count / Bytes, dims {Flow}: rows and bytes a delivery or publication made visible. */
  rowsDelivered: 'RowsDelivered',
  bytesDelivered: 'BytesDelivered',
  /** Count / Bytes, dims {Flow}: records and bytes a stream append committed. */
  recordsAppended: 'RecordsAppended',
  bytesAppended: 'BytesAppended',
  /** Count (a gauge, put every sweep, zeros included), dims {Kind, State}: items retained in that state (src/operations/retained.ts). */
  retainedItems: 'RetainedItems',
} as const;

/** How a cut point's effect ended, as the fault-injector port saw it. */
export const CUT_POINT_OUTCOMES = ['applied', 'unknown', 'failed', 'crashed'] as const;
export type CutPointOutcome = (typeof CUT_POINT_OUTCOMES)[number];

/**
 * How an execution ended. `designed-stop`: a Fail state the flow means (it hands the
 * durable state to a named recovery, e.g. Delivery.NeedsRecovery) — never alarmed on by
 * itself; `recovery-stopped`: a designed stop of a recovery execution that leaves work for
 * an operator (src/recovery/recovery-stops.ts) — alarmed per flow, with a notice on the
 * incident topic; `failed`: any other failure; `timed-out`, `aborted` as Step Functions says.
 */
export const EXECUTION_OUTCOMES = [
  'succeeded',
  'designed-stop',
  'recovery-stopped',
  'failed',
  'timed-out',
  'aborted',
] as const;
export type ExecutionOutcome = (typeof EXECUTION_OUTCOMES)[number];

/** A recovery action's result. The last four alarm: someone must act. */
export const RECOVERY_OUTCOMES = ['resolved', 'escalated', 'failed', 'incident-retained', 'target-pending'] as const;
export type RecoveryOutcome = (typeof RECOVERY_OUTCOMES)[number];
export const ALARMING_RECOVERY_OUTCOMES: readonly RecoveryOutcome[] = [
  'escalated',
  'failed',
  'incident-retained',
  'target-pending',
];
