import middy from '@middy/core';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { emfMetricCounter } from '../../src/adapters/recovery-metrics.js';
import { openFlowExecutions } from '../../src/adapters/stepfunctions-dispatch.js';
import { dispatchRecovery, type DispatchDeps } from '../../src/recovery/dispatch.js';

let deps: DispatchDeps | undefined;

/** EventBridge → the recovery dispatcher (infra/recovery-dispatch.ts): no logic here. */
export const handler = middy(async (event: unknown) => dispatchRecovery(event, (deps ??= { executions: openFlowExecutions(), metrics: emfMetricCounter(), faults: faultsFromEnv(process.env) })));
