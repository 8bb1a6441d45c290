import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { faultsFromEnv } from '../../adapters/fault-injector.js';
import { firedOf, reportFired } from '../fault-report.js';
import { CutpointError } from '../../domain/errors.js';
import { assertFlowInput } from '../../engine/flow-input.js';
import { withoutSessionIds } from '../../domain/redact.js';
import { FLOWS } from '../../registry/index.js';
import type { FlowResult } from '../../local/flow-runner.js';
import { defaultStateDir } from '../../local/state-dir.js';
import { AwsSession, AWS_OPTIONS, refuseAwsFlagsWithoutAws } from '../aws-runtime.js';
import { localRuntimeConfig } from '../local-config.js';
import { flowProgress } from '../flow-progress.js';
import { quoted } from '../../domain/echo.js';
import { progress, readJsonInput, UsageError } from '../io.js';
import { parseOptions, unexpectedArgument } from '../grammar.js';
import { EXCHANGE_FLOW } from '../../publication/flow-route.js';

export const flowHelp = `cutpoint flow run <flow> --input <json | @file | -> [--faults SPEC]
  runs statemachines/<flow>.asl.json on the local runtime (\`cutpoint local up\` first)
cutpoint flow run <flow> --input ... --aws --name EXECUTION_NAME [--state-machine-arn ARN] [--profile P] [--region R] [--stack A,B]
  starts the deployed state machine (--state-machine-arn, else CUTPOINT_<FLOW>_ARN, else
  the stack output <Flow>StateMachineArn) under that exact execution name and waits; a lost
  start response is resolved with DescribeExecution, never a second execution
flows: ${FLOWS.map((f) => f.name).join(', ')}
  the input is the flow's execution input, as on AWS (at most 256 KiB and 64 levels deep): a
  JSON object of the flow's own fields only, at most 64 KiB unless it carries records,
  sources, a GC page or a manifest (docs/deploy.md "Flow inputs"), refused before anything runs.
  Delivery flows open the route's target (and, for the extraction of deliver-window and
  publish-clickhouse only, its ClickHouse source) from the bindings' url_env on this
  machine (a ClickHouse target: http(s) or chdb:<dir>; publish-clickhouse needs http(s):
  its bounded reader is a separate process, which cannot open a chdb: directory —
  quality.reader_unreachable): deliver-window (SQL routes) and
  publish-clickhouse (mode exchange) take {manifestText, selector[, invocationId]},
  delivery-reconcile|resume|retire take
  {invocationId, manifestText, selector, yes: true}; \`cutpoint delivery run|reconcile|
  resume|retire\` build these inputs from --manifest FILE#ROUTE and print the projection`;

export async function flowCommand(args: string[]): Promise<unknown> {
  if (args[0] !== 'run') throw new UsageError(flowHelp);
  const { values, positionals } = parse(args.slice(1));
  const [flow, ...extra] = positionals;
  if (!flow || !FLOWS.some((f) => f.name === flow))
    throw new UsageError(`unknown flow ${quoted(flow ?? '')}\n${flowHelp}`);
  if (extra.length) throw unexpectedArgument(extra[0]);
  if (!values.input) throw new UsageError('--input is required');
  const input = await readJsonInput(values.input, { what: 'flow input', invalidCode: 'flow.invalid_input' });
  // The check every flow's first Task makes (docs/deploy.md "Flow inputs"), here before anything runs.
  assertFlowInput(flow, input);

  refuseAwsFlagsWithoutAws(values);
  // Like every command that starts a flow: the deployed state machine and the execution name mean nothing locally.
  if (!values.aws && (values['state-machine-arn'] !== undefined || values.name !== undefined))
    throw new UsageError('--state-machine-arn and --name need --aws');
  if (values.aws) {
    if (!values.name) throw new UsageError('--aws needs --name');
    const aws = new AwsSession(values);
    const arn = await aws.stateMachineArn(flow, values['state-machine-arn']);
    progress(`starting ${values.name} on ${arn}`);
    const { startAndWait } = await import('../../adapters/stepfunctions.js');
    const execution = await startAndWait(arn, values.name, input, {
      connection: await aws.connection(),
      onPoll: (s) => progress(`execution ${s}`),
    });
    return { ...execution, output: withoutSessionIds(execution.output) };
  }

  // An exchange route's reader child must reach the target: refused before the runtime is touched.
  if (flow === EXCHANGE_FLOW) await refuseUnreachableReader(input);
  // The drivers load only once the command line is accepted.
  const [{ awsPorts }, { provisionLocal }, { runFlow }, { localFlowDeps }] = await Promise.all([
    import('../../adapters/ports.js'),
    import('../../adapters/provision.js'),
    import('../../local/flow-runner.js'),
    import('./flow-deps.js'),
  ]);
  const config = await localRuntimeConfig();
  await provisionLocal(config);
  const faults = faultsFromEnv({ ...process.env, CUTPOINT_FAULTS: values.faults ?? process.env.CUTPOINT_FAULTS });
  const ports = awsPorts(config, faults);
  const deps = localFlowDeps(flow, ports, faults);
  let result: FlowResult;
  try {
    result = await runFlow(flow, input, {
      ports,
      stepDeps: deps.provider,
      onEvent: flowProgress,
    });
  } finally {
    await deps.close();
    // What fired, whatever the outcome: a run that a fault stopped names it on stderr.
    reportFired(faults);
  }
  // Keep the event history of every local execution, as Step Functions would.
  const history = await saveHistory(flow, result);
  progress(`event history: ${history}`);
  if (result.status !== 'SUCCEEDED') {
    throw new CutpointError(
      'Flow.ExecutionFailed',
      'flow.execution_failed',
      `${flow} failed with ${result.error}: ${result.cause}`,
    );
  }
  // Never a fencing session id on stdout (a delivery's fence, an append's input passed through).
  return {
    flow,
    status: result.status,
    output: withoutSessionIds(result.output),
    transitions: result.transitions,
    faultsFired: firedOf(faults),
    history,
  };
}

/** An input whose route does not parse is left to Begin, which refuses it with its own diagnostic. */
async function refuseUnreachableReader(input: unknown): Promise<void> {
  const [{ routeOfEvent }, { assertReaderReachable }] = await Promise.all([
    import('../../delivery/deps-provider.js'),
    import('./delivery-bindings.js'),
  ]);
  let route;
  try {
    route = routeOfEvent(input);
  } catch {
    return;
  }
  await assertReaderReachable(route);
}

async function saveHistory(flow: string, result: FlowResult): Promise<string> {
  const dir = join(defaultStateDir(), '..', 'executions');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${flow}-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.json`);
  await writeFile(
    file,
    `${JSON.stringify({ flow, status: result.status, error: result.error, transitions: result.transitions, events: result.events }, null, 2)}\n`,
  );
  return file;
}

function parse(args: string[]) {
  return parseOptions(args, {
    input: { type: 'string' },
    faults: { type: 'string' },
    ...AWS_OPTIONS,
    'state-machine-arn': { type: 'string' },
    name: { type: 'string' },
  });
}
