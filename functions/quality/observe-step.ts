import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { flowStep } from '../../src/delivery/steps/flow-stop.js';
import { probeReader } from '../../src/adapters/reader-process/probe-reader.js';
import { readerOf, withObserveReader } from '../../src/publication/exchange-deps.js';
import { targetReaderOf, type TargetReaderOptions } from '../../src/quality/observe-reader.js';
import type { ObserveOutput } from '../../src/quality/observe-target.js';
import { observeTargetStep } from '../../src/quality/steps/observe-target.js';
import type { SecretsPort } from '../../src/ports/secrets.js';
import type { DeliveryDepsProvider } from '../../src/delivery/deps-provider.js';
import { needOf, type HandlerNeeds, type StepHandler } from '../../src/registry/handler-contract.js';
import type { DeliveryUseCase } from '../lib/delivery-deps.js';
import { lambdaHandler } from '../lib/telemetry.js';

/** The key the observe bundle serves its probe worker under when re-run as a reader child (runner.ts). */
export const PROBE_WORKER_KEY = 'probe';

/** Where the reader child comes from and how the binding's connection is resolved. */
export interface ObserveStepOptions {
  /** The bundle's own file: the deployed Lambda forks itself as the reader (runner.ts). Absent: the generic child entry. */
  childEntry?: string;
  /** A deployed Lambda resolves the target binding from its secret; absent: the environment (url_env). */
  secrets?: () => SecretsPort;
}

/** What middy hands the handler: the Lambda context when there is one (the local runner passes `{}`). */
interface MaybeLambdaContext {
  getRemainingTimeInMillis?: () => number;
}

/**
 * A delivery step that may observe the target (docs/rules.md#bounded-reader): like every delivery step (middy,
 * deps from the provider), but it keeps the Lambda context, because the bounded read must
 * end before the Lambda does: the deps' exchange mode carries this reader
 * (src/publication/exchange-deps.ts `withObserveReader`), whose deadlineAt = min(now +
 * observation deadline, now + getRemainingTimeInMillis − reserve) (observe-reader.ts
 * deadlineOf). Without a context (the local runner) only the observation deadline bounds it.
 * `checked` wraps the provider when the step checks its input first (as deliveryStep's).
 * ObserveTarget, the delivery-resume action and the operator's quality-observe use it.
 */
export function readerStep<O>(
  useCase: DeliveryUseCase<O>,
  options: ObserveStepOptions = {},
  checked: (deps: DeliveryDepsProvider) => DeliveryDepsProvider = (deps) => deps,
) {
  return (needs: HandlerNeeds): StepHandler => {
    const deps = checked(needOf(needs, 'delivery'));
    return lambdaHandler(async (event: unknown, context: MaybeLambdaContext) => {
      const readers = probeReader(
        options.childEntry ? { childEntry: options.childEntry, entry: PROBE_WORKER_KEY } : {},
      );
      const readerOptions: TargetReaderOptions = {
        ...(options.secrets ? { secrets: options.secrets() } : {}),
        ...(typeof context?.getRemainingTimeInMillis === 'function'
          ? { remainingMs: () => context.getRemainingTimeInMillis!() }
          : {}),
      };
      const stepDeps = await deps(event);
      return useCase(
        event,
        withObserveReader(stepDeps, (d) => targetReaderOf(d, readers, readerOptions)),
      );
    });
  };
}

/** The ObserveTarget handler: the reader built before the step runs, the flow's stops as errors. */
export function observeStep(options: ObserveStepOptions = {}) {
  return readerStep<ObserveOutput>(async (event, d) => {
    const reader = await readerOf(d);
    return flowStep((input: unknown, stepDeps: DeliveryDeps) => observeTargetStep(input, stepDeps, reader))(event, d);
  }, options);
}
