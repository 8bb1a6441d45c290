import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect } from 'vitest';
import { awsClients } from '../../src/adapters/aws-clients.js';
import type { CutpointConfig } from '../../src/config.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import { scanTable } from './delivery-snapshot.js';

/**
 * A flow started as StartExecution starts it (the local runner, not `cutpoint flow run`)
 * with an execution input its first Task refuses (docs/deploy.md "Flow inputs"): what the run
 * must show, and the evidence that nothing durable was written — every item of the
 * authority table (a raw Scan) and every object of the bucket (key, ETag, size), before
 * and after.
 */

export interface StoreSnapshot {
  table: string;
  bucket: string[];
}

export async function storeSnapshot(config: CutpointConfig): Promise<StoreSnapshot> {
  const s3 = awsClients(config).s3;
  const bucket: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: config.bucketName, ContinuationToken: token }));
    for (const o of page.Contents ?? []) bucket.push(`${o.Key ?? ''} ${o.ETag ?? ''} ${o.Size ?? ''}`);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return { table: await scanTable(config), bucket: bucket.sort() };
}

export const entered = (run: FlowResult): string[] =>
  run.events.filter((e) => e.type === 'StateEntered' && e.state).map((e) => e.state!);
export const why = (run: FlowResult): string => JSON.stringify(run.events.filter((e) => e.error));

export interface Refusal {
  /** The flow's refusal: the error the execution fails with. */
  error: string;
  /** What the cause says (the check's message). */
  cause: string | RegExp;
  /** The states entered, the first Task and the refusal end last. */
  states: string[];
}

/** Runs `start`, expects the refusal at the first Task and the table and bucket exactly as before. */
export async function expectRefusedUnwritten(
  config: CutpointConfig,
  start: () => Promise<FlowResult>,
  refusal: Refusal,
): Promise<FlowResult> {
  const before = await storeSnapshot(config);
  const run = await start();
  expect(run, why(run)).toMatchObject({ status: 'FAILED', error: refusal.error });
  if (typeof refusal.cause === 'string') expect(run.cause).toContain(refusal.cause);
  else expect(run.cause).toMatch(refusal.cause);
  // The first Task failed on the check (Cutpoint.ValidationError) and the refusal ended the run.
  expect(run.events.filter((e) => e.error).map((e) => e.error)[0]).toBe('Cutpoint.ValidationError');
  expect(entered(run)).toEqual(refusal.states);
  expect(await storeSnapshot(config)).toEqual(before);
  return run;
}

/** The check's message for an unknown field `field` of `flow`. */
export const unknownField = (flow: string, field: string): string => `${flow} reads no input field "${field}"`;
