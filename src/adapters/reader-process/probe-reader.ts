import type { BoundedReader } from '../../ports/bounded-reader.js';
import { processEntry } from '../../local/process-entry.js';
import { processBoundedReader, type BoundedReaderOptions } from './runner.js';

/** The worker module the generic child entry imports: probe-worker.ts beside this module, or the CLI bundle's (processEntry). */
export const PROBE_WORKER_ENTRY = processEntry(import.meta.url, 'probe-worker');

/** Where the reader child comes from: a Lambda bundle passes its own file and the key it serves the worker under (runner.ts). */
export interface ProbeReaderSource {
  childEntry?: string;
  entry?: string;
}

/**
 * The target observation's bounded reader (src/quality/observe-reader.ts `targetReaderOf`
 * takes it from the composition root): the probe worker (probe-worker.ts) in a forked,
 * killable child — by default the generic child entry importing the worker module beside
 * this one; a deployed Lambda forks its own bundle instead.
 */
export function probeReader(source: ProbeReaderSource = {}) {
  return (options: Omit<BoundedReaderOptions, 'entry' | 'childEntry'>): BoundedReader =>
    processBoundedReader({
      ...options,
      entry: source.entry ?? PROBE_WORKER_ENTRY,
      ...(source.childEntry ? { childEntry: source.childEntry } : {}),
    });
}
