import { firstTaskInput } from '../../src/engine/flow-input.js';
import type { Ports } from '../../src/ports/index.js';
import { needOf, type HandlerNeeds, type StepHandler } from '../../src/registry/handler-contract.js';
import { lambdaHandler } from './telemetry.js';

/** A use case: `(input, ports) => result`. All logic lives there, none here. */
export type UseCase<O> = (input: unknown, ports: Ports) => Promise<O>;

/**
 * Builds the thin Lambda handler for one Task step: middy around the use case. Ports
 * come from the needs' provider (registry `needs: 'ports'`) so Lambda builds them once per
 * cold start and the local runner hands in the emulators' ports; logs, metrics and traces
 * come from the telemetry middlewares (telemetry.ts). No try/catch: a domain error leaves
 * with its stable `name`, which is what the state machine's Retry and Catch match on.
 */
export function step<O>(useCase: UseCase<O>) {
  return (needs: HandlerNeeds): StepHandler => {
    const ports = needOf(needs, 'ports');
    return lambdaHandler(async (event: unknown) => useCase(event, await ports()));
  };
}

/**
 * The handler of a flow's first Task (docs/deploy.md "Flow inputs"): the execution input the Task
 * passes (`executionInput`, from the context object) is checked against its flow's fields
 * before the ports are built or the use case runs; the use case gets the step's own input
 * (src/engine/flow-input.ts firstTaskInput).
 */
export function firstStep<O>(useCase: UseCase<O>) {
  return (needs: HandlerNeeds): StepHandler => {
    const ports = needOf(needs, 'ports');
    return lambdaHandler(async (event: unknown) => {
      const input = firstTaskInput(event);
      return useCase(input, await ports());
    });
  };
}
