import { probeReader } from '../../src/adapters/reader-process/probe-reader.js';
import type { ExchangeTargetPort } from '../../src/ports/exchange-target.js';
import { exchangeMode } from '../../src/publication/exchange-mode.js';
import type { ExchangeMode } from '../../src/publication/exchange-deps.js';
import { targetReaderOf, type ObserveReader } from '../../src/quality/observe-reader.js';

/** The local observation reader, as the CLI builds it: the generic child entry, the target binding from the environment. */
export const localReader: ObserveReader = (d) => targetReaderOf(d, probeReader());

/** A ClickHouse route's publication mode over a world's EXCHANGE side, observing with `observeReader` (default the local one). */
export function exchangeModeOver(
  exchange: ExchangeTargetPort,
  observeReader: ObserveReader = localReader,
): ExchangeMode {
  return exchangeMode({ exchange, observeReader });
}
