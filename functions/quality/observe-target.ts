import { fileURLToPath } from 'node:url';
import { serveIfReaderChild } from '../../src/adapters/reader-process/serve.js';
import * as probeWorker from '../../src/adapters/reader-process/probe-worker.js';
import { lambdaSecrets, lambdaTargetDeps } from '../lib/delivery-deps.js';
import { observeStep, PROBE_WORKER_KEY } from './observe-step.js';

// Re-run as the bounded reader's child (CUTPOINT_READER_CHILD=1), this same bundle serves the probe worker.
serveIfReaderChild({ [PROBE_WORKER_KEY]: probeWorker });

export const makeHandler = observeStep();
export const handler = observeStep({ childEntry: fileURLToPath(import.meta.url), secrets: lambdaSecrets })({
  delivery: lambdaTargetDeps,
});
