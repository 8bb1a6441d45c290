/** What a registry flow is: one state machine, statemachines/<name>.asl.json. */
export interface FlowEntry {
  /** Flow name: the ASL file is statemachines/<name>.asl.json. */
  name: string;
  type: 'STANDARD' | 'EXPRESS';
  description: string;
  /**
   * STANDARD only: the recovery dispatcher (infra/recovery-dispatch.ts,
   * src/recovery/dispatch.ts) starts flow `by`, once, when an execution of this flow ends
   * in one of `on`, with input `{recoveryOf, originalInput}` (the ASL of `by` must
   * unwrap it). `by` may be the flow itself (a re-run idempotent by exact identity) or a
   * recovery flow that only observes. `by` must classify its designed stops in
   * src/recovery/recovery-stops.ts: a recovery that stops for an operator pages.
   */
  recovery?: { by: string; on: ReadonlyArray<'FAILED' | 'TIMED_OUT' | 'ABORTED'> };
  // The fields an execution input may carry: src/engine/flow-input-fields.ts FLOW_INPUTS,
  // which the first Tasks' Lambdas load without this registry.
}
