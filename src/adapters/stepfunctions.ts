import {
  DescribeExecutionCommand,
  StartExecutionCommand,
  type DescribeExecutionCommandOutput,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AwsConnection } from '../config.js';
import { CutpointError } from '../domain/errors.js';
import { sfnClient } from './aws-clients.js';

export interface DeployedExecution {
  executionArn: string;
  status: string;
  output?: unknown;
  error?: string;
  cause?: string;
}

/**
 * Starts a deployed state machine under an exact execution name and waits for it. A
 * lost StartExecution response is resolved with DescribeExecution of that same name —
 * never a second execution; an existing execution with different input is refused.
 */
export async function startAndWait(
  stateMachineArn: string,
  name: string,
  input: unknown,
  options: { connection: AwsConnection; onPoll?: (status: string) => void },
): Promise<DeployedExecution> {
  const client = sfnClient(options.connection);
  const executionArn = executionArnOf(stateMachineArn, name);
  const body = JSON.stringify(input);
  try {
    await client.send(new StartExecutionCommand({ stateMachineArn, name, input: body }));
  } catch (error) {
    const errorName = (error as { name?: string }).name;
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    const definite = errorName !== 'ExecutionAlreadyExists' && status !== undefined && status >= 400 && status < 500;
    if (definite) throw error;
    // Lost response or an earlier start under the same name: describe, never re-start.
    const existing = await describeOrUndefined(client, executionArn);
    if (!existing)
      throw new CutpointError(
        'Cutpoint.OutcomeUnknown',
        'flow.start_unknown',
        `start of ${name} is unknown and the execution is not visible yet; re-run the same command`,
      );
    if (existing.input !== body) {
      throw new CutpointError(
        'Cutpoint.IdentityConflict',
        'flow.execution_name_taken',
        `execution ${name} exists with different input`,
      );
    }
  }
  for (;;) {
    const out = await client.send(new DescribeExecutionCommand({ executionArn }));
    options.onPoll?.(out.status ?? 'UNKNOWN');
    if (out.status !== 'RUNNING' && out.status !== 'PENDING_REDRIVE') {
      return {
        executionArn,
        status: out.status ?? 'UNKNOWN',
        output: out.output ? JSON.parse(out.output) : undefined,
        error: out.error,
        cause: out.cause,
      };
    }
    await sleep(2000);
  }
}

async function describeOrUndefined(
  client: SFNClient,
  executionArn: string,
): Promise<DescribeExecutionCommandOutput | undefined> {
  try {
    return await client.send(new DescribeExecutionCommand({ executionArn }));
  } catch (error) {
    if ((error as { name?: string }).name === 'ExecutionDoesNotExist') return undefined;
    throw error;
  }
}

/** arn:aws:states:r:a:stateMachine:M → arn:aws:states:r:a:execution:M:name */
export function executionArnOf(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;
}
