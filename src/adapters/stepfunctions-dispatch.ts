import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { CutpointError } from '../domain/errors.js';
import type { FlowExecutions, StartOutcome } from '../ports/executions.js';

/**
 * How long (ms) an execution's startDate may lie before our StartExecution was sent and still
 * be ours (clock skew between Lambda and Step Functions). An older one is a running
 * execution a previous event started.
 */
const START_SKEW_MS = 5_000;

/**
 * The recovery dispatcher's Step Functions: StartExecution by exact name and
 * DescribeExecution (an input cut short, a failure's error and cause). SDK retries stay on: a named start is idempotent (same name and input:
 * Step Functions returns the running execution; a closed one or another input:
 * ExecutionAlreadyExists), so a retried or duplicated start can never make a second one.
 */
export function openFlowExecutions(
  client: SFNClient = new SFNClient({}),
  instrument: (client: SFNClient) => SFNClient = (c) => c,
): FlowExecutions {
  client = instrument(client);
  return {
    async start({ stateMachineArn, name, input }) {
      const sentAt = Date.now();
      try {
        const out = await client.send(new StartExecutionCommand({ stateMachineArn, name, input }));
        return startOutcomeOf(out.startDate, sentAt);
      } catch (error) {
        if ((error as { name?: string }).name === 'ExecutionAlreadyExists') return 'already-started';
        throw error;
      }
    },
    async inputOf(executionArn) {
      const out = await client.send(new DescribeExecutionCommand({ executionArn, includedData: 'ALL_DATA' }));
      if (typeof out.input !== 'string' || out.inputDetails?.included === false) {
        throw new CutpointError(
          'Recovery.InputUnavailable',
          'recovery.input_unavailable',
          `DescribeExecution returned no input for ${executionArn}`,
        );
      }
      return out.input;
    },
    async failureOf(executionArn) {
      const out = await client.send(new DescribeExecutionCommand({ executionArn, includedData: 'ALL_DATA' }));
      return { ...(out.error ? { error: out.error } : {}), ...(out.cause ? { cause: out.cause } : {}) };
    },
  };
}

/** StartExecution answered: a start date from before the request means the running execution of an earlier start. */
export function startOutcomeOf(startDate: Date | undefined, sentAtMs: number): StartOutcome {
  return startDate !== undefined && startDate.getTime() < sentAtMs - START_SKEW_MS ? 'already-started' : 'started';
}
