import {
  childFlowPlaceholderOf,
  flowPlaceholder,
  loadAsl,
  nestedMachines,
  type AslDefinition,
} from '../../src/local/asl.js';
import type { AslState } from '../../statemachines/spec/task.js';
import { FLOWS } from '../../src/registry/index.js';

/**
 * The worst case of a flow's Tasks, the model the execution TimeoutSeconds of every ASL is
 * derived from (and checked against, test/statemachines/asl.test.ts):
 * - a Lambda Task tries once plus every retrier's MaxAttempts (each retrier has its own
 *   counter, so different errors exhaust them in turn), each try bounded by the Task's
 *   TimeoutSeconds, plus each retrier's longest backoff (MaxDelaySeconds caps a delay; FULL
 *   jitter only shortens it). A throttled try (Lambda.TooManyRequestsException) never ran
 *   the function: it costs its backoff, not a Task timeout;
 * - a Task that starts another flow (.sync:2) waits at most the child's own execution
 *   TimeoutSeconds (or its own, when shorter); its retries are refused starts (backoff);
 * - a Map counts its ItemProcessor's worst path once (one wave: every item at once, up to
 *   its concurrency), a Parallel its longest branch;
 * - along the longest path from StartAt (Next, Default, Choices, Catch), each state at most
 *   once: a loop (a Choice back to a Task) is not followed round. The flow's Comment says
 *   what multiplies this (loop bounds, waves of a Map).
 */
export function flowWorstSeconds(definition: AslDefinition): number {
  return longestFrom(definition, definition.StartAt, new Set());
}

function longestFrom(machine: AslDefinition, name: string, seen: ReadonlySet<string>): number {
  const state = machine.States[name];
  if (!state || seen.has(name)) return 0;
  const next = new Set(
    [
      state.Next as string | undefined,
      state.Default as string | undefined,
      ...((state.Choices as Array<{ Next?: string }> | undefined) ?? []).map((c) => c.Next),
      ...(state.Catch ?? []).map((c) => c.Next),
    ].filter((n): n is string => typeof n === 'string'),
  );
  const inner = new Set([...seen, name]);
  return stateWorstSeconds(state) + Math.max(0, ...[...next].map((n) => longestFrom(machine, n, inner)));
}

function stateWorstSeconds(state: AslState): number {
  if (state.Type === 'Task') return taskWorstSeconds(state);
  const nested = nestedMachines(state).map(flowWorstSeconds);
  return Math.max(0, ...nested);
}

const THROTTLE = 'Lambda.TooManyRequestsException';

export function taskWorstSeconds(state: AslState): number {
  const timeout = (state.TimeoutSeconds as number | undefined) ?? Number.POSITIVE_INFINITY;
  const retriers = state.Retry ?? [];
  const backoff = retriers.reduce((sum, r) => sum + backoffSeconds(r), 0);
  const child = childFlowPlaceholderOf(state);
  if (child) {
    const flow = FLOWS.find((f) => flowPlaceholder(f.name) === child);
    const childTimeout = flow
      ? ((loadAsl(flow.name).TimeoutSeconds as number | undefined) ?? Number.POSITIVE_INFINITY)
      : Number.POSITIVE_INFINITY;
    return Math.min(timeout, childTimeout) + backoff;
  }
  const tries =
    1 +
    retriers
      .filter((r) => !(r.ErrorEquals.length === 1 && r.ErrorEquals[0] === THROTTLE))
      .reduce((sum, r) => sum + maxAttempts(r), 0);
  return tries * timeout + backoff;
}

function maxAttempts(r: { [field: string]: unknown }): number {
  return (r.MaxAttempts as number | undefined) ?? 3;
}

/** The longest total wait of one retrier: each delay IntervalSeconds × BackoffRate^i, capped by MaxDelaySeconds. */
export function backoffSeconds(r: { [field: string]: unknown }): number {
  const interval = (r.IntervalSeconds as number | undefined) ?? 1;
  const rate = (r.BackoffRate as number | undefined) ?? 2;
  const cap = (r.MaxDelaySeconds as number | undefined) ?? Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let i = 0; i < maxAttempts(r); i++) sum += Math.min(interval * rate ** i, cap);
  return sum;
}
