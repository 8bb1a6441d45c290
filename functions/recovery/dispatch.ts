import middy from '@middy/core';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { emfMetricCounter } from '../../src/adapters/recovery-metrics.js';
import { openFlowExecutions } from '../../src/adapters/stepfunctions-dispatch.js';
import type { Notifier } from '../../src/ports/notifier.js';
import { dispatchRecovery, type DispatchDeps } from '../../src/recovery/dispatch.js';
import { incidentNotifier } from '../lib/incident-topic.js';

let deps: DispatchDeps | undefined;
let notifier: Notifier | undefined;
/** Built on the first notice: an event that needs none never depends on the topic's setting. */
const incidentTopic: Notifier = {
  publish: (subject, message) => (notifier ??= incidentNotifier(process.env)).publish(subject, message),
};

/** EventBridge → the recovery dispatcher (infra/recovery-dispatch.ts): no logic here. */
export const handler = middy(async (event: unknown) =>
  dispatchRecovery(
    event,
    (deps ??= {
      executions: openFlowExecutions(),
      metrics: emfMetricCounter(),
      notifier: incidentTopic,
      faults: faultsFromEnv(process.env),
    }),
  ),
);
