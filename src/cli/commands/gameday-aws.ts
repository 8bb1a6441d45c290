import { functionsToArm, type ArmableFunction } from '../../gameday/arm-targets.js';
import type { GamedayDriver } from '../../ports/gameday-driver.js';
import { AwsSession, type AwsFlags } from '../aws-runtime.js';
import { progress } from '../io.js';
import { bindingObservers } from './gameday-observers.js';
import { runtimeOf } from './stream/runtime.js';

/**
 * The game day on a deployed stack: each flow runs as every `--aws` command runs it (the
 * deployed state machine under the drill's execution name, waited for; an Express one
 * synchronously: src/cli/commands/stream/runtime.ts), and the checks read the stage's
 * table through the same ports. A drill's fault is armed in the environment of the
 * stacks' Lambdas that may arm one (a stage deployed with `gamedayFaults`:
 * src/adapters/lambda/gameday-faults.ts) and whose step crosses its cut points
 * (src/gameday/arm-targets.ts), and removed from them after the forward run. Whether it
 * fired is not visible from here (the functions' logs say, `fault fired: …`): the report
 * says null. The target is read through the binding's variables on this machine.
 */
export function awsGamedayDriver(flags: AwsFlags): GamedayDriver {
  const runtime = runtimeOf({ ...flags, aws: true });
  const session = new AwsSession(flags);
  let armed:
    | Promise<{
        functions: ArmableFunction[];
        set: (names: readonly string[], spec: string | undefined) => Promise<void>;
      }>
    | undefined;
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
      const functions = await faults.armableFunctions(
        lambda,
        await faults.stackFunctionNames(cloudFormation, session.stackNames()),
      );
      cloudFormation.destroy();
      return {
        functions,
        set: (names: readonly string[], spec: string | undefined) => faults.setFunctionFaults(lambda, names, spec),
      };
    })());
  return {
    kind: 'aws',
    ports: () => runtime.ports(),
    async arm(spec) {
      const { functions, set } = await armable();
      // Only the functions whose step crosses one of the spec's cut points (src/gameday/arm-targets.ts).
      const names = functionsToArm(spec, functions);
      progress(`arming ${spec} in ${names.length} of ${functions.length} functions`);
      await set(names, spec);
      return {
        disarm: async () => {
          progress(`disarming ${names.length} functions`);
          await set(names, undefined);
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
