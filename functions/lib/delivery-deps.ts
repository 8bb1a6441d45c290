import middy from '@middy/core';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { parseManifest, parseSelector, selectRoute, type SelectedRoute } from '../../src/domain/delivery/manifest.js';
import { ConfigError, ValidationError } from '../../src/domain/errors.js';
import type { StepHandler } from './step.js';

/**
 * Deps for one deliver-window Task, from the Task's input. The manifest travels in the
 * execution input (`manifestText` + `selector`, the exact text begin seals) and the flow
 * hands both to every Task: no S3 round trip, and the sealed manifest digest is checked
 * against the journal by the steps themselves, so a Task cannot be pointed at another
 * route unnoticed (`delivery.route_mismatch`).
 */
export type DeliveryDepsProvider = (event: unknown) => Promise<DeliveryDeps>;

/** A deliver-window use case: `(input, deps) => result`. */
export type DeliveryUseCase<O> = (input: unknown, deps: DeliveryDeps) => Promise<O>;

/**
 * The thin Lambda handler of one deliver-window step: middy around the use case, deps
 * from the provider (per cold start in Lambda; the embedded source/target locally). No
 * try/catch: domain errors leave with their stable `name`.
 */
export function deliveryStep<O>(useCase: DeliveryUseCase<O>) {
  return (deps: DeliveryDepsProvider): StepHandler => {
    const handler = middy<unknown, O>(async (event: unknown) => useCase(event, await deps(event)));
    return (event, context) => handler(event, (context ?? {}) as never);
  };
}

/** The route a Task input names: `{ manifestText, selector }` (`/path/route.yaml#daily`). */
export function routeOfEvent(event: unknown): SelectedRoute {
  const v = event as { manifestText?: unknown; selector?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.manifestText !== 'string' || typeof v.selector !== 'string') {
    throw new ValidationError('delivery.step_input_invalid', 'a deliver-window Task needs manifestText and selector in its input');
  }
  const selector = parseSelector(v.selector);
  return selectRoute(parseManifest(v.manifestText, selector.file), selector);
}

/**
 * Deps in a deployed Lambda. The route is resolved from the Task input; the source
 * (ClickHouse over HTTP) and the target need credentials that, per the issue, come from
 * Secrets Manager — that binding resolution is NOT built yet, so a deployed step fails
 * its cold start with a stable Cutpoint.ConfigError (`delivery.aws_bindings_unresolved`)
 * rather than running against anything fake. Local runs pass their own provider.
 */
export const lambdaDeliveryDeps: DeliveryDepsProvider = (event) =>
  Promise.resolve().then(() => {
    const route = routeOfEvent(event);
    throw new ConfigError(
      'delivery.aws_bindings_unresolved',
      `route ${route.name}: resolving the source and target bindings from Secrets Manager is not built yet; deliver-window runs locally only`,
    );
  });
