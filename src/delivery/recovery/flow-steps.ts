import { validateInvocationId, type RecoveryProjection } from '../../domain/delivery/identifiers.js';
import { assertConfirmed, type JournalState, type LiveAction } from '../../domain/delivery/journal-states.js';
import { ValidationError } from '../../domain/errors.js';
import type { Ports } from '../../ports/index.js';
import type { DeliveryDeps } from '../deps.js';
import { inspectInvocation } from '../journal-store.js';
import { RECOVERY_ACTIONS } from './actions.js';
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
}

/** `inspect` for a flow: the projection plus whether `reconcile` is the safe next action. Read-only. */
export async function inspectForFlow(input: unknown, ports: Ports): Promise<RecoveryProjection & { reconcile_permitted: boolean }> {
  const v = input as { invocationId?: unknown } | null;
  const projection = await inspectInvocation(ports, v && typeof v === 'object' ? v.invocationId : undefined);
  return { ...projection, reconcile_permitted: projection.permitted_actions.includes('reconcile') };
}

/** The step for one live action. Confirmation is checked before the input is even parsed further. */
export function recoveryFlowStep(action: LiveAction) {
  return async (input: unknown, deps: DeliveryDeps): Promise<RecoveryFlowOutput> => {
    const v = (input ?? {}) as Partial<Record<keyof RecoveryFlowInput, unknown>>;
    assertConfirmed(action, v.yes === true);
    const invocationId = validateInvocationId(v.invocationId);
    if (typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
      throw new ValidationError('delivery.step_input_invalid', `a ${action} flow needs invocationId, manifestText, selector and yes: true in its input`);
    }
    const recoveryInput: RecoveryInput = { invocationId, manifestText: v.manifestText, selector: v.selector };
    // Source-free: whatever the provider built, recovery never gets the source.
    const recoveryDeps: RecoveryDeps = { ports: deps.ports, target: deps.target, route: deps.route };
    try {
      const result = await RECOVERY_ACTIONS[action](recoveryInput, recoveryDeps);
      return { action, invocationId, state: result.state, retained: false, diagnostic_code: result.projection.diagnostic_code, projection: result.projection };
    } catch (error) {
      if (!(error instanceof RecoveryRetainedError)) throw error;
      const projection = await inspectInvocation(deps.ports, invocationId);
      return { action, invocationId, state: projection.state, retained: true, diagnostic_code: error.code, reason: error.message, projection };
    }
  };
}
