import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCases, type ConformanceCase } from './case.js';
import { DYNAMODB_CASES } from './dynamodb-cases.js';
import { S3_CASES } from './s3-cases.js';
import { SFN_CASES } from './sfn-cases.js';
import { closeTarget, openTarget, type ConformanceTarget } from './target.js';

/**
 * The service behaviours the design relies on (test/conformance/*-cases.ts), on the
 * emulators `npm test` starts and the local state-machine runner: each answers as AWS documents it, or as the case says the
 * emulator differs (and why the code does not depend on it). `npm run test:aws` runs the
 * same cases in a real account (test/conformance/aws.ts).
 */
let target: ConformanceTarget;
beforeAll(async () => {
  target = await openTarget({
    kind: 'emulators',
    name: `c${randomUUID().slice(0, 8)}`,
    region: 'us-east-1',
    endpoints: { dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') },
  });
}, 120_000);
afterAll(async () => {
  if (target) await closeTarget(target);
});

const CASES: readonly ConformanceCase[] = [...DYNAMODB_CASES, ...S3_CASES, ...SFN_CASES];

describe('conformance: the emulators answer as AWS documents, or as each case says they differ', () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', async (_name, i) => {
    const [outcome] = await runCases(target, [CASES[i]!], `${i}-${randomUUID().slice(0, 6)}`);
    expect(outcome!.observed, outcome!.note).toEqual(outcome!.expected);
  });
});
