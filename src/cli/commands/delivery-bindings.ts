import { openSourceFor, openTargetFor } from '../../adapters/delivery-bindings.js';
import { faultsFromEnv } from '../../adapters/fault-injector.js';
import { resolveBinding } from '../../delivery/bindings.js';
import type { Binding } from '../../domain/delivery/manifest.js';
import type { SourcePort } from '../../ports/source.js';
import type { TargetPort } from '../../ports/target.js';

/**
 * The route's target and source for a command on this machine (`delivery run`, the live
 * recovery actions, the demo): the connection from the environment variables the binding
 * names (src/delivery/bindings.ts; the values are never printed), opened by the same
 * adapter code a deployed Lambda uses. An unset variable is `delivery.binding_env_unset`,
 * naming the variable; nothing was started or mutated.
 */
export async function openLocalTarget(binding: Binding, faultSpec?: string): Promise<TargetPort> {
  const faults = faultsFromEnv({ ...process.env, CUTPOINT_FAULTS: faultSpec ?? process.env.CUTPOINT_FAULTS });
  return openTargetFor(binding, await resolveBinding(binding, { env: process.env }), faults);
}

/** The source: `http(s)://…` or, on this machine only, embedded chdb `chdb:<dir>`. */
export async function openLocalSource(binding: Binding): Promise<SourcePort> {
  return openSourceFor(binding, await resolveBinding(binding, { env: process.env }), { embedded: true });
}
