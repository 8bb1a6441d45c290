import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { emfMetricCounter } from '../../src/adapters/recovery-metrics.js';
import { openFlowExecutions } from '../../src/adapters/stepfunctions-dispatch.js';
import type { Notifier } from '../../src/ports/notifier.js';
import { dispatchRecovery, type DispatchDeps } from '../../src/recovery/dispatch.js';
import { incidentNotifier } from '../lib/incident-topic.js';
import { instrumentClient, lambdaHandler } from '../lib/telemetry.js';
import { observeDispatch } from './dispatch-telemetry.js';

let deps: DispatchDeps | undefined;
let notifier: Notifier | undefined;
/** Built on the first notice: an event that needs none never depends on the topic's setting. */
const incidentTopic: Notifier = {
  publish: (subject, message) =>
    (notifier ??= incidentNotifier(process.env, instrumentClient)).publish(subject, message),
};

/**
 * EventBridge → the recovery dispatcher (infra/recovery-dispatch.ts): no logic here. The
 * step handlers' telemetry (Powertools logger and tracer, SDK clients traced, errors
 * redacted), with the dispatcher's own observer.
 */
export const handler = lambdaHandler(
  async (event: unknown) =>
    dispatchRecovery(
      event,
      (deps ??= {
        executions: openFlowExecutions(undefined, instrumentClient),
        metrics: emfMetricCounter(),
        notifier: incidentTopic,
        faults: faultsFromEnv(process.env),
      }),
    ),
  observeDispatch,
);
