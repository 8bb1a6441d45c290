import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAsl, taskStates } from '../../src/local/asl.js';
import { priceUsage } from '../../src/cost/price.js';
import { measureAppendedBatch, measureDeliveredWindow, type CostWorld } from '../../src/cost/world.js';
import { freshStores } from '../support/emulators.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * `cutpoint cost` measures, it does not assume: one deliver-window execution and one
 * stream-append execution through the local runner on the run's emulators (embedded
 * ClickHouse and PostgreSQL for the window), every Task timed and every request metered.
 */
let world: CostWorld;
const quiet = () => undefined;

beforeAll(async () => {
  const stores = await freshStores();
  const root = await mkdtemp(join(tmpdir(), 'cutpoint-cost-test-'));
  world = { ports: stores.ports, meter: stores.meter, root, close: () => rm(root, { recursive: true, force: true }) };
});

afterAll(async () => {
  await world?.close();
});

const tasksOf = (flow: string) => new Set(taskStates(loadAsl(flow)).map((t) => t.placeholder));

describe('cost measurement', () => {
  it("one appended batch: the Express flow's transitions, its two Lambda steps, one WAL PUT and one head transaction", async () => {
    const m = await measureAppendedBatch(world, { records: 20, recordBytes: 64 }, quiet);
    expect(m).toMatchObject({ flow: 'stream-append', type: 'EXPRESS', stateTransitions: m.result.transitions });
    expect(m.invocations.map((i) => i.placeholder)).toEqual([
      'StreamWriteWalFunctionArn',
      'StreamCommitHeadFunctionArn',
    ]);
    for (const i of m.invocations) expect(tasksOf('stream-append').has(i.placeholder)).toBe(true);
    expect(m.requests['s3.PutObject']).toBe(1);
    expect(m.requests['dynamodb.TransactWriteItems']).toBe(1);
    const priced = priceUsage(m);
    expect(priced.unpriced).toEqual({});
    expect(priced.usd.total).toBeGreaterThan(0);
  });

  it('one delivered window in two parts: 10 + 1 per part transitions, one Lambda invocation per Task entered (parts included), the chunks written as objects', async () => {
    const m = await measureDeliveredWindow(world, { rows: 400, chunkRows: 100, partRows: 200 }, quiet);
    expect(m.result.status).toBe('SUCCEEDED');
    expect(m.parts).toBe(2);
    expect(m.chunks).toBe(4);
    expect(m.stateTransitions).toBe(10 + m.parts);
    const extract = m.invocations.filter((i) => i.placeholder === 'DeliveryExtractLoadPartFunctionArn');
    expect(extract).toHaveLength(m.parts);
    expect(m.invocations.length).toBe(9 + m.parts);
    for (const i of m.invocations) expect(i.memoryMB).toBeGreaterThanOrEqual(128);
    // Every chunk is one immutable object, and the plan one more.
    expect(m.requests['s3.PutObject']).toBeGreaterThanOrEqual(m.chunks + 1);
    expect(m.requests['dynamodb.TransactWriteItems']).toBeGreaterThan(0);
    const priced = priceUsage(m);
    expect(priced.unpriced).toEqual({});
    expect(priced.lambda.invocations).toBe(9 + m.parts);
    expect(priced.usd.stepFunctions).toBeCloseTo(((10 + m.parts) * 0.025) / 1000, 11);
  });

  it('cutpoint cost refuses a bad shape as a usage error before starting anything', async () => {
    for (const argv of [
      ['cost', '--rows', '0'],
      ['cost', '--rows', '10001'],
      ['cost', '--batch-records', 'x'],
      ['cost', '--format', 'yaml'],
      ['cost', 'extra'],
      ['cost', '--batch-records', '1000', '--record-bytes', '4096'],
    ]) {
      const r = await runCutpointInProcess(argv);
      expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
  });
});
