import { inertFaults } from '../../adapters/fault-injector.js';
import type { GamedayDriver } from '../../ports/gameday-driver.js';
import type { Ports } from '../../ports/index.js';
import { FLOWS } from '../../registry/index.js';
import { AwsSession, type AwsFlags } from '../aws-runtime.js';
import { progress } from '../io.js';
import { bindingObservers } from './gameday-observers.js';

/**
 * The game day on a deployed stack: each flow is the deployed state machine, started under
 * the drill's execution name and waited for; a drill's fault is armed in the environment
 * of every Lambda of the stacks that may arm one (a stage deployed with `gamedayFaults`:
 * src/adapters/lambda/gameday-faults.ts) and removed after the forward run. Whether it
 * fired is not visible from here (the functions' logs say, `fault fired: …`): the report
 * says null. The checks read the journal in the stage's table and the target through the
 * binding's variables on this machine.
 */
export function awsGamedayDriver(flags: AwsFlags): GamedayDriver {
  const session = new AwsSession(flags);
  let ports: Promise<Ports> | undefined;
  let functions: Promise<string[]> | undefined;
  const clients = async () => {
    const connection = await session.connection();
    const { cloudFormationClient, lambdaClient } = await import('../../adapters/aws-clients.js');
    return { connection, cloudFormation: cloudFormationClient(connection), lambda: lambdaClient(connection) };
  };
  const armable = (): Promise<string[]> =>
    (functions ??= (async () => {
      const { cloudFormation, lambda } = await clients();
      const { armableFunctions, stackFunctionNames } = await import('../../adapters/lambda/gameday-faults.js');
      return armableFunctions(lambda, await stackFunctionNames(cloudFormation, session.stackNames()));
    })());
  const setFaults = async (spec: string | undefined): Promise<void> => {
    const names = await armable();
    const { lambda } = await clients();
    const { setFunctionFaults } = await import('../../adapters/lambda/gameday-faults.js');
    progress(`${spec ? `arming ${spec} in` : 'disarming'} ${names.length} functions`);
    await setFunctionFaults(lambda, names, spec);
  };
  return {
    kind: 'aws',
    ports: () =>
      (ports ??= session.config().then(async (config) => {
        const { awsPorts } = await import('../../adapters/ports.js');
        return awsPorts(config, inertFaults);
      })),
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
      const arn = await session.stateMachineArn(flow);
      const connection = await session.connection();
      // An Express execution cannot be described by name (stream-append): it is run synchronously.
      const execution =
        FLOWS.find((f) => f.name === flow)?.type === 'EXPRESS'
          ? await (
              await import('../../adapters/stepfunctions-express.js')
            ).startSyncExpress(arn, executionName, input, {
              connection,
            })
          : await (
              await import('../../adapters/stepfunctions.js')
            ).startAndWait(arn, executionName, input, {
              connection,
              onPoll: (s) => progress(`  ${executionName} ${s}`),
            });
      return {
        status: execution.status,
        output: execution.output,
        ...(execution.error !== undefined ? { error: execution.error } : {}),
        ...(execution.cause !== undefined ? { cause: execution.cause } : {}),
      };
    },
    openObservers: bindingObservers,
  };
}
