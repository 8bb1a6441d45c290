import { allStates, type AslDefinition } from '../local/asl.js';
import type { ExecutionOutcome } from '../telemetry/metric-names.js';

/** One Fail state of a flow and the error names an execution ending there carries. */
export interface DesignedStop {
  state: string;
  errors: string[];
}

/**
 * The Fail states of a flow, each with the error names it ends with: its `Error`, and for a
 * Fail state that passes a caught error on (`ErrorPath`), the `ErrorEquals` of every Catch
 * that leads to it. Read from the ASL itself, so the list cannot drift from the flow.
 */
export function designedStopsByState(definition: AslDefinition): DesignedStop[] {
  const states = allStates(definition);
  const stops: DesignedStop[] = [];
  for (const { state, definition: s } of states) {
    if (s.Type !== 'Fail') continue;
    const errors = new Set<string>();
    if (typeof s.Error === 'string') errors.add(s.Error);
    if (typeof s.ErrorPath === 'string') {
      for (const { definition: from } of states)
        for (const c of from.Catch ?? []) if (c.Next === state) c.ErrorEquals.forEach((e) => errors.add(e));
    }
    stops.push({ state, errors: [...errors].sort() });
  }
  return stops;
}

/**
 * The error names a flow ends with on purpose: those of every Fail state
 * (designedStopsByState). Infra passes them to the recovery dispatcher.
 */
export function designedStopErrors(definition: AslDefinition): string[] {
  return [...new Set(designedStopsByState(definition).flatMap((s) => s.errors))].sort();
}

/** Terminal statuses of a STANDARD execution, as its status-change event names them. */
export const TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/**
 * How an execution ended (the ExecutionOutcome metric): a FAILED one with a designed error
 * is a designed stop — unless the execution is a recovery and the error is one of
 * `pagingStops` (src/recovery/recovery-stops.ts: the caller passes them only for a
 * recovery execution), then it is `recovery-stopped`, a failure someone must act on.
 */
export function executionOutcome(
  status: TerminalStatus,
  error: string | undefined,
  designedStops: readonly string[],
  pagingStops: readonly string[] = [],
): ExecutionOutcome {
  switch (status) {
    case 'SUCCEEDED':
      return 'succeeded';
    case 'TIMED_OUT':
      return 'timed-out';
    case 'ABORTED':
      return 'aborted';
    case 'FAILED':
      if (error === undefined || !designedStops.includes(error)) return 'failed';
      return pagingStops.includes(error) ? 'recovery-stopped' : 'designed-stop';
  }
}
