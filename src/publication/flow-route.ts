import type { DeliveryDeps } from '../delivery/deps.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import { ValidationError } from '../domain/errors.js';

/**
 * Which flow publishes which route (docs/rules.md#exchange-publication): a ClickHouse route
 * (`mode: exchange`) only by publish-clickhouse, every SQL route only by deliver-window. Both
 * flows share the Begin step; the flow's name reaches it as a static Task parameter (`flow`,
 * next to the execution input, which cannot forge it), and Begin refuses a route of the other
 * kind BEFORE custody is taken or anything is written. A Begin called without a flow
 * (in-process callers pick their steps themselves) is not checked here.
 *
 * Stable codes (Cutpoint.ValidationError, nothing mutated):
 * - `delivery.exchange_route_refused` — deliver-window given a `mode: exchange` route;
 * - `publication.sql_route_refused` — publish-clickhouse given a route that is not `mode: exchange`;
 * - `delivery.step_input_invalid` — a `flow` parameter naming neither.
 */

export const EXCHANGE_FLOW = 'publish-clickhouse';
export const SQL_FLOW = 'deliver-window';

/** The flow a Begin Task names (`{ executionInput, execution, flow }`); undefined outside a flow. */
export function flowOfTask(input: unknown): string | undefined {
  const v = input as { executionInput?: unknown; flow?: unknown } | null;
  if (!v || typeof v !== 'object' || v.executionInput === undefined || v.flow === undefined) return undefined;
  if (v.flow !== EXCHANGE_FLOW && v.flow !== SQL_FLOW)
    throw new ValidationError('delivery.step_input_invalid', 'the Begin Task names an unknown flow');
  return v.flow;
}

export function assertFlowRoute(flow: string | undefined, route: SelectedRoute): void {
  if (flow === undefined) return;
  const exchange = route.route.target.mode === 'exchange';
  if (flow === SQL_FLOW && exchange) {
    throw new ValidationError(
      'delivery.exchange_route_refused',
      `route ${route.name} publishes to ClickHouse by EXCHANGE (mode exchange): run the ${EXCHANGE_FLOW} flow; nothing was written`,
    );
  }
  if (flow === EXCHANGE_FLOW && !exchange) {
    throw new ValidationError(
      'publication.sql_route_refused',
      `route ${route.name} is not a ClickHouse exchange publication (mode ${route.route.target.mode}): run the ${SQL_FLOW} flow; nothing was written`,
    );
  }
}

/** A Begin use case behind the flow/route check: the refusal comes before the step runs at all. */
export function refusingOtherRoutes<O>(
  step: (input: unknown, deps: DeliveryDeps) => Promise<O>,
): (input: unknown, deps: DeliveryDeps) => Promise<O> {
  return (input, deps) => {
    assertFlowRoute(flowOfTask(input), deps.route);
    return step(input, deps);
  };
}
