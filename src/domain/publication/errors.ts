import { CutpointError } from '../errors.js';

/** The errors of a ClickHouse EXCHANGE publication: each a stable `name` and diagnostic code. */

/** The target database cannot EXCHANGE atomically (engine other than Atomic or Shared). Nothing was mutated. */
export class ExchangeUnsupportedError extends CutpointError {
  constructor(detail: string) {
    super('Publication.ExchangeUnsupported', 'publication.exchange_unsupported', detail);
  }
}

/** A read of the target's catalog or tables failed or was not visible: nothing is concluded from it. */
export class ObservationFailedError extends CutpointError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('Publication.ObservationFailed', 'publication.observation_failed', detail, options);
  }
}

/** The stage or candidate does not hold what the journal proved: nothing was published. */
export class CandidateMismatchError extends CutpointError {
  constructor(detail: string) {
    super('Publication.CandidateMismatch', 'publication.candidate_mismatch', detail);
  }
}

/** Database engines whose EXCHANGE TABLES is one atomic rename (ClickHouse docs); all others are refused. */
export const EXCHANGE_ENGINES: ReadonlySet<string> = new Set(['Atomic', 'Shared']);

/**
 * Begin's refusal (docs/rules.md#exchange-publication): the target database must exist and be Atomic or
 * Shared. Measured on chdb 26.7.2.1: `CREATE DATABASE` makes Atomic; chdb's own `default`
 * database is `Overlay` (refused here although its EXCHANGE happened to work); a Memory
 * database answers EXCHANGE with Code 48 NOT_IMPLEMENTED.
 */
export function assertExchangeEngine(database: string, engine: string | undefined): void {
  if (engine === undefined)
    throw new ExchangeUnsupportedError(`database ${database} does not exist or is not visible: nothing was mutated`);
  if (!EXCHANGE_ENGINES.has(engine))
    throw new ExchangeUnsupportedError(
      `database ${database} has engine ${engine}; EXCHANGE publication needs Atomic or Shared: nothing was mutated`,
    );
}
