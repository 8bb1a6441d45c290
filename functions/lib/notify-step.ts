import type { Notifier } from '../../src/ports/notifier.js';
import type { Ports } from '../../src/ports/index.js';
import { needOf, type HandlerNeeds, type StepHandler } from '../../src/registry/handler-contract.js';
import { lambdaHandler } from './telemetry.js';

/** A use case that reads the authority and publishes a notice: `(input, ports, notifier) => result`. */
export type NotifyUseCase<O> = (input: unknown, ports: Ports, notifier: Notifier) => Promise<O>;

/**
 * The thin handler of a notifying step (registry `needs: 'ports-notifier'`): middy around
 * the use case, ports and notifier from the needs' providers (once per cold start in
 * Lambda; the emulators' ports and a local notifier in the runner). No try/catch: errors
 * leave with their stable `name`.
 */
export function notifyStep<O>(useCase: NotifyUseCase<O>) {
  return (needs: HandlerNeeds): StepHandler => {
    const ports = needOf(needs, 'ports');
    const notifier = needOf(needs, 'notifier');
    return lambdaHandler(async (event: unknown) => useCase(event, await ports(), await notifier()));
  };
}
