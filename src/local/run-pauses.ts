import type { AslDefinition } from './asl.js';
import { allStates } from './asl.js';

/**
 * A local run's pauses (RunFlowOptions.retryIntervalMs, else CUTPOINT_LOCAL_RETRY_MS: the
 * test suite sets 0, so a CLI run in a test retries at once): every retrier of every state
 * (nested ones too: child executions share these overrides) and every Wait state (a
 * recovery's backoff) pause `ms`; undefined keeps the ASL's own intervals and waits.
 */
export function pauseOverrides(
  definition: AslDefinition,
  ms: number | undefined,
): { retryIntervalOverrides?: Record<string, number[]>; waitTimeOverrides?: Record<string, number> } {
  if (ms === undefined) return {};
  const states = allStates(definition);
  return {
    retryIntervalOverrides: Object.fromEntries(
      states
        .filter(({ definition: s }) => s.Retry?.length)
        .map(({ state, definition: s }) => [state, s.Retry!.map(() => ms)]),
    ),
    waitTimeOverrides: Object.fromEntries(
      states.filter(({ definition: s }) => s.Type === 'Wait').map(({ state }) => [state, ms]),
    ),
  };
}
