import {
  CreateStateMachineCommand,
  DeleteStateMachineCommand,
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  StartExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AslDefinition } from '../../src/local/asl.js';
import type { Execution, StateMachines, Started } from './sfn-target.js';

/**
 * The Step Functions cases in a real account (`npm run test:aws`): each case's definition
 * becomes a STANDARD state machine named `<name>-<key>`, run with the role given as
 * `--role-arn`, and deleted when its executions have ended (or failed to start). Nothing
 * else is created: the fixtures have no Task, and the Distributed Map reads and writes the
 * conformance bucket, which closeTarget empties and deletes.
 */

/** How long one execution may take before the case gives up on it (a Distributed Map run takes tens of seconds). */
const EXECUTION_DEADLINE_MS = 5 * 60_000;
const POLL_MS = 1_000;

export interface AwsStateMachinesOptions {
  client: SFNClient;
  /** The throw-away resources' name (the stack name): every state machine is named after it. */
  name: string;
  /** The role Step Functions runs the state machines as (trusts states.amazonaws.com; see aws.ts for its permissions). */
  roleArn: string;
}

export function awsStateMachines(o: AwsStateMachinesOptions): StateMachines {
  return {
    async run(key, definition, inputs) {
      const stateMachineArn = await create(o, machineName(o.name, key), definition);
      try {
        const out: Started[] = [];
        for (const [i, input] of inputs.entries()) out.push(await execute(o.client, stateMachineArn, `e${i}`, input));
        return out;
      } finally {
        await o.client.send(new DeleteStateMachineCommand({ stateMachineArn }));
      }
    },
  };
}

/** `<name>-<key>` in the characters a state machine name may hold, at most 80 of them. */
export function machineName(name: string, key: string): string {
  return `${name}-${key}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 80);
}

async function create(o: AwsStateMachinesOptions, name: string, definition: AslDefinition): Promise<string> {
  const out = await o.client.send(
    new CreateStateMachineCommand({
      name,
      type: 'STANDARD',
      roleArn: o.roleArn,
      definition: JSON.stringify(definition),
    }),
  );
  return out.stateMachineArn!;
}

async function execute(client: SFNClient, stateMachineArn: string, name: string, input: unknown): Promise<Started> {
  let executionArn: string;
  try {
    const started = await client.send(
      new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }),
    );
    executionArn = started.executionArn!;
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    // Only the service's answer is a refusal; anything else (no network, no credentials) stops the case.
    if (!e.$metadata?.httpStatusCode) throw error;
    return { refused: { name: e.name ?? 'Error', status: e.$metadata.httpStatusCode } };
  }
  const deadline = Date.now() + EXECUTION_DEADLINE_MS;
  for (;;) {
    const out = await client.send(new DescribeExecutionCommand({ executionArn }));
    if (out.status !== 'RUNNING' && out.status !== 'PENDING_REDRIVE') {
      const execution: Execution = { status: out.status ?? 'UNKNOWN', entered: await entered(client, executionArn) };
      if (out.output !== undefined) execution.output = JSON.parse(out.output);
      if (out.error !== undefined) execution.error = out.error;
      if (out.cause !== undefined) execution.cause = out.cause;
      return execution;
    }
    if (Date.now() > deadline) throw new Error(`${executionArn} still ${out.status} after ${EXECUTION_DEADLINE_MS} ms`);
    await sleep(POLL_MS);
  }
}

/** The names of the states entered, from the execution's history (every `…StateEntered` event), in order. */
async function entered(client: SFNClient, executionArn: string): Promise<string[]> {
  const names: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken }));
    for (const event of page.events ?? []) {
      const name = event.stateEnteredEventDetails?.name;
      if (name !== undefined) names.push(name);
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return names;
}
