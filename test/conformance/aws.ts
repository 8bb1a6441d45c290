import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { runCases, type CaseOutcome } from './case.js';
import { DYNAMODB_CASES } from './dynamodb-cases.js';
import { S3_CASES } from './s3-cases.js';
import { closeTarget, openTarget, type ConformanceTarget } from './target.js';

/**
 * `npm run test:aws -- --stack NAME [--region REGION]`: the conformance cases in a real
 * account, with the credentials the shell has (AWS_PROFILE, AWS_REGION, …). It creates a
 * table and a bucket named after NAME (`NAME-conformance`), runs every case, deletes both,
 * and prints one JSON summary on stdout: every case with what AWS documents and what it
 * observed, and the cases that differed. Progress on stderr. Exit 0 when every case answered
 * as documented, 1 when one differed, 2 for bad arguments or no credentials.
 */

const USAGE = 'usage: npm run test:aws -- --stack NAME [--region REGION]   (NAME: 3-40 of a-z, 0-9, -)';

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: { stack: { type: 'string' }, region: { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    return usage((error as Error).message);
  }
  const stack = values.stack;
  if (!stack || !/^[a-z0-9-]{3,40}$/.test(stack)) return usage('--stack NAME is required');
  const region = values.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  if (!region) return usage('--region (or AWS_REGION) is required');
  const cases = [...DYNAMODB_CASES, ...S3_CASES];
  process.stderr.write(`conformance: creating ${stack}-conformance (table and bucket) in ${region} …\n`);
  let target: ConformanceTarget;
  try {
    target = await openTarget({ kind: 'aws', name: stack, region });
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
