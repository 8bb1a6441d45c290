import { randomUUID } from 'node:crypto';
import { StateMachine, type StateMachineOptions } from 'aws-local-stepfunctions';
import type { DeliveryDepsProvider } from '../../functions/lib/delivery-deps.js';
import { stepByPlaceholder } from '../../functions/registry.js';
import type { Ports } from '../ports/index.js';
import type { Notifier } from '../ports/notifier.js';
import { loadAsl, taskStates, type AslDefinition } from './asl.js';

export interface FlowEvent {
  type: string;
  state?: string;
  error?: string;
  cause?: string;
}

export interface FlowResult {
  status: 'SUCCEEDED' | 'FAILED';
  /** `$$.Execution.Id` of this run (a local ARN). */
  executionArn: string;
  output?: unknown;
  error?: string;
  cause?: string;
  /** States entered, plus retries: what AWS bills a Standard workflow for. */
  transitions: number;
  events: FlowEvent[];
  /** What notifying steps published (to `options.notifier` too, when given). */
  notices: LocalNotice[];
}

export interface LocalNotice {
  subject: string;
  message: Record<string, unknown>;
}

export interface RunFlowOptions {
  ports: Ports;
  /** Retry pauses in ms (0 in tests); undefined keeps the ASL's own intervals. */
  retryIntervalMs?: number;
  /** Called for each event as it happens (progress on stderr). */
  onEvent?: (event: FlowEvent) => void;
  /**
   * For steps that need more than Ports (deliver-window: target, source, route): the deps
   * provider handed to their `makeDeliveryHandler`, called with each Task's input. A flow
   * with such a step and no provider is refused before it starts.
   */
  stepDeps?: DeliveryDepsProvider;
  /** The execution's name in its context object (`$$.Execution.Name`); random by default. */
  executionName?: string;
  /** Where notifying steps publish (the incident topic on AWS); recorded in `notices` either way. */
  notifier?: Notifier;
}

/**
 * Runs a flow from statemachines/<flow>.asl.json in-process with aws-local-stepfunctions.
 * Every Task is overridden, by state name, with the handler its placeholder maps to in
 * the registry — the same handler Lambda runs — over the given ports.
 */
export async function runFlow(flow: string, input: unknown, options: RunFlowOptions): Promise<FlowResult> {
  const definition = loadAsl(flow);
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const providePorts = () => Promise.resolve(options.ports);
  const notices: LocalNotice[] = [];
  const recording: Notifier = {
    publish: async (subject, message) => {
      notices.push({ subject, message });
      await options.notifier?.publish(subject, message);
    },
  };
  for (const { state, placeholder } of taskStates(definition)) {
    if (!placeholder) throw new Error(`${flow}: Task ${state} has no \${placeholder} resource`);
    const module = await stepByPlaceholder(placeholder).load();
    let handler;
    if ('makeHandler' in module) {
      handler = module.makeHandler(providePorts);
    } else if ('makeNotifyHandler' in module) {
      handler = module.makeNotifyHandler(providePorts, () => Promise.resolve(recording));
    } else {
      if (!options.stepDeps) throw new Error(`${flow}: Task ${state} needs step deps (a target, a source, a route); pass stepDeps`);
      handler = module.makeDeliveryHandler(options.stepDeps);
    }
    handlers[state] = (stateInput) => handler(stateInput, {});
  }
  const machine = new StateMachine(withLocalArns(definition) as never, {
    validationOptions: { checkArn: false },
  } as StateMachineOptions);
  // The context object AWS gives every execution ($$.Execution.Id and friends).
  const name = options.executionName ?? randomUUID();
  const executionArn = `arn:aws:states:local:000000000000:execution:${flow}:${name}`;
  const execution = machine.run(input as never, {
    context: { Execution: { Id: executionArn, Name: name, Input: input as never, StartTime: new Date().toISOString() } },
    overrides: {
      taskResourceLocalHandlers: handlers as never,
      retryIntervalOverrides: options.retryIntervalMs === undefined ? undefined : retryOverrides(definition, options.retryIntervalMs),
    },
  });
  const events: FlowEvent[] = [];
  const collecting = (async () => {
    for await (const raw of execution.eventLogs) {
      const event = toFlowEvent(raw as unknown as Record<string, unknown>);
      events.push(event);
      options.onEvent?.(event);
    }
  })();
  let result: FlowResult;
  try {
    const output = await execution.result;
    result = { status: 'SUCCEEDED', executionArn, output, transitions: 0, events, notices };
  } catch (error) {
    const e = error as { name?: string; message?: string; cause?: unknown };
    const failure = (e.cause ?? e) as { name?: string; message?: string };
    result = { status: 'FAILED', executionArn, error: failure.name ?? e.name, cause: failure.message ?? e.message, transitions: 0, events, notices };
  }
  await collecting;
  result.transitions = events.filter((e) => e.type === 'StateEntered' || e.type === 'StateRetried').length;
  return result;
}

/** Placeholders become syntactically valid ARNs; every Task is overridden anyway. */
function withLocalArns(definition: AslDefinition): AslDefinition {
  const text = JSON.stringify(definition).replace(
    /\$\{([A-Za-z0-9]+)\}/g,
    (_m, name: string) => `arn:aws:lambda:us-east-1:000000000000:function:local-${name}`,
  );
  return JSON.parse(text) as AslDefinition;
}

function retryOverrides(definition: AslDefinition, ms: number): Record<string, number[]> {
  return Object.fromEntries(
    Object.entries(definition.States)
      .filter(([, s]) => s.Retry?.length)
      .map(([name, s]) => [name, (s.Retry ?? []).map(() => ms)]),
  );
}

function toFlowEvent(raw: Record<string, unknown>): FlowEvent {
  const state = (raw.state as { name?: string } | undefined)?.name;
  const event: FlowEvent = { type: String(raw.type) };
  if (state) event.state = state;
  const error = (raw.Error ?? raw.error) as string | undefined;
  const cause = (raw.Cause ?? raw.cause) as string | undefined;
  if (error) event.error = String(error);
  if (cause) event.cause = String(cause);
  return event;
}
