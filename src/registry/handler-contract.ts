/**
 * The one handler contract: every Task handler module under functions/ exports
 * `makeHandler(needs)` and `handler` (its Lambda's, built over the Lambda's own needs). The
 * registry entry's `needs` says which of HandlerNeeds the handler uses; the local runner and
 * the cost model build every handler the same way, `makeHandler(needsFor(entry, available))`,
 * refused by name when a declared need is not available.
 */
import type { DeliveryDepsProvider } from '../delivery/deps-provider.js';
import { ConfigError } from '../domain/errors.js';
import type { Ports } from '../ports/index.js';
import type { Notifier } from '../ports/notifier.js';

/** Lambda handler shape the local runner and the Lambda runtime both call. */
export type StepHandler = (event: unknown, context?: unknown) => Promise<unknown>;

/** Everything a handler can be given; a handler takes what its registry entry's `needs` names. */
export interface HandlerNeeds {
  /** The authority table, the bucket, the clock (once per cold start in Lambda, the emulators' locally). */
  ports?: () => Promise<Ports>;
  /** A deliver-window Task's deps from its input: ports, the route's target and, for `delivery-source`, its source. */
  delivery?: DeliveryDepsProvider;
  /** Where a notifying step publishes (the incident topic on AWS). */
  notifier?: () => Promise<Notifier>;
}

/**
 * A registry entry's needs. `nothing`: it checks its input only. `ports`: HandlerNeeds.ports.
 * `ports-notifier`: ports and the notifier (the entry `notifies`). `delivery-target`: a deps
 * provider that opens the route's target (the entry reads target secrets). `delivery-source`:
 * one that opens the route's source too (the only readers of source secrets).
 */
export type Needs = 'nothing' | 'ports' | 'ports-notifier' | 'delivery-target' | 'delivery-source';

/** The HandlerNeeds fields each `needs` value hands over. */
export const NEEDS_FIELDS: Record<Needs, ReadonlyArray<keyof HandlerNeeds>> = {
  nothing: [],
  ports: ['ports'],
  'ports-notifier': ['ports', 'notifier'],
  'delivery-target': ['delivery'],
  'delivery-source': ['delivery'],
};

/** A handler module under functions/ (the one contract). */
export interface StepModule {
  makeHandler: (needs: HandlerNeeds) => StepHandler;
  handler: StepHandler;
}

/**
 * Exactly the needs an entry declares, taken from what a caller has; a declared need the
 * caller lacks is refused (Cutpoint.ConfigError, `registry.need_unavailable`, naming
 * `where`) before any handler is built.
 */
export function needsFor(
  entry: { handler: string; needs: Needs },
  available: HandlerNeeds,
  where = `functions/${entry.handler}`,
): HandlerNeeds {
  const needs: HandlerNeeds = {};
  for (const field of NEEDS_FIELDS[entry.needs]) {
    if (available[field] === undefined)
      throw new ConfigError(
        'registry.need_unavailable',
        `${where} needs ${field} (registry: functions/${entry.handler}, needs '${entry.needs}'), which was not given${field === 'delivery' ? ': pass stepDeps (a target, a source, a route)' : ''}`,
      );
    Object.assign(needs, { [field]: available[field] });
  }
  return needs;
}

/** One need a handler builder uses, refused (Cutpoint.ConfigError) when the caller did not give it. */
export function needOf<K extends keyof HandlerNeeds>(needs: HandlerNeeds, field: K): NonNullable<HandlerNeeds[K]> {
  const given = needs[field];
  if (given === undefined)
    throw new ConfigError('registry.need_missing', `a handler was built without its ${field} (HandlerNeeds.${field})`);
  return given as NonNullable<HandlerNeeds[K]>;
}
