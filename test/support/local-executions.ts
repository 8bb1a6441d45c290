import type { ExecutionFailure, FlowExecutions, StartOutcome } from '../../src/ports/executions.js';
import { runFlow, type FlowResult, type RunFlowOptions } from '../../src/local/flow-runner.js';

/** The local ARN of a flow's state machine; runFlow names its executions under it. */
export const localStateMachineArn = (flow: string) => `arn:aws:states:local:000000000000:stateMachine:${flow}`;

interface LocalExecution {
  flow: string;
  name: string;
  input: string;
  result: Promise<FlowResult>;
}

/**
 * FlowExecutions over the real local state-machine runner, with Step Functions' rules for
 * names: a name exists once per state machine; starting it again (running with the same
 * input, or closed, or another input) starts nothing. Executions run in the background;
 * `settled()` waits for all of them.
 */
export class LocalFlowExecutions implements FlowExecutions {
  readonly executions = new Map<string, LocalExecution>();
  readonly describeCalls: string[] = [];

  /**
   * `launch` runs each started execution (the fault scheduler makes it an actor of its own,
   * test/sched/scenarios/delivery-world.ts); by default it is run as it is.
   */
  constructor(
    private readonly options: Omit<RunFlowOptions, 'executionName'>,
    private readonly launch: (name: string, run: () => Promise<FlowResult>) => Promise<FlowResult> = (_name, run) =>
      run(),
  ) {}

  start({
    stateMachineArn,
    name,
    input,
  }: {
    stateMachineArn: string;
    name: string;
    input: string;
  }): Promise<StartOutcome> {
    const flow = stateMachineArn.slice(stateMachineArn.lastIndexOf(':') + 1);
    const arn = `arn:aws:states:local:000000000000:execution:${flow}:${name}`;
    if (this.executions.has(arn)) return Promise.resolve('already-started');
    const result = this.launch(name, () => runFlow(flow, JSON.parse(input), { ...this.options, executionName: name }));
    this.executions.set(arn, { flow, name, input, result });
    return Promise.resolve('started');
  }

  inputOf(executionArn: string): Promise<string> {
    this.describeCalls.push(executionArn);
    const execution = this.executions.get(executionArn);
    if (!execution)
      return Promise.reject(
        Object.assign(new Error(`${executionArn} does not exist`), { name: 'ExecutionDoesNotExist' }),
      );
    return Promise.resolve(execution.input);
  }

  async failureOf(executionArn: string): Promise<ExecutionFailure> {
    this.describeCalls.push(executionArn);
    const execution = this.executions.get(executionArn);
    if (!execution) throw Object.assign(new Error(`${executionArn} does not exist`), { name: 'ExecutionDoesNotExist' });
    const { error, cause } = await execution.result;
    return { ...(error ? { error } : {}), ...(cause ? { cause } : {}) };
  }

  /** Runs `flow` under `name` to its end (the failed execution a test's event reports). */
  async run(flow: string, name: string, input: unknown): Promise<FlowResult & { input: string }> {
    await this.start({ stateMachineArn: localStateMachineArn(flow), name, input: JSON.stringify(input) });
    const execution = [...this.executions.values()].find((e) => e.flow === flow && e.name === name)!;
    return { ...(await execution.result), input: execution.input };
  }

  /** Every execution started so far, ended. */
  async settled(): Promise<Array<LocalExecution & { outcome: FlowResult }>> {
    return Promise.all([...this.executions.values()].map(async (e) => ({ ...e, outcome: await e.result })));
  }
}
