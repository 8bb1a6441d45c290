import { fileURLToPath } from 'node:url';
import { serveIfReaderChild } from '../../src/adapters/reader-process/serve.js';
import { executionInputFirst } from '../../src/engine/flow-input.js';
import { recoveryFlowStep, recoveryInputFirst } from '../../src/delivery/recovery/flow-steps.js';
import * as probeWorker from '../../src/adapters/reader-process/probe-worker.js';
import { lambdaSecrets, lambdaTargetDeps } from '../lib/delivery-deps.js';
import { PROBE_WORKER_KEY, readerStep, type ObserveStepOptions } from '../quality/observe-step.js';

// Resume of a PUBLISHED ClickHouse operation observes the target: re-run as the bounded
// reader's child (CUTPOINT_READER_CHILD=1), this same bundle serves the probe worker.
serveIfReaderChild({ [PROBE_WORKER_KEY]: probeWorker });

/** The delivery-resume flow's action step: source-free deps (the target only; a continue's parts run on the flow's Map); reader-capable as ObserveTarget. */
/** Its execution input (against the flow's fields), then its input (yes, id), are checked before the deps provider parses the manifest or reads a secret. */
const resumeStep = (options: ObserveStepOptions) =>
  readerStep(recoveryFlowStep('resume'), options, (deps) => executionInputFirst(recoveryInputFirst('resume', deps)));
export const makeHandler = resumeStep({});
export const handler = resumeStep({ childEntry: fileURLToPath(import.meta.url), secrets: lambdaSecrets })({
  delivery: lambdaTargetDeps,
});
