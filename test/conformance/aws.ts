import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runCases, type CaseOutcome } from './case.js';
import { DYNAMODB_CASES } from './dynamodb-cases.js';
import { S3_CASES } from './s3-cases.js';
import { SFN_CASES } from './sfn-cases.js';
import { closeTarget, openTarget, type ConformanceTarget } from './target.js';

/**
 * `npm run test:aws -- --stack NAME --role-arn ARN [--region REGION]`: the conformance cases
 * in a real account, with the credentials the shell has (AWS_PROFILE, AWS_REGION, …). It
 * creates a table and a bucket named after NAME (`NAME-conformance`), runs every case —
 * each Step Functions case on a state machine of its own, `NAME-conformance-…`, created and
 * deleted by the case — deletes the table and the bucket, and prints one JSON summary on
 * stdout: every case with what AWS documents and what it observed, and the cases that
 * differed. Progress on stderr. Exit 0 when every case answered as documented, 1 when one
 * differed, 2 for bad arguments or no credentials.
 *
 * ARN is an existing IAM role the state machines run as (no IAM client here: the run creates
 * no role). It must trust states.amazonaws.com and allow, for the Distributed Map cases,
 * s3:GetObject and s3:PutObject on `arn:aws:s3:::NAME-conformance/*`, and states:StartExecution
 * on `arn:aws:states:REGION:ACCOUNT:stateMachine:NAME-conformance-*` with
 * states:DescribeExecution and states:StopExecution on
 * `arn:aws:states:REGION:ACCOUNT:execution:NAME-conformance-*` (its child executions).
 */

const USAGE =
  'usage: npm run test:aws -- --stack NAME --role-arn ARN [--region REGION]   (NAME: 3-40 of a-z, 0-9, -; ARN: arn:aws:iam::ACCOUNT:role/…)';
/** An IAM role's ARN, in any partition. */
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: { stack: { type: 'string' }, 'role-arn': { type: 'string' }, region: { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    return usage((error as Error).message);
  }
  const stack = values.stack;
  if (!stack || !/^[a-z0-9-]{3,40}$/.test(stack)) return usage('--stack NAME is required');
  const roleArn = values['role-arn'];
  if (!roleArn || !ROLE_ARN.test(roleArn))
    return usage('--role-arn ARN (an IAM role for the state machines) is required');
  const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) return usage('--region (or AWS_REGION) is required');
  const cases = [...DYNAMODB_CASES, ...S3_CASES, ...SFN_CASES];
  process.stderr.write(`conformance: creating ${stack}-conformance (table and bucket) in ${region} …\n`);
  let target: ConformanceTarget;
  try {
    target = await openTarget({ kind: 'aws', name: stack, region, roleArn });
  } catch (error) {
    const e = error as Error;
    const credentials = e.name === 'CredentialsProviderError' || /credential/i.test(e.message);
    process.stderr.write(`conformance: ${credentials ? 'no AWS credentials' : e.name}: ${e.message}\n`);
    return credentials ? 2 : 1;
  }
  let outcomes: CaseOutcome[];
  try {
    process.stderr.write(`conformance: running ${cases.length} cases …\n`);
    outcomes = await runCases(target, cases, randomUUID().slice(0, 8));
  } finally {
    process.stderr.write('conformance: deleting the table and the bucket …\n');
    await closeTarget(target);
  }
  const differed = outcomes.filter((o) => o.differs).map((o) => o.case);
  process.stdout.write(
    `${JSON.stringify({ target: 'aws', stack, region, cases: outcomes.length, differed, outcomes })}\n`,
  );
  return differed.length === 0 ? 0 : 1;
}

function usage(message: string): number {
  process.stderr.write(`conformance: ${message}\n${USAGE}\n`);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
