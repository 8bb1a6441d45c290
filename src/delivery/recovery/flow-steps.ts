import { invocationIdOfRun, validateInvocationId, type RecoveryProjection } from '../../domain/delivery/identifiers.js';
import { JournalUnavailableError, type JournalState } from '../../domain/delivery/journal-states.js';
import { assertConfirmed, type LiveAction } from '../../domain/delivery/action-guide.js';
import { ValidationError } from '../../domain/errors.js';
import type { Ports } from '../../ports/index.js';
import type { DeliveryDeps } from '../deps.js';
import { inspectInvocation } from '../journal/listing.js';
import { LIVE_ACTION_RUNNERS } from './actions.js';
import type { PlanOutput } from '../steps/plan-parts.js';
import { RecoveryRetainedError, type RecoveryDeps, type RecoveryInput } from './recovery-session.js';

/**
 * The recovery flows' steps (statemachines/delivery-{reconcile,resume,retire}.asl.json):
 * the same use cases the CLI runs, shaped for a Choice state. A retained outcome
 * (RecoveryRetainedError: the state is journaled, custody kept) is an answer the flow
 * routes on, not a Lambda failure; every refusal (confirmation, id, journal, permitted
 * action, sealed authority) still throws with its stable name, so the flow fails with it.
 */

/** Execution input of a recovery flow: what the operator would type, with `yes` for --yes. */
export interface RecoveryFlowInput {
  invocationId: string;
  manifestText: string;
  selector: string;
  yes: boolean;
}

export interface RecoveryFlowOutput {
  action: LiveAction;
  invocationId: string;
  /** The journal state after the action. */
  state: JournalState;
  /** True when the action ended short of its goal with custody retained. */
  retained: boolean;
  diagnostic_code: string;
  /** Why it was retained (never journal content or a credential). */
  reason?: string;
  projection: RecoveryProjection;
  /**
   * Resume from a continuable PARTIAL_PROVED handed the unfinished parts to the flow
   * (continue.ts `handPartsToMap`): the carried state and the plan, which the flow's
   * ContinueParts Map and VerifyEof take as `$.delivery`, as deliver-window's take PlanParts'.
   */
  delivery?: PlanOutput;
}

/** What the automatic reconcile works on: the failed deliver-window's request, and what the journal says. */
export interface FailedDeliveryInspection extends RecoveryFlowInput {
  recoveryOf: string;
  /** False when the delivery was refused before begin journaled anything: nothing to reconcile. */
  journaled: boolean;
  inspection?: RecoveryProjection & { reconcile_permitted: boolean };
}

/**
 * The automatic reconcile's first step (read-only, no database connection): from the
 * failed deliver-window execution's input (`original`) and ARN (`recoveryOf`), the
 * invocation it ran — its own invocationId, or the one Begin derived from the execution
 * ARN — and that invocation's projection. The output is the reconcile request itself, so
 * the flow's Reconcile step reads the same fields whether an operator or the rule started
 * it. No journal for the invocation is an answer (`journaled: false`), not a failure; a
 * journal that cannot be read still fails.
 */
export async function inspectFailedDelivery(input: unknown, ports: Ports): Promise<FailedDeliveryInspection> {
  const v = (input ?? {}) as { original?: Record<string, unknown>; recoveryOf?: unknown };
  const original = v.original ?? {};
  if (
    typeof v.recoveryOf !== 'string' ||
    typeof original.manifestText !== 'string' ||
    typeof original.selector !== 'string'
  ) {
    throw new ValidationError(
      'delivery.step_input_invalid',
      'the automatic reconcile needs the failed execution (recoveryOf) and its input (manifestText, selector)',
    );
  }
  const invocationId = invocationIdOfRun(original.invocationId, v.recoveryOf);
  const request = {
    invocationId,
    manifestText: original.manifestText,
    selector: original.selector,
    yes: true,
    recoveryOf: v.recoveryOf,
  };
  try {
    const projection = await inspectInvocation(ports, invocationId);
    return {
      ...request,
      journaled: true,
      inspection: { ...projection, reconcile_permitted: projection.permitted_actions.includes('reconcile') },
    };
  } catch (error) {
    if (error instanceof JournalUnavailableError && error.missing) return { ...request, journaled: false };
    throw error;
  }
}

/**
 * A recovery flow's own input, checked in this order: confirmation first (docs/rules.md#recovery-actions:
 * a missing confirmation is refused with delivery.recovery_confirmation_required before the
 * manifest is loaded), then the invocation id and the presence of manifest and selector.
 */
export function parseRecoveryFlowInput(action: LiveAction, input: unknown): RecoveryInput {
  const v = (input ?? {}) as Partial<Record<keyof RecoveryFlowInput, unknown>>;
  assertConfirmed(action, v.yes === true);
  const invocationId = validateInvocationId(v.invocationId);
  if (typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError(
      'delivery.step_input_invalid',
      `a ${action} flow needs invocationId, manifestText, selector and yes: true in its input`,
    );
  }
  return { invocationId, manifestText: v.manifestText, selector: v.selector };
}

/**
 * The deps provider of a recovery step, behind its input check: the provider parses the
 * manifest and (on AWS) reads the bindings' secrets, so a flow started directly without
 * `yes: true` (or with a malformed id) is refused before either. The flows also refuse a
 * missing `yes` in their first state (statemachines/delivery-*.asl.json); this holds for
 * the Lambda invoked any other way.
 */
export function recoveryInputFirst(
  action: LiveAction,
  provider: (event: unknown) => Promise<DeliveryDeps>,
): (event: unknown) => Promise<DeliveryDeps> {
  return async (event) => {
    parseRecoveryFlowInput(action, event);
    return provider(event);
  };
}

/** The step for one live action. Confirmation is checked before the input is even parsed further. */
export function recoveryFlowStep(action: LiveAction) {
  return async (input: unknown, deps: DeliveryDeps): Promise<RecoveryFlowOutput> => {
    const recoveryInput = parseRecoveryFlowInput(action, input);
    const { invocationId } = recoveryInput;
    // Source-free: whatever the provider built, recovery never gets the source. Resume's
    // continue of a PARTIAL_PROVED (continue.ts) hands the unfinished parts to the flow's
    // Map, whose part Tasks read them. The publication mode passes on (a ClickHouse route's
    // resume observes PUBLISHED).
    const { ports, target, route, mode, faults } = deps;
    const recoveryDeps: RecoveryDeps = {
      ports,
      target,
      route,
      mode,
      ...(faults ? { faults } : {}),
      ...(action === 'resume' ? { extract: { map: true } } : {}),
    };
    try {
      const result = await LIVE_ACTION_RUNNERS[action](recoveryInput, recoveryDeps);
      return {
        action,
        invocationId,
        state: result.state,
        retained: false,
        diagnostic_code: result.projection.diagnostic_code,
        projection: result.projection,
        ...(result.continueOnMap ? { delivery: result.continueOnMap } : {}),
      };
    } catch (error) {
      if (!(error instanceof RecoveryRetainedError)) throw error;
      const projection = await inspectInvocation(deps.ports, invocationId);
      return {
        action,
        invocationId,
        state: projection.state,
        retained: true,
        diagnostic_code: error.code,
        reason: error.message,
        projection,
      };
    }
  };
}
