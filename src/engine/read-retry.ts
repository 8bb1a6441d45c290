import { setTimeout as delay } from 'node:timers/promises';
import type { ClickHouseErrorClassification } from '../domain/clickhouse-errors.js';
import { CutpointError, ValidationError } from '../domain/errors.js';
import { type Clock } from '../ports/clock.js';
import { systemClock } from './system-clock.js';
import { rerunTransient } from './rerun.js';

/**
 * The opt-in bounded retry of a READ-ONLY ClickHouse observation that failed with a
 * structured Code 999 "No node" (docs/rules.md#observation-failures).
 * Off by default: without a policy there is exactly one attempt. With
 * `quality.target_observation.keeper_no_node_retry: {max_attempts, max_elapsed_ms}` (sealed in
 * the admission digest by the manifest) it retries only class KEEPER_NO_NODE, never more than
 * `max_attempts` attempts, never starting one at or after `max_elapsed_ms` from the first, and
 * never once the caller's signal (the absolute read deadline) is aborted — also not after a
 * backoff that the abort cut short. Each attempt gets that same signal. A mutation (CREATE,
 * INSERT, EXCHANGE, RENAME, DROP) or an authority write is refused before any attempt: its
 * failure is resolved by observation, never by retry (N20).
 *
 * Its caller is the bounded reader's probe worker (src/adapters/reader-process/probe-worker.ts):
 * the target observation's statements, with the policy prepared.json sealed.
 *
 * The loop is rerun.ts's `rerunTransient`, the project's one retry helper: this file adds
 * the policy (kind, class, elapsed budget, abortable backoff) and hands the loop a private
 * error name that means "retry", which never leaves this function.
 */

export type StatementKind = 'read' | 'mutation';

export interface ReadRetryPolicy {
  /** Attempts in all, first included: 1..3. */
  max_attempts: number;
  /** No attempt starts at or after this many ms from the first one's start: 1..10000. */
  max_elapsed_ms: number;
}

export const READ_RETRY_LIMITS = { maxAttempts: 3, maxElapsedMs: 10_000 } as const;

/** Waits `ms` or until `signal` aborts, whichever comes first (it may resolve or reject on abort). */
export type Sleeper = (ms: number, signal: AbortSignal) => Promise<void>;

export interface RetryTiming {
  clock: Clock;
  sleep: Sleeper;
}

const abortableSleep: Sleeper = (ms, signal) => delay(ms, undefined, { signal });

export const SYSTEM_RETRY_TIMING: RetryTiming = { clock: systemClock, sleep: abortableSleep };

/** Backoff before retry n (n = 1, 2): 100 ms, then 200 ms. */
export function readRetryBackoffMs(retry: number): number {
  return 100 * 2 ** (retry - 1);
}

type Classify = (error: unknown, options: { aborted?: boolean }) => ClickHouseErrorClassification;

const RETRY = 'Cutpoint.ReadRetry';

export async function retryRead<T>(
  kind: StatementKind,
  policy: ReadRetryPolicy | undefined,
  signal: AbortSignal,
  attempt: (signal: AbortSignal) => Promise<T>,
  classify: Classify,
  timing: RetryTiming = SYSTEM_RETRY_TIMING,
): Promise<T> {
  if (kind !== 'read') {
    throw new ValidationError(
      'cutpoint.retry_not_read_only',
      `only a read-only statement may be retried; refused kind ${JSON.stringify(String(kind))} before any attempt`,
    );
  }
  const { maxAttempts, maxElapsedMs } = boundsOf(policy);
  const startedAt = timing.clock.now().getTime();
  const elapsed = () => timing.clock.now().getTime() - startedAt;
  let lastError: unknown;
  try {
    return await rerunTransient(
      async (n) => {
        if (n > 1) await timing.sleep(readRetryBackoffMs(n - 1), signal).catch(() => undefined);
        // No attempt once the signal is aborted (also when the abort cut the backoff short),
        // nor after a backoff that overran the budget.
        if (signal.aborted) throw new Verdict(false, signal.reason);
        if (n > 1 && elapsed() >= maxElapsedMs) throw new Verdict(false, lastError);
        try {
          return await attempt(signal);
        } catch (error) {
          lastError = error;
          // The abort is checked here too, not left to `classify`: cancellation is never retried.
          const retryable =
            n < maxAttempts &&
            !signal.aborted &&
            classify(error, { aborted: signal.aborted }).errorClass === 'KEEPER_NO_NODE' &&
            elapsed() + readRetryBackoffMs(n) < maxElapsedMs;
          throw new Verdict(retryable, error);
        }
      },
      [RETRY],
      maxAttempts,
    );
  } catch (verdict) {
    // Every failure reaches the loop as a Verdict (rerunTransient reads `name`, which a thrown
    // null or string lacks); the caller gets the attempt's own error or the signal's reason.
    throw verdict instanceof Verdict ? verdict.error : verdict;
  }
}

/** What the loop is told about a failed step: retry it (name RETRY) or stop (any other name). */
class Verdict extends CutpointError {
  constructor(
    retry: boolean,
    readonly error: unknown,
  ) {
    super(
      retry ? RETRY : 'Cutpoint.ReadRetryStop',
      'cutpoint.read_retry',
      retry ? 'retrying a read-only observation' : 'not retrying',
    );
  }
}

function boundsOf(policy: ReadRetryPolicy | undefined): { maxAttempts: number; maxElapsedMs: number } {
  if (policy === undefined) return { maxAttempts: 1, maxElapsedMs: 0 };
  const { max_attempts: attempts, max_elapsed_ms: elapsed } = policy;
  const valid =
    Number.isInteger(attempts) &&
    attempts >= 1 &&
    attempts <= READ_RETRY_LIMITS.maxAttempts &&
    Number.isInteger(elapsed) &&
    elapsed >= 1 &&
    elapsed <= READ_RETRY_LIMITS.maxElapsedMs;
  if (!valid) {
    throw new ValidationError(
      'cutpoint.retry_policy_invalid',
      `a read retry policy needs max_attempts 1..${READ_RETRY_LIMITS.maxAttempts} and max_elapsed_ms 1..${READ_RETRY_LIMITS.maxElapsedMs}; nothing was attempted`,
    );
  }
  return { maxAttempts: attempts, maxElapsedMs: elapsed };
}
