import { openCensusFor } from '../../adapters/delivery-bindings.js';
import { inertFaults } from '../../adapters/fault-injector.js';
import { resolveBinding } from '../../delivery/bindings.js';
import type { SelectedRoute } from '../../domain/delivery/manifest-types.js';
import type { TargetObservers } from '../../ports/gameday-driver.js';
import { openLocalTarget } from './delivery-bindings.js';

/**
 * What a game day's checks read of the route's target, opened on this machine from the
 * target binding's variables (locally and against a deployed stack alike: the checks run
 * here), never armed whatever a drill arms: its receipt and stage (the target port) and
 * the window's census.
 */
export async function bindingObservers(route: SelectedRoute): Promise<TargetObservers> {
  const target = await openLocalTarget(route.targetBinding, inertFaults);
  try {
    const census = openCensusFor(route.targetBinding, await resolveBinding(route.targetBinding, { env: process.env }));
    return {
      target,
      census,
      close: async () => {
        await Promise.allSettled([target.close(), census.close()]);
      },
    };
  } catch (error) {
    await target.close();
    throw error;
  }
}
