import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { nextWaitSeconds, parseBackoffPolicy } from '../../domain/delivery/recovery-backoff.js';
import { TargetUnavailableError } from '../../domain/delivery/target-errors.js';
import { ValidationError } from '../../domain/errors.js';
import type { DeliveryDeps } from '../deps.js';
import { inspectCommand } from './inspect-command.js';

/** Where an automatic reconcile stands in its wait for the target (carried as `$.backoff`). */
export interface TargetProbe {
  /** Probes made so far. */
  probes: number;
  /** When the first probe ran (ISO-8601). */
  startedAt?: string;
  reachable: boolean;
  /** Seconds to wait before the next probe (neither reachable nor given up). */
  waitSeconds: number;
  gaveUp: boolean;
  /** The last failed probe's diagnostic code, never its message (which may name a host). */
  lastError?: string;
  /** Why the recovery stopped waiting: the execution's cause. */
  reason?: string;
}

/**
 * ProbeTarget, the automatic reconcile's gate (docs/operate.md "Automatic recovery"): asks the
 * route's target what it is (read-only: `identity()`, no custody, nothing journaled).
 * Reachable: reconcile now. Unreachable (Cutpoint.TargetUnavailable): wait as the backoff
 * policy says (CUTPOINT_RECOVERY_BACKOFF, the stage's `recoveryBackoff`) and probe again, or,
 * with no probe left, give up: the flow stops at TargetUnreachable, which pages, and the
 * invocation keeps its state and custody for an operator. Any other error is the step's.
 */
export async function probeTarget(input: unknown, deps: DeliveryDeps): Promise<TargetProbe> {
  const { invocationId, before } = parseProbeInput(input);
  const probes = before.probes ?? 0;
  const { startedAt: given } = before;
  const policy = parseBackoffPolicy(process.env.CUTPOINT_RECOVERY_BACKOFF);
  const now = deps.ports.clock.now();
  const startedAt = typeof given === 'string' ? given : now.toISOString();
  const done = probes + 1;
  try {
    await deps.target.identity();
    return { probes: done, startedAt, reachable: true, waitSeconds: 0, gaveUp: false };
  } catch (error) {
    if (!(error instanceof TargetUnavailableError)) throw error;
    const elapsed = Math.max(0, (now.getTime() - Date.parse(startedAt)) / 1000);
    const wait = nextWaitSeconds(policy, done, elapsed, Math.random());
    const probe = { probes: done, startedAt, reachable: false, lastError: error.code };
    if (wait !== undefined) return { ...probe, waitSeconds: wait, gaveUp: false };
    return {
      ...probe,
      waitSeconds: 0,
      gaveUp: true,
      reason: `the target stayed unreachable (${error.code}) through ${done} probe(s) over ${Math.round(elapsed)} s; invocation ${invocationId} keeps its state and custody: ${inspectCommand(invocationId, true)}, then reconcile once the target is back`,
    };
  }
}

type ProbeInput = { invocationId?: unknown; manifestText?: unknown; selector?: unknown; backoff?: unknown };

/**
 * ProbeTarget's input, checked before the deps provider parses the manifest or reads a
 * secret: the invocation, its manifest and selector, and the backoff so far. No
 * confirmation: the probe only reads, and it runs only in the dispatcher's reconcile.
 */
function parseProbeInput(input: unknown): {
  invocationId: string;
  before: { probes?: number; startedAt?: string };
} {
  const v = (input ?? {}) as ProbeInput;
  const invocationId = validateInvocationId(v.invocationId);
  const before = (v.backoff ?? {}) as { probes?: unknown; startedAt?: unknown };
  const { probes, startedAt } = before;
  if (
    typeof v.manifestText !== 'string' ||
    typeof v.selector !== 'string' ||
    typeof before !== 'object' ||
    (probes !== undefined && (!Number.isSafeInteger(probes) || (probes as number) < 0)) ||
    (startedAt !== undefined && (typeof startedAt !== 'string' || Number.isNaN(Date.parse(startedAt))))
  )
    throw new ValidationError(
      'delivery.step_input_invalid',
      'ProbeTarget needs invocationId, manifestText, selector and backoff {probes, startedAt?}',
    );
  return { invocationId, before: before as { probes?: number; startedAt?: string } };
}

/** The deps provider of ProbeTarget, behind its input check. */
export function probeInputFirst(
  provider: (event: unknown) => Promise<DeliveryDeps>,
): (event: unknown) => Promise<DeliveryDeps> {
  return async (event) => {
    parseProbeInput(event);
    return provider(event);
  };
}
