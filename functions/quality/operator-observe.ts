import { fileURLToPath } from 'node:url';
import { serveIfReaderChild } from '../../src/adapters/reader-process/serve.js';
import { executionInputFirst } from '../../src/engine/flow-input.js';
import * as probeWorker from '../../src/adapters/reader-process/probe-worker.js';
import { operatorInputFirst, operatorObserveStep } from '../../src/quality/steps/operator-observe.js';
import { lambdaSecrets, lambdaTargetDeps } from '../lib/delivery-deps.js';
import { PROBE_WORKER_KEY, readerStep, type ObserveStepOptions } from './observe-step.js';

// Re-run as the bounded reader's child (CUTPOINT_READER_CHILD=1), this same bundle serves the probe worker.
serveIfReaderChild({ [PROBE_WORKER_KEY]: probeWorker });

/** The quality-observe flow's step: the operator's observation, its execution input (against the flow's fields) and its input checked before the manifest or a secret is read. */
const operatorStep = (options: ObserveStepOptions) =>
  readerStep(operatorObserveStep, options, (deps) => executionInputFirst(operatorInputFirst(deps)));
export const makeHandler = operatorStep({});
export const handler = operatorStep({ childEntry: fileURLToPath(import.meta.url), secrets: lambdaSecrets })({
  delivery: lambdaTargetDeps,
});
