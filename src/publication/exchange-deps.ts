import type { DeliveryDeps } from '../delivery/deps.js';
import type { PublicationMode } from '../delivery/publication-mode.js';
import { exchangeNamesOf, type ExchangeNames } from '../domain/publication/candidate.js';
import { ConfigError } from '../domain/errors.js';
import type { ExchangeTargetPort } from '../ports/exchange-target.js';
import type { ObserveReader, TargetReader } from '../quality/observe-reader.js';

/**
 * What the ClickHouse exchange mode (exchange-mode.ts) carries besides its behaviour: the
 * EXCHANGE side of the route's connection (candidate, the one EXCHANGE, observation by
 * UUID, the fence rename, the predecessor) and how an observation (ObserveTarget, resume's
 * observe-target, the operator's observe) builds its bounded reader — a deployed Lambda
 * forks its own bundle and resolves the binding from its secret, within its remaining
 * time (functions/quality/observe-step.ts); a local run forks the generic child entry.
 */
export interface ExchangeSides {
  exchange: ExchangeTargetPort;
  observeReader: ObserveReader;
}

/** The exchange mode: a publication mode with its sides. */
export interface ExchangeMode extends PublicationMode {
  readonly sides: ExchangeSides;
}

const isExchangeMode = (mode: PublicationMode): mode is ExchangeMode => 'sides' in mode;

/** The exchange sides of a ClickHouse route's deps; any other route reaching a publication step is a wiring bug, refused. */
function sidesOf(deps: Pick<DeliveryDeps, 'route' | 'mode'>): ExchangeSides {
  if (deps.route.route.target.mode !== 'exchange' || !isExchangeMode(deps.mode)) {
    throw new ConfigError(
      'publication.exchange_mode',
      `route ${deps.route.name} is not a ClickHouse exchange publication`,
    );
  }
  return deps.mode.sides;
}

/** The exchange port of a ClickHouse route. */
export function exchangeOf(deps: Pick<DeliveryDeps, 'route' | 'mode'>): ExchangeTargetPort {
  return sidesOf(deps).exchange;
}

/** The bounded reader an observation of a ClickHouse route runs, built now. */
export function readerOf(deps: DeliveryDeps): Promise<TargetReader> {
  return sidesOf(deps).observeReader(deps);
}

/** The deps with another observation reader (a Lambda's: its bundle, its secret, its time); a route of another mode observes nothing and is returned as is. */
export function withObserveReader<D extends Pick<DeliveryDeps, 'mode'>>(deps: D, observeReader: ObserveReader): D {
  if (!isExchangeMode(deps.mode)) return deps;
  return { ...deps, mode: { ...deps.mode, sides: { ...deps.mode.sides, observeReader } } };
}

/** The operation's ClickHouse names: target, stage, candidate, tombstone, in the target's database. */
export function namesOf(invocationId: string, deps: Pick<DeliveryDeps, 'route'>): ExchangeNames {
  const { table } = deps.route.route.target;
  return exchangeNamesOf(invocationId, { database: table.schema, table: table.name });
}
