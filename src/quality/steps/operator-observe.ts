import type { DeliveryDeps } from '../../delivery/deps.js';
import { validateInvocationId } from '../../domain/delivery/identifiers.js';
import { ValidationError } from '../../domain/errors.js';
import { QualityConfirmationRequiredError } from '../../domain/quality/errors.js';
import { exchangeOf, readerOf } from '../../publication/exchange-deps.js';
import { operatorObserve, type ObservedProjection, type OperatorObserveInput } from '../operator-observe.js';

/**
 * The quality-observe flow's step (statemachines/quality-observe.asl.json): the operator's
 * `cutpoint quality observe <id> --manifest F#R --yes` as a Lambda
 * (docs/rules.md#quality-commands) — the same use case (src/quality/operator-observe.ts), so
 * the same refusals in the same order. COMPLETE returns the projection with the observation;
 * TARGET_PENDING, FAILED and INCOMPLETE leave as Quality.TargetPending / Quality.Failed /
 * Quality.Incomplete for the flow to route on.
 */

/** Execution input of quality-observe: what the operator would type, with `yes` for --yes. */
export interface OperatorObserveFlowInput {
  invocationId: string;
  manifestText: string;
  selector: string;
  yes: boolean;
}

/** Confirmation first (nothing parsed, no secret read), then the id, the manifest text and the selector. */
export function parseOperatorObserveInput(input: unknown): OperatorObserveInput {
  const v = (input ?? {}) as Partial<Record<keyof OperatorObserveFlowInput, unknown>>;
  if (v.yes !== true) throw new QualityConfirmationRequiredError('observe');
  const invocationId = validateInvocationId(v.invocationId);
  if (typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError(
      'quality.step_input_invalid',
      'a quality-observe flow needs invocationId, manifestText, selector and yes: true in its input',
    );
  }
  return { invocationId, manifestText: v.manifestText, selector: v.selector };
}

/** A deps provider behind the input check: a flow started without `yes: true` reads no manifest and no secret. */
export function operatorInputFirst(
  provider: (event: unknown) => Promise<DeliveryDeps>,
): (event: unknown) => Promise<DeliveryDeps> {
  return async (event) => {
    parseOperatorObserveInput(event);
    return provider(event);
  };
}

export async function operatorObserveStep(input: unknown, deps: DeliveryDeps): Promise<ObservedProjection> {
  const parsed = parseOperatorObserveInput(input);
  const exchange = exchangeOf(deps);
  const reader = await readerOf(deps);
  return operatorObserve(parsed, { ports: deps.ports, target: deps.target, exchange, route: deps.route, reader });
}
