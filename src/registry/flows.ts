/** Every flow, in deployment order (a flow that starts another comes after it: infra/flow.ts). */
import type { FlowEntry } from './flow-entry.js';

/** Deliberate stops (ABORTED) are decisions, not failures: re-runs happen only on these. */
const RERUN_ON_FAILURE = ['FAILED', 'TIMED_OUT'] as const;

export const FLOWS: FlowEntry[] = [
  {
    name: 'commit-generation',
    type: 'STANDARD',
    description: 'Write an output object, record a PREPARED generation, commit it by CAS or prove an abort',
    recovery: { by: 'commit-generation', on: RERUN_ON_FAILURE },
  },
  {
    name: 'stream-append',
    type: 'EXPRESS',
    description:
      'Append one record batch to a stream lane: WAL object bound to its offset, one fenced head CAS with the commit record',
  },
  {
    name: 'stream-resolve-append',
    type: 'STANDARD',
    description:
      'Resolve a MAY_HAVE_COMMITTED append from its original attempt, repair what it left, lift the suspension; or every attempt of a LaneWriter that died holding the lane, then release its writer slot',
    recovery: { by: 'stream-resolve-append', on: RERUN_ON_FAILURE },
  },
  {
    name: 'stream-takeover',
    type: 'STANDARD',
    description: 'Take a stream lane over with a new owner session and a higher epoch',
  },
  {
    name: 'stream-trim',
    type: 'STANDARD',
    description: 'Move the trim offset of a stream lane forward by CAS (monotonic); bytes below it stay until GC',
  },
  {
    name: 'stream-gc',
    type: 'STANDARD',
    description:
      "Collect one lane's unreferenced and trimmed objects: lifecycle roots, orphan grace, lease drain, sealed delete journals, exact absence",
  },
  // Off the acknowledged path, so Standard rather than Express: a backlog may outlast
  // Express's 5 minutes, a name starts one execution only, and a failure leaves a history,
  // a status event and the failed-executions alarm; a run is 2-3 transitions.
  {
    name: 'stream-materialize',
    type: 'STANDARD',
    description:
      "Materialize generation 0 of a lane's next committed ranges off the acknowledged path, through the generation-commit mechanism; a failed range is resumed by the next run",
  },
  {
    name: 'stream-compact',
    type: 'STANDARD',
    description:
      "Compact a lane's next run of committed ranges into one generation through the generation-commit mechanism; superseded copies go to GC after grace",
  },
  {
    // After the flows it starts: CDK substitutes their ARNs into its definition.
    name: 'stream-maintain',
    type: 'STANDARD',
    description:
      "Maintain configured stream lanes (the EventBridge schedule's target): per lane stream-materialize, then stream-compact, then stream-gc, each as a child execution",
  },
  {
    name: 'deliver-window',
    type: 'STANDARD',
    description:
      'Deliver one sealed window: custody, staging, chunked extract/load, EOF and quality gates, publish, evidence, checkpoint, cleanup and release',
    // A failed delivery is resolved by the reconcile flow (from the journal), never by a
    // blind re-run; an aborted one too: a Stop Execution can land between any two steps.
    recovery: { by: 'delivery-reconcile', on: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
  },
  {
    name: 'publish-clickhouse',
    type: 'STANDARD',
    description:
      'Publish one sealed window to ClickHouse: custody, stage, chunked extract/load, EOF, candidate, staged quality and capsule, one EXCHANGE, governed target observation, evidence, checkpoint, cleanup and release',
    // As deliver-window: a failed, timed-out or stopped publication is resolved from the
    // journal by the reconcile flow, never re-run (a re-run could never dispatch again anyway).
    recovery: { by: 'delivery-reconcile', on: ['FAILED', 'TIMED_OUT', 'ABORTED'] },
  },
  {
    name: 'quality-observe',
    type: 'STANDARD',
    description:
      "Observe a PUBLISHED ClickHouse operation whose capsule is PREPARED or TARGET_PENDING (the operator's quality observe): guide, seal, a new custody session, the bounded reader; COMPLETE, or TARGET_PENDING / FAILED / INCOMPLETE by name",
  },
  {
    name: 'quality-replay',
    type: 'STANDARD',
    description:
      "Replay a COMPLETE ClickHouse operation's governance read-only (the operator's quality replay): seal, capsule, prepared and completion evidence, continuity, authority binding, current generation, replay window; the receipt, nothing written",
  },
  {
    name: 'quality-diagnose',
    type: 'STANDARD',
    description:
      "Diagnose a governed ClickHouse operation read-only (the operator's quality diagnose): each sealed digest beside the one recomputed now, version continuity, the probes, last_error_code; nothing written",
  },
  {
    name: 'delivery-reconcile',
    type: 'STANDARD',
    description:
      'Observe the target for a delivery invocation (receipt or owned stage) and journal what it proves; started automatically when deliver-window fails',
  },
  {
    name: 'delivery-resume',
    type: 'STANDARD',
    description:
      'Finish a proved delivery invocation to CUSTODY_RELEASED (continuing a proved partial one: its unfinished parts only), never publishing twice',
  },
  {
    name: 'delivery-expire',
    type: 'STANDARD',
    description:
      "Delete finished deliveries' work objects (chunks, part plans and results) past the retention; never their evidence",
  },
  {
    name: 'delivery-retire',
    type: 'STANDARD',
    description:
      'Drop exactly the recorded owned stage of a delivery invocation, prove its absence, release custody as RETIRED',
  },
];
