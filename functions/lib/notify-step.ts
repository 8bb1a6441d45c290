import type { Notifier } from '../../src/ports/notifier.js';
import type { Ports } from '../../src/ports/index.js';
import type { StepHandler } from './step.js';
import { lambdaHandler } from './telemetry.js';

/** A use case that reads the authority and publishes a notice: `(input, ports, notifier) => result`. */
export type NotifyUseCase<O> = (input: unknown, ports: Ports, notifier: Notifier) => Promise<O>;

/**
 * The thin handler of a notifying step: middy around the use case, ports and notifier
 * from providers (once per cold start in Lambda; the emulators' ports and a local
 * notifier in the runner). No try/catch: errors leave with their stable `name`.
 */
export function notifyStep<O>(useCase: NotifyUseCase<O>) {
  return (ports: () => Promise<Ports>, notifier: () => Promise<Notifier>): StepHandler => {
    return lambdaHandler(async (event: unknown) => useCase(event, await ports(), await notifier()));
  };
}
