import type { GamedayDriver } from '../../ports/gameday-driver.js';
import { AwsSession, type AwsFlags } from '../aws-runtime.js';
import { progress } from '../io.js';
import { bindingObservers } from './gameday-observers.js';
import { runtimeOf } from './stream/runtime.js';

/**
 * The game day on a deployed stack: each flow runs as every `--aws` command runs it (the
 * deployed state machine under the drill's execution name, waited for; an Express one
 * synchronously: src/cli/commands/stream/runtime.ts), and the checks read the stage's
 * table through the same ports. A drill's fault is armed in the environment of every
 * Lambda of the stacks that may arm one (a stage deployed with `gamedayFaults`:
 * src/adapters/lambda/gameday-faults.ts) and removed after the forward run. Whether it
 * fired is not visible from here (the functions' logs say, `fault fired: …`): the report
 * says null. The target is read through the binding's variables on this machine.
 */
export function awsGamedayDriver(flags: AwsFlags): GamedayDriver {
  const runtime = runtimeOf({ ...flags, aws: true });
  const session = new AwsSession(flags);
  let armed: Promise<{ names: string[]; set: (spec: string | undefined) => Promise<void> }> | undefined;
  // The stacks' functions that may arm faults, found once (a refusal before any is changed), and one Lambda client.
  const armable = () =>
    (armed ??= (async () => {
      const connection = await session.connection();
      const [{ cloudFormationClient, lambdaClient }, faults] = await Promise.all([
        import('../../adapters/aws-clients.js'),
        import('../../adapters/lambda/gameday-faults.js'),
      ]);
      const lambda = lambdaClient(connection);
      const cloudFormation = cloudFormationClient(connection);
      const names = await faults.armableFunctions(
        lambda,
        await faults.stackFunctionNames(cloudFormation, session.stackNames()),
      );
      cloudFormation.destroy();
      return { names, set: (spec: string | undefined) => faults.setFunctionFaults(lambda, names, spec) };
    })());
  const setFaults = async (spec: string | undefined): Promise<void> => {
    const { names, set } = await armable();
    progress(`${spec ? `arming ${spec} in` : 'disarming'} ${names.length} functions`);
    await set(spec);
  };
  return {
    kind: 'aws',
    ports: () => runtime.ports(),
    async arm(spec) {
      await setFaults(spec);
      return {
        disarm: async () => {
          await setFaults(undefined);
          return undefined;
        },
      };
    },
    async runFlow(flow, executionName, input) {
      const run = await runtime.run(flow, executionName, input);
      return {
        status: run.status,
        output: run.output,
        ...(run.error !== undefined ? { error: run.error } : {}),
        ...(run.cause !== undefined ? { cause: run.cause } : {}),
      };
    },
    openObservers: bindingObservers,
  };
}
