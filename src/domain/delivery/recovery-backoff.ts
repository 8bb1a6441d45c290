import { ConfigError } from '../errors.js';

/**
 * How long an automatic recovery waits for its target (docs/operate.md "Automatic recovery"): a
 * failed delivery's reconcile first probes the target; while it is unreachable it waits —
 * exponentially longer, with jitter — and probes again, at most `attempts` probes within
 * `totalSeconds`; after the last it stops (Delivery.TargetUnreachable), the invocation
 * retained and the incident paged. Never a tight loop, never silence. Pure: the caller
 * brings the clock and the random number.
 */
export interface BackoffPolicy {
  /** Probes in all, the first one included (1–20). */
  attempts: number;
  /** The first wait (1–3600 s); each next one doubles, up to `maxWaitSeconds`. */
  firstWaitSeconds: number;
  maxWaitSeconds: number;
  /** No probe starts later than this after the first (at most 6 h: the flow's timeout holds it). */
  totalSeconds: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  attempts: 8,
  firstWaitSeconds: 30,
  maxWaitSeconds: 900,
  totalSeconds: 7200,
};
/** The longest `totalSeconds`: delivery-reconcile's TimeoutSeconds leaves room for it and the reconcile itself. */
export const MAX_BACKOFF_SECONDS = 21600;

const LIMITS: Record<keyof BackoffPolicy, [number, number]> = {
  attempts: [1, 20],
  firstWaitSeconds: [1, 3600],
  maxWaitSeconds: [1, MAX_BACKOFF_SECONDS],
  totalSeconds: [1, MAX_BACKOFF_SECONDS],
};

/**
 * A policy from its settings (the stage's `recoveryBackoff`, as an object or its JSON text);
 * unset fields keep their defaults. `delivery.recovery_backoff_invalid` names the field.
 */
export function parseBackoffPolicy(value: unknown): BackoffPolicy {
  if (value === undefined || value === '') return DEFAULT_BACKOFF;
  let given: unknown = value;
  if (typeof value === 'string') {
    try {
      given = JSON.parse(value);
    } catch {
      throw invalid('is not a JSON object');
    }
  }
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw invalid('is not an object');
  const policy = { ...DEFAULT_BACKOFF };
  for (const [key, v] of Object.entries(given)) {
    const limits = LIMITS[key as keyof BackoffPolicy];
    if (!limits) throw invalid(`has no field ${JSON.stringify(key.slice(0, 40))}`);
    if (!Number.isInteger(v) || (v as number) < limits[0] || (v as number) > limits[1])
      throw invalid(`${key} must be a whole number from ${limits[0]} to ${limits[1]}`);
    policy[key as keyof BackoffPolicy] = v as number;
  }
  if (policy.maxWaitSeconds < policy.firstWaitSeconds) throw invalid('maxWaitSeconds is below firstWaitSeconds');
  return policy;
}

/**
 * The wait before the next probe, after `probes` unreachable ones, `elapsedSeconds` after
 * the first: half the exponential step plus a random half of it (`random` in [0, 1)), so
 * recoveries of one outage spread out; undefined when no probe is left (attempts spent, or
 * the next one would start after `totalSeconds`).
 */
export function nextWaitSeconds(
  policy: BackoffPolicy,
  probes: number,
  elapsedSeconds: number,
  random: number,
): number | undefined {
  if (probes >= policy.attempts) return undefined;
  const step = Math.min(policy.maxWaitSeconds, policy.firstWaitSeconds * 2 ** Math.max(0, probes - 1));
  const wait = Math.max(1, Math.ceil(step / 2 + (random * step) / 2));
  return elapsedSeconds + wait > policy.totalSeconds ? undefined : wait;
}

function invalid(what: string): ConfigError {
  return new ConfigError('delivery.recovery_backoff_invalid', `recoveryBackoff ${what}`);
}
