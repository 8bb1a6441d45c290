import { randomUUID } from 'node:crypto';
import type { RunOptions, StateMachineOptions } from 'aws-local-stepfunctions';
import { stepFunctions } from './step-functions.js';
import type { DeliveryDepsProvider } from '../delivery/deps-provider.js';
import { needsFor, type HandlerNeeds } from '../registry/handler-contract.js';
import { FLOWS, stepByPlaceholder } from '../registry/index.js';
import type { Ports } from '../ports/index.js';
import { localRetryMsFromEnv } from './runtime-config.js';
import type { Notifier } from '../ports/notifier.js';
import {
  childFlowPlaceholderOf,
  duplicateStateNames,
  flowPlaceholder,
  loadAsl,
  taskStates,
  type AslDefinition,
} from './asl.js';
import { validateOnce, withLocalArns } from './asl-validate.js';
import { toFlowEvent, type FlowEvent } from './flow-events.js';
import { pauseOverrides } from './run-pauses.js';

export type { FlowEvent } from './flow-events.js';
import {
  substituteDistributedMaps,
  type ChildOutcome,
  type MapRunSummary,
  type MapRuntime,
  type StateHandler,
} from './distributed-map.js';

export interface FlowResult {
  status: 'SUCCEEDED' | 'FAILED';
  /** `$$.Execution.Id` of this run (a local ARN). */
  executionArn: string;
  output?: unknown;
  error?: string;
  cause?: string;
  /**
   * States entered, plus retries: what AWS bills a Standard workflow for. Includes the
   * child executions of Distributed Maps (AWS bills their transitions too).
   */
  transitions: number;
  events: FlowEvent[];
  /** One entry per Distributed Map run, in the order they ended (child transitions included in `transitions`). */
  mapRuns: MapRunSummary[];
  /** What notifying steps published (to `options.notifier` too, when given). */
  notices: LocalNotice[];
}

export interface LocalNotice {
  subject: string;
  message: Record<string, unknown>;
}

export interface RunFlowOptions {
  ports: Ports;
  /** Retry and Wait pauses in ms (0 in tests); undefined keeps the ASL's own intervals and waits. */
  retryIntervalMs?: number;
  /** Called for each event as it happens (progress on stderr). */
  onEvent?: (event: FlowEvent) => void;
  /**
   * For steps that need more than Ports (registry `needs: 'delivery-*'`: target, source,
   * route): the deps provider their `makeHandler` gets, called with each Task's input. A
   * flow with such a step and no provider is refused before it starts.
   */
  stepDeps?: DeliveryDepsProvider;
  /** The execution's name in its context object (`$$.Execution.Name`); random by default. */
  executionName?: string;
  /** Where notifying steps publish (the incident topic on AWS); recorded in `notices` either way. */
  notifier?: Notifier;
  /**
   * Handlers by placeholder, used before the registry's: a test runs a registry-free flow
   * (with `definition`) or replaces one step. Each gets the Task's effective input.
   */
  taskHandlers?: Record<string, (input: unknown) => Promise<unknown>>;
  /** The ASL to run instead of statemachines/<flow>.asl.json (a test fixture); `flow` still names the execution. */
  definition?: AslDefinition;
  /**
   * How a Task's Lambda is invoked: `call` runs the handler once. Direct by default; the
   * fault scheduler (test/support/sched/) passes one that can time a Task out while its
   * invocation keeps running (a zombie) or invoke it twice (a retried ServiceException).
   */
  invoke?: (state: string, call: () => Promise<unknown>) => Promise<unknown>;
}

/**
 * Runs a flow from statemachines/<flow>.asl.json (or `options.definition`) in-process with
 * aws-local-stepfunctions. Every Task, nested ones too, is overridden by state name with the
 * handler its placeholder maps to in the registry (or in `options.taskHandlers`) — the same
 * handler Lambda runs — over the given ports. Distributed Map states run as Map Runs of
 * child executions (distributed-map.ts).
 */
export async function runFlow(flow: string, input: unknown, options: RunFlowOptions): Promise<FlowResult> {
  const source = options.definition ?? loadAsl(flow);
  const duplicates = duplicateStateNames(source);
  if (duplicates.length)
    throw new Error(`${flow}: state names must be unique across the whole machine: ${duplicates.join(', ')}`);
  await validateOnce(source);
  const notices: LocalNotice[] = [];
  const recording: Notifier = {
    publish: async (subject, message) => {
      notices.push({ subject, message });
      await options.notifier?.publish(subject, message);
    },
  };
  let childTransitions = 0;
  const handlers = await stepHandlers(flow, source, options, recording, (n) => (childTransitions += n));
  const events: FlowEvent[] = [];
  const emit = (event: FlowEvent): void => {
    events.push(event);
    options.onEvent?.(event);
  };
  const mapRuns: MapRunSummary[] = [];
  const runtime: MapRuntime = {
    objects: options.ports.objects,
    emit,
    record: (summary) => mapRuns.push(summary),
    runChild: async (definition, childInput, execution) => {
      const outcome = await execute(definition, childInput, execution, overrides, () => undefined);
      childTransitions += outcome.transitions;
      return outcome;
    },
  };
  const substituted = substituteDistributedMaps(source, runtime);
  const pause = options.retryIntervalMs ?? localRetryMsFromEnv(process.env);
  const overrides: Overrides = {
    taskResourceLocalHandlers: { ...handlers, ...substituted.handlers } as Overrides['taskResourceLocalHandlers'],
    // Over the ASL as written: its nested states are the child executions' (a stand-in keeps its Map's name and Retry).
    ...pauseOverrides(source, pause),
  };
  // The context object AWS gives every execution ($$.Execution.Id and friends).
  const name = options.executionName ?? randomUUID();
  const executionArn = `arn:aws:states:local:000000000000:execution:${flow}:${name}`;
  const outcome = await execute(substituted.definition, input, { arn: executionArn, name }, overrides, emit);
  const { status, output, error, cause } = outcome;
  const result: FlowResult = {
    status,
    executionArn,
    transitions: outcome.transitions + childTransitions,
    events,
    notices,
    mapRuns,
  };
  if (status === 'SUCCEEDED') result.output = output;
  else Object.assign(result, { error, cause });
  return result;
}

type Overrides = NonNullable<RunOptions['overrides']>;

/** One execution of a (substituted) definition to its end, its events passed on; a failed execution is an outcome, not a throw. */
async function execute(
  definition: AslDefinition,
  input: unknown,
  execution: { arn: string; name: string },
  overrides: Overrides,
  onEvent: (event: FlowEvent) => void,
): Promise<ChildOutcome> {
  const { StateMachine } = await stepFunctions();
  const machine = new StateMachine(
    withLocalArns(definition) as never,
    { validationOptions: { noValidate: true } } as StateMachineOptions,
  );
  const run = machine.run(input as never, {
    // `$$.State.RetryCount` reads 0 on every attempt: the library does not track it. A flow
    // that passes it on (deliver-window's `retry`) must be right when a retry looks like a
    // first attempt, and is tested so (see src/delivery/steps/carried.ts).
    context: {
      Execution: {
        Id: execution.arn,
        Name: execution.name,
        Input: input as never,
        StartTime: new Date().toISOString(),
      },
      State: { RetryCount: 0 },
    } as never,
    overrides,
  });
  let transitions = 0;
  const collecting = (async () => {
    for await (const raw of run.eventLogs) {
      const event = toFlowEvent(raw as unknown as Record<string, unknown>);
      if (event.type === 'StateEntered' || event.type === 'StateRetried') transitions++;
      onEvent(event);
    }
  })();
  let outcome: Omit<ChildOutcome, 'transitions'>;
  try {
    outcome = { status: 'SUCCEEDED', output: await run.result };
  } catch (error) {
    const e = error as { name?: string; message?: string; cause?: unknown };
    const failure = (e.cause ?? e) as { name?: string; message?: string };
    outcome = { status: 'FAILED', error: failure.name ?? e.name, cause: failure.message ?? e.message };
  }
  await collecting;
  return { ...outcome, transitions };
}

/** The registry's handler (or `options.taskHandlers`') for every Task, nested ones too, by state name. */
async function stepHandlers(
  flow: string,
  definition: AslDefinition,
  options: RunFlowOptions,
  notifier: Notifier,
  countChild: (transitions: number) => void,
): Promise<Record<string, StateHandler>> {
  const handlers: Record<string, StateHandler> = {};
  const available: HandlerNeeds = {
    ports: () => Promise.resolve(options.ports),
    notifier: () => Promise.resolve(notifier),
    ...(options.stepDeps ? { delivery: options.stepDeps } : {}),
  };
  for (const { state, placeholder, definition: task } of taskStates(definition)) {
    const child = childFlowPlaceholderOf(task);
    if (child) {
      handlers[state] = startFlowSync(flow, state, child, options, countChild);
      continue;
    }
    if (!placeholder) throw new Error(`${flow}: Task ${state} has no \${placeholder} resource`);
    handlers[state] = invoked(
      state,
      options,
      await taskHandler(`${flow}: Task ${state}`, placeholder, options, available),
    );
  }
  return handlers;
}

/**
 * The handler a Task's placeholder names: the test's own (`options.taskHandlers`) or the
 * registry's, built over exactly the needs its entry declares (refused, naming the Task,
 * when one is not available: a delivery step without `stepDeps`).
 */
async function taskHandler(
  task: string,
  placeholder: string,
  options: RunFlowOptions,
  available: HandlerNeeds,
): Promise<StateHandler> {
  const given = options.taskHandlers?.[placeholder];
  if (given) return given;
  const entry = stepByPlaceholder(placeholder);
  const handler = (await entry.load()).makeHandler(needsFor(entry, available, task));
  return (stateInput) => handler(stateInput, {});
}

/** The Task's handler as its Lambda is invoked: through `options.invoke` when given. */
function invoked(state: string, options: RunFlowOptions, handler: StateHandler): StateHandler {
  const invoke = options.invoke;
  return invoke ? (stateInput) => invoke(state, () => handler(stateInput)) : handler;
}

/**
 * `states:startExecution.sync:2` of another flow, run here as a child execution over the
 * same ports: its output as `Output` (JSON), or, when it fails, States.TaskFailed with
 * the child's error and cause, as Step Functions reports it.
 */
function startFlowSync(
  flow: string,
  state: string,
  placeholder: string,
  options: RunFlowOptions,
  countChild: (transitions: number) => void,
): StateHandler {
  const child = FLOWS.find((f) => flowPlaceholder(f.name) === placeholder);
  if (!child)
    throw new Error(
      `${flow}: Task ${state} starts \${${placeholder}}, which names no flow in the registry's FLOWS (src/registry/flows.ts)`,
    );
  return async (stateInput) => {
    const { Input } = (stateInput ?? {}) as { Input?: unknown };
    // The child runs its own ASL (never a fixture definition given for the parent) under a fresh name.
    const run = await runFlow(child.name, Input, { ...options, executionName: undefined, definition: undefined });
    countChild(run.transitions);
    if (run.status === 'SUCCEEDED') return { ExecutionArn: run.executionArn, Status: run.status, Output: run.output };
    const failed = new Error(
      JSON.stringify({ ExecutionArn: run.executionArn, Status: run.status, Error: run.error, Cause: run.cause }),
    );
    failed.name = 'States.TaskFailed';
    throw failed;
  };
}
