import { CutpointError } from '../errors.js';

/** The delivery source's errors (src/ports/source.ts): each a stable `name` and diagnostic code. */

/** A source call while the fence is armed: recovery must never open ClickHouse. */
export class SourceForbiddenError extends CutpointError {
  readonly method: string;
  constructor(method: string) {
    super(
      'Delivery.SourceForbidden',
      'delivery.source_forbidden',
      `source ${method} refused: recovery never reads the source`,
    );
    this.method = method;
  }
}

/** The source could not be reached, refused the query, or broke off mid-stream. */
export class SourceUnavailableError extends CutpointError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super('Delivery.SourceUnavailable', 'delivery.source_unavailable', detail, options);
  }
}
