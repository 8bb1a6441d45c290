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
