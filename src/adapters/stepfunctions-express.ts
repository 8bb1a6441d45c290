import { StartSyncExecutionCommand } from '@aws-sdk/client-sfn';
import type { AwsConnection } from '../config.js';
import { CutpointError, UnreachableError } from '../domain/errors.js';
import { isNoConnection } from './aws-errors.js';
import { sfnClient } from './aws-clients.js';
import type { DeployedExecution } from './stepfunctions.js';

/**
 * Runs a deployed EXPRESS state machine synchronously (StartSyncExecution) under the given
 * execution name and returns its end state. Express workflows have no StartExecution +
 * DescribeExecution pair that `startAndWait` could use: an Express execution cannot be
 * described by name, and Step Functions does not refuse a second Express execution with
 * the same name. So a lost StartSyncExecution response (timeout, network, 5xx) cannot be
 * resolved here by looking the execution up; it surfaces as `flow.start_unknown`, and the
 * caller re-runs the same command with the same identity. That is safe only because the
 * flow itself is idempotent by that identity: for stream-append the attempt id names the
 * WAL object and the intent, so a re-run of the same attempt reuses them and can commit
 * the batch at most once. A re-run under a new identity (a new attempt) is never the fix.
 */
export async function startSyncExpress(
  stateMachineArn: string,
  name: string,
  input: unknown,
  options: { connection: AwsConnection },
): Promise<DeployedExecution> {
  // No SDK retries: the caller decides, by exact identity, what a retry means.
  const client = sfnClient(options.connection);
  try {
    const out = await client.send(
      new StartSyncExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
    );
    return {
      executionArn: out.executionArn ?? '',
      status: out.status ?? 'UNKNOWN',
      output: out.output ? JSON.parse(out.output) : undefined,
      error: out.error,
      cause: out.cause,
    };
  } catch (error) {
    if (provablyNotStarted(error)) throw error;
    throw new CutpointError(
      'Cutpoint.OutcomeUnknown',
      'flow.start_unknown',
      `the response of express execution ${name} was lost (${(error as { code?: string }).code ?? (error as Error).name}); an Express execution cannot be described by name`,
      { cause: error },
    );
  } finally {
    client.destroy();
  }
}

/** Errors that arrive before the request could reach Step Functions, or a 4xx refusal. */
const UNSENT = new Set(['CredentialsProviderError', 'TokenProviderError', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED']);

/**
 * The start provably never happened: the request could not be sent (no credentials, no
 * connection: aws-errors.ts), or Step Functions refused it with a 4xx (bad ARN, no
 * permission, invalid input) — but not ExecutionAlreadyExists, which says one did start.
 */
export function provablyNotStarted(error: unknown): boolean {
  if (error instanceof UnreachableError || isNoConnection(error)) return true;
  const e = error as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  if (e.name === 'ExecutionAlreadyExists') return false;
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 400 && status < 500) return true;
  return UNSENT.has(e.name ?? '') || UNSENT.has(e.code ?? '');
}
