import type { DeliveryDepsProvider } from '../delivery/deps-provider.js';
import { needsFor, type HandlerNeeds } from '../registry/handler-contract.js';
import { FLOWS, stepByPlaceholder } from '../registry/index.js';
import { loadAsl, taskStates } from '../local/asl.js';
import { runFlow, type FlowResult } from '../local/flow-runner.js';
import type { Ports } from '../ports/index.js';
import type { RequestMeter } from '../adapters/request-meter.js';
import type { Notifier } from '../ports/notifier.js';

/** One Lambda invocation as Lambda bills it: the step, its configured memory, its duration (ms, rounded up). */
export interface StepInvocation {
  placeholder: string;
  memoryMB: number;
  billedMs: number;
}

/** What one execution of a flow did, counted: what AWS bills it for. */
export interface FlowMeasurement {
  flow: string;
  type: 'STANDARD' | 'EXPRESS';
  /** States entered plus retries, Distributed Map children included (what a Standard workflow bills). */
  stateTransitions: number;
  /** Wall time of the whole execution (Express bills it). */
  executionMs: number;
  invocations: StepInvocation[];
  /** DynamoDB and S3 requests by `service.Operation`, from the RequestMeter. */
  requests: Record<string, number>;
  result: FlowResult;
}

export interface MeasureOptions {
  ports: Ports;
  /** The meter the ports count into. */
  meter: RequestMeter;
  stepDeps?: DeliveryDepsProvider;
  notifier?: Notifier;
}

/**
 * Runs one execution of `flow` through the local runner — the same ASL and the same
 * handlers Lambda runs, on the emulators — with every Task's handler timed (one Lambda
 * invocation each, Distributed Map children included: the runner hands the same handlers
 * to them) and the RequestMeter's counts before and after. The durations are this
 * machine's against loopback emulators, not a deployed Lambda's: an estimate of the
 * GB-seconds, while the transitions and request counts are exact.
 */
export async function measureFlow(flow: string, input: unknown, options: MeasureOptions): Promise<FlowMeasurement> {
  const entry = FLOWS.find((f) => f.name === flow);
  if (!entry) throw new Error(`unknown flow ${flow}`);
  const invocations: StepInvocation[] = [];
  const taskHandlers = await timedHandlers(flow, options, invocations);
  const before = options.meter.snapshot();
  const started = performance.now();
  const result = await runFlow(flow, input, {
    ports: options.ports,
    retryIntervalMs: 0,
    taskHandlers,
    ...(options.stepDeps ? { stepDeps: options.stepDeps } : {}),
    ...(options.notifier ? { notifier: options.notifier } : {}),
  });
  const executionMs = performance.now() - started;
  return {
    flow,
    type: entry.type,
    stateTransitions: result.transitions,
    executionMs,
    invocations,
    requests: delta(before, options.meter.snapshot()),
    result,
  };
}

/** The registry's handler of every Task placeholder of the flow, built as the runner builds it, each call timed. */
async function timedHandlers(
  flow: string,
  options: MeasureOptions,
  into: StepInvocation[],
): Promise<Record<string, (input: unknown) => Promise<unknown>>> {
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const available: HandlerNeeds = {
    ports: () => Promise.resolve(options.ports),
    notifier: () => Promise.resolve(options.notifier ?? silentNotifier),
    ...(options.stepDeps ? { delivery: options.stepDeps } : {}),
  };
  for (const { state, placeholder } of taskStates(loadAsl(flow))) {
    if (!placeholder || handlers[placeholder]) continue;
    const step = stepByPlaceholder(placeholder);
    const handler = (await step.load()).makeHandler(needsFor(step, available, `${flow}: Task ${state}`));
    handlers[placeholder] = async (input) => {
      const started = performance.now();
      try {
        return await handler(input, {});
      } finally {
        // Lambda bills every invocation, failed ones too, by the millisecond rounded up.
        into.push({
          placeholder,
          memoryMB: step.memoryMB,
          billedMs: Math.max(1, Math.ceil(performance.now() - started)),
        });
      }
    };
  }
  return handlers;
}

const silentNotifier: Notifier = { publish: () => Promise.resolve() };

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after)) if (n - (before[key] ?? 0) > 0) out[key] = n - (before[key] ?? 0);
  return out;
}
