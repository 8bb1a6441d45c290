import { allStates, type AslDefinition } from '../local/asl.js';
import type { ExecutionOutcome } from '../telemetry/metric-names.js';

/**
 * The error names a flow ends with on purpose: every Fail state's `Error`, and for a Fail
 * state that passes a caught error on (`ErrorPath`), the `ErrorEquals` of every Catch that
 * leads to it. Read from the ASL itself (infra passes them to the recovery dispatcher), so
 * the list cannot drift from the flow.
 */
export function designedStopErrors(definition: AslDefinition): string[] {
  const states = allStates(definition);
  const names = new Set<string>();
  for (const { state, definition: s } of states) {
    if (s.Type !== 'Fail') continue;
    if (typeof s.Error === 'string') names.add(s.Error);
    if (typeof s.ErrorPath === 'string') {
      for (const { definition: from } of states) for (const c of from.Catch ?? []) if (c.Next === state) c.ErrorEquals.forEach((e) => names.add(e));
    }
  }
  return [...names].sort();
}

/** Terminal statuses of a STANDARD execution, as its status-change event names them. */
export const TERMINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/** How an execution ended (the ExecutionOutcome metric): a FAILED one with a designed error is a designed stop. */
export function executionOutcome(status: TerminalStatus, error: string | undefined, designedStops: readonly string[]): ExecutionOutcome {
  switch (status) {
    case 'SUCCEEDED':
      return 'succeeded';
    case 'TIMED_OUT':
      return 'timed-out';
    case 'ABORTED':
      return 'aborted';
    case 'FAILED':
      return error !== undefined && designedStops.includes(error) ? 'designed-stop' : 'failed';
  }
}
