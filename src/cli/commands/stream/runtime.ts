import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { faultsFromEnv, inertFaults } from '../../../adapters/fault-injector.js';
import { withoutSessionIds } from '../../../domain/redact.js';
import { reportFired } from '../../fault-report.js';
import { FLOWS } from '../../../registry/index.js';
import type { FlowEvent } from '../../../local/flow-runner.js';
import { defaultStateDir } from '../../../local/state-dir.js';
import type { FaultInjector } from '../../../ports/faults.js';
import type { Ports } from '../../../ports/index.js';
import { AwsSession, refuseAwsFlagsWithoutAws, type AwsFlags } from '../../aws-runtime.js';
import { localRuntimeConfig } from '../../local-config.js';
import { flowProgress } from '../../flow-progress.js';
import { progress, UsageError } from '../../io.js';
import type { RuntimeKind } from '../../session-store.js';

/** How one flow execution ended, locally or on AWS. */
export interface FlowRun {
  flow: string;
  status: string;
  /** The execution's output without any fencing session id (a command may print it). */
  output?: unknown;
  error?: string;
  cause?: string;
  /** AWS only: the execution's name. */
  executionName?: string;
  /** Local runs only: the event history (errors of failed steps, retries). */
  events?: FlowEvent[];
}

/** Where a command acts: the local runtime (default) or the deployed system (`--aws`). */
export interface Runtime {
  kind: RuntimeKind;
  /** Ports for use cases the CLI calls in-process (create, read, describe, trim). */
  ports(): Promise<Ports>;
  /** Runs a flow to its end; `identity` names the execution deterministically on AWS. */
  run(flow: string, executionName: string, input: unknown): Promise<FlowRun>;
  /**
   * Resolves what starting `flow` needs before the command stores anything (AWS: the
   * region and the state machine; locally nothing more), so a command that would be refused
   * there — no region, no stack — refuses first.
   */
  prepare(flow: string): Promise<void>;
  /** Whether an error `run` threw proves the execution never started (nothing to remember about it). */
  notStarted(error: unknown): Promise<boolean>;
  /** The command's one fault injector: its ports', and whatever else the command opens (a target, the bounded reader). */
  faults(): FaultInjector;
  /** Reports the faults that fired (local runs), after the command did its work. */
  done(): void;
}

export interface RuntimeOptions extends AwsFlags {
  faults?: string;
  'state-machine-arn'?: string;
  name?: string;
}

/** `_flow`: the flow the command starts, if any; on AWS its state machine ARN is resolved when it starts (flag > env > stack output). */
export function runtimeOf(options: RuntimeOptions, _flow?: string): Runtime {
  refuseAwsFlagsWithoutAws(options);
  return options.aws ? awsRuntime(options) : localRuntime(options);
}

/** The local runtime of `cutpoint local up`, with the fault injector armed from `--faults` or CUTPOINT_FAULTS. */
function localRuntime(options: RuntimeOptions): Runtime {
  if (options['state-machine-arn'] || options.name) throw new UsageError('--state-machine-arn and --name need --aws');
  // Parsed before anything runs, so a bad spec fails fast.
  const faults = faultsFromEnv({ ...process.env, CUTPOINT_FAULTS: options.faults ?? process.env.CUTPOINT_FAULTS });
  let ports: Promise<Ports> | undefined;
  const provide = () =>
    (ports ??= (async () => {
      const config = await localRuntimeConfig();
      // The drivers load when a command first needs a store, never for a refused command.
      const [{ awsPorts }, { provisionLocal }] = await Promise.all([
        import('../../../adapters/ports.js'),
        import('../../../adapters/provision.js'),
      ]);
      await provisionLocal(config);
      return awsPorts(config, faults);
    })());
  return {
    kind: 'local',
    ports: provide,
    async run(flow, _executionName, input) {
      const { runFlow } = await import('../../../local/flow-runner.js');
      const result = await runFlow(flow, input, {
        ports: await provide(),
        onEvent: flowProgress,
      });
      progress(`event history: ${await saveHistory(flow, result)}`);
      const run: FlowRun = {
        flow,
        status: result.status,
        output: withoutSessionIds(result.output),
        events: result.events,
      };
      if (result.error !== undefined) run.error = result.error;
      if (result.cause !== undefined) run.cause = result.cause;
      return run;
    },
    prepare: async () => undefined,
    // What a local run throws may come after a step applied (its history file, say): never assumed unstarted.
    notStarted: async () => false,
    faults: () => faults,
    done: () => reportFired(faults),
  };
}

/**
 * The deployed system (src/cli/aws-runtime.ts): mutating commands start the deployed state
 * machine (`--state-machine-arn`, else CUTPOINT_<FLOW>_ARN, else the stacks' output
 * <Flow>StateMachineArn), reads call the use cases with ports on the deployed table and
 * bucket (CUTPOINT_TABLE_NAME / CUTPOINT_BUCKET_NAME, else the stacks' outputs), every
 * client in the one region of the command. The CLI arms no faults here: on AWS the
 * Lambdas arm their own, and only for a game day (CUTPOINT_FAULTS_IN_LAMBDA=enabled).
 */
function awsRuntime(options: RuntimeOptions): Runtime {
  const session = new AwsSession(options);
  if (options.faults ?? process.env.CUTPOINT_FAULTS) {
    progress(
      'faults are not armed by the CLI against AWS; deployed Lambdas arm their own for a game day (CUTPOINT_FAULTS_IN_LAMBDA=enabled)',
    );
  }
  let ports: Promise<Ports> | undefined;
  return {
    kind: 'aws',
    ports: () =>
      (ports ??= session.config().then(async (config) => {
        const { awsPorts } = await import('../../../adapters/ports.js');
        return awsPorts(config, inertFaults);
      })),
    async run(flow, derivedName, input) {
      const name = options.name ?? derivedName;
      const arn = await session.stateMachineArn(flow, options['state-machine-arn']);
      const connection = await session.connection();
      const entry = FLOWS.find((f) => f.name === flow);
      progress(`starting ${name} on ${arn}`);
      const execution =
        entry?.type === 'EXPRESS'
          ? await (
              await import('../../../adapters/stepfunctions-express.js')
            ).startSyncExpress(arn, name, input, { connection })
          : await (
              await import('../../../adapters/stepfunctions.js')
            ).startAndWait(arn, name, input, { connection, onPoll: (s) => progress(`execution ${s}`) });
      const run: FlowRun = {
        flow,
        status: execution.status,
        output: withoutSessionIds(execution.output),
        executionName: name,
      };
      if (execution.error !== undefined) run.error = execution.error;
      if (execution.cause !== undefined) run.cause = execution.cause;
      return run;
    },
    async prepare(flow) {
      await session.stateMachineArn(flow, options['state-machine-arn']);
    },
    notStarted: async (error) => (await import('../../../adapters/stepfunctions-express.js')).provablyNotStarted(error),
    faults: () => inertFaults,
    done: () => undefined,
  };
}

/** stream-append → CUTPOINT_STREAM_APPEND_ARN */
export { arnVariable } from '../../aws-settings.js';

/** Event history of every local execution, as Step Functions would keep it (no inputs: they hold the session). */
async function saveHistory(
  flow: string,
  result: { status: string; error?: string; transitions: number; events: FlowEvent[] },
): Promise<string> {
  const dir = join(defaultStateDir(), '..', 'executions');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${flow}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ flow, status: result.status, error: result.error, transitions: result.transitions, events: result.events }, null, 2)}\n`,
  );
  return file;
}

/**
 * A Standard execution name is used once: re-running the same command finds the failed
 * execution again. After fixing the cause, `--name` starts a fresh one.
 */
export function freshNameHint(runtime: Runtime): string | undefined {
  return runtime.kind === 'aws'
    ? 'a re-run of this command finds this same execution; once the cause is fixed, add --name NEW_NAME to start a fresh one'
    : undefined;
}
