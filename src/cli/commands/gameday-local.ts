import { FaultSwitch } from '../../adapters/fault-injector.js';
import type { CutpointConfig } from '../../config.js';
import type { GamedayDriver } from '../../ports/gameday-driver.js';
import type { Ports } from '../../ports/index.js';
import { localRuntimeConfig } from '../local-config.js';
import { localFlowDeps } from './flow-deps.js';
import { bindingObservers } from './gameday-observers.js';

/**
 * The game day on the local runtime: every flow runs in this process through the local
 * runner, its Tasks' handlers and their adapters crossing one fault switch that each drill
 * arms for its forward run (as CUTPOINT_FAULTS arms a `flow run`), the route's target and
 * source opened from the bindings' variables as `cutpoint flow run` opens them.
 * `config`: the runtime to use (tests start their own); `cutpoint local up`'s otherwise.
 */
export function localGamedayDriver(config?: CutpointConfig): GamedayDriver {
  const faults = new FaultSwitch();
  let ports: Promise<Ports> | undefined;
  const provide = (): Promise<Ports> =>
    (ports ??= (async () => {
      const [{ awsPorts }, { provisionLocal }] = await Promise.all([
        import('../../adapters/ports.js'),
        import('../../adapters/provision.js'),
      ]);
      const resolved = config ?? (await localRuntimeConfig());
      await provisionLocal(resolved);
      return awsPorts(resolved, faults);
    })());
  return {
    kind: 'local',
    ports: provide,
    arm(spec) {
      const injector = faults.arm(spec);
      return Promise.resolve({
        disarm: () => {
          faults.disarm();
          return Promise.resolve(injector.fired.length);
        },
      });
    },
    async runFlow(flow, executionName, input) {
      const { runFlow } = await import('../../local/flow-runner.js');
      const flowPorts = await provide();
      const deps = localFlowDeps(flow, flowPorts, faults);
      try {
        const result = await runFlow(flow, input, { ports: flowPorts, stepDeps: deps.provider, executionName });
        return {
          status: result.status,
          output: result.output,
          ...(result.error !== undefined ? { error: result.error } : {}),
          ...(result.cause !== undefined ? { cause: result.cause } : {}),
        };
      } finally {
        await deps.close();
      }
    },
    openObservers: bindingObservers,
  };
}
