import type { DeliveryDeps } from '../delivery/deps.js';
import { exchangeNamesOf, type ExchangeNames } from '../domain/publication/candidate.js';
import { ConfigError } from '../domain/errors.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';

/** The exchange port of a ClickHouse route; any other route reaching a publication step is a wiring bug, refused. */
export function exchangeOf(deps: DeliveryDeps): ExchangeTargetPort {
  if (deps.route.route.target.mode !== 'exchange' || !deps.exchange) {
    throw new ConfigError(
      'publication.exchange_mode',
      `route ${deps.route.name} is not a ClickHouse exchange publication`,
    );
  }
  return deps.exchange;
}

/** The operation's ClickHouse names: target, stage, candidate, tombstone, in the target's database. */
export function namesOf(invocationId: string, deps: Pick<DeliveryDeps, 'route'>): ExchangeNames {
  const { table } = deps.route.route.target;
  return exchangeNamesOf(invocationId, { database: table.schema, table: table.name });
}
