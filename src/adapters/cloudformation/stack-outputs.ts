import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CutpointError } from '../../domain/errors.js';

/** One deployed stack as the CLI needs it: its status and its outputs by OutputKey. */
export interface DeployedStack {
  name: string;
  status: string;
  outputs: Record<string, string>;
}

/**
 * DescribeStacks of one stack by name: its outputs, or `undefined` when CloudFormation
 * says the stack does not exist (a `ValidationError` "Stack with id … does not exist" —
 * the only answer DescribeStacks gives for an unknown name). Any other failure is
 * `aws.describe_stacks_failed` naming the SDK error's name only: an SDK message can quote
 * the request, and nothing of the credentials may reach a diagnostic.
 */
export async function describeStack(client: CloudFormationClient, name: string): Promise<DeployedStack | undefined> {
  let stacks;
  try {
    stacks = (await client.send(new DescribeStacksCommand({ StackName: name }))).Stacks ?? [];
  } catch (error) {
    if (error instanceof CutpointError) throw error; // aws.unreachable: no request reached CloudFormation
    const e = error as { name?: string; message?: string };
    if (e.name === 'ValidationError' && /does not exist/.test(e.message ?? '')) return undefined;
    const code = /^[A-Za-z]{1,64}$/.test(e.name ?? '') ? (e.name as string) : 'error';
    throw new CutpointError(
      'Aws.DescribeStacksFailed',
      'aws.describe_stacks_failed',
      `DescribeStacks of stack ${name} failed (${code})`,
      { cause: error },
    );
  }
  const stack = stacks[0];
  if (!stack) return undefined;
  const outputs: Record<string, string> = {};
  for (const o of stack.Outputs ?? [])
    if (o.OutputKey && o.OutputValue !== undefined) outputs[o.OutputKey] = o.OutputValue;
  return { name, status: stack.StackStatus ?? 'UNKNOWN', outputs };
}
