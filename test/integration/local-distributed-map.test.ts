import { beforeAll, describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../src/local/asl.js';
import { RESULT_WRITE_CUT_POINT } from '../../src/local/distributed-map-io.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { fixtureFlow, recordingSteps, type Part } from '../fixtures/distributed-map-steps.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/**
 * The local runner runs the deliver-window flow's Distributed Map shape (fixture
 * test/fixtures/distributed-map.asl.json) as AWS does: items from an S3 JSON array in the
 * S3 emulator, one child execution per item, MaxConcurrencyPath, the tolerated-failure
 * threshold with the Map's Catch, and ResultWriter's manifest and result files.
 */

let stores: TestStores;
let seq = 0;

beforeAll(async () => {
  stores = await freshStores();
});

async function putJson(key: string, value: unknown): Promise<void> {
  const outcome = await stores.ports.objects.put(
    'test.plan.put',
    key,
    new TextEncoder().encode(JSON.stringify(value)),
    {},
  );
  expect(outcome.status).toBe('APPLIED');
}

async function getJson(key: string): Promise<unknown> {
  const stored = await stores.ports.objects.get(key);
  expect(stored, key).toBeDefined();
  return JSON.parse(Buffer.from(stored!.bytes).toString('utf8'));
}

/** Writes the parts to S3 and runs the fixture flow over them. */
async function run(
  parts: unknown,
  options: { maxConcurrency?: number; bucket?: string; definition?: AslDefinition } = {},
) {
  const id = `inv-${++seq}`;
  const key = `plans/${id}/parts.json`;
  await putJson(key, parts);
  const steps = recordingSteps();
  const plan = {
    bucket: options.bucket ?? stores.config.bucketName,
    key,
    maxConcurrency: options.maxConcurrency ?? 4,
    resultsPrefix: `results/${id}`,
  };
  const input = { invocationId: id, fence: 7, plan };
  const result = await runFlow('distributed-map-fixture', input, {
    ports: stores.ports,
    retryIntervalMs: 0,
    definition: options.definition ?? fixtureFlow(),
    taskHandlers: steps.taskHandlers,
  });
  return { result, steps, input, plan };
}

const partsOf = (count: number, tweak: (p: Part) => Part = (p) => p): Part[] =>
  Array.from({ length: count }, (_, n) => tweak({ n }));
const entered = (result: FlowResult) => result.events.filter((e) => e.type === 'StateEntered').map((e) => e.state);
const parentTransitions = (result: FlowResult) =>
  result.events.filter((e) => e.type === 'StateEntered' || e.type === 'StateRetried').length;

interface Manifest {
  DestinationBucket: string;
  MapRunArn: string;
  ResultFiles: Record<'SUCCEEDED' | 'FAILED' | 'PENDING', Array<{ Key: string; Size: number }>>;
}

describe('Distributed Map over an S3 JSON array (ItemReader, ItemSelector, MaxConcurrencyPath, ResultWriter)', () => {
  it('runs every item once as its own child execution, never more than MaxConcurrencyPath at once, and writes the results like AWS', async () => {
    const parts = partsOf(50, (p) => (p.n === 17 ? { ...p, crashOnce: true } : p));
    const { result, steps, input, plan } = await run(parts, { maxConcurrency: 4 });
    expect(result.status, result.cause).toBe('SUCCEEDED');
    expect(entered(result)).toEqual(['Plan', 'ExtractLoadParts', 'VerifyEof']);
    expect(result.output).toEqual({ ...input, verified: { ok: true } });

    // Each item ran once with its ItemSelector input (part 17 twice: its child retried the crash).
    const byPart = (steps.calls as Array<{ part: Part }>).filter(
      (c, i, all) => all.findIndex((d) => d.part.n === c.part.n) === i,
    );
    expect(byPart.map((c) => c.part.n).sort((a, b) => a - b)).toEqual(parts.map((p) => p.n));
    for (const call of byPart)
      expect(call).toEqual({ invocationId: input.invocationId, fence: 7, part: parts[call.part.n] });
    expect(steps.calls).toHaveLength(51);
    expect(steps.attempts.get(17)).toBe(2);
    // The child's retrier waits 1 s in the ASL; retryIntervalMs 0 reaches child executions too.
    const [first, second] = steps.startedAt.get(17)!;
    expect(second! - first!).toBeLessThan(500);
    expect(steps.state.maxInFlight).toBe(4);

    // Transitions: the parent's plus every child's (50 entered, 1 retry), as AWS bills them.
    const [mapRun] = result.mapRuns;
    expect(result.mapRuns).toEqual([
      {
        state: 'ExtractLoadParts',
        mapRunArn: expect.stringContaining(':mapRun:distributed-map-fixture/ExtractLoadParts:'),
        items: 50,
        succeeded: 50,
        failed: 0,
        transitions: 51,
      },
    ]);
    expect(parentTransitions(result)).toBe(3);
    expect(result.transitions).toBe(3 + 51);
    expect(result.events.filter((e) => e.type.startsWith('MapRun')).map((e) => e.type)).toEqual([
      'MapRunStarted',
      'MapRunSucceeded',
    ]);

    // ResultWriter: <prefix>/<map run id>/manifest.json and SUCCEEDED_0.json, read back from the emulator.
    const runId = mapRun!.mapRunArn.split(':').pop();
    const manifest = (await getJson(`${plan.resultsPrefix}/${runId}/manifest.json`)) as Manifest;
    expect(manifest.DestinationBucket).toBe(stores.config.bucketName);
    expect(manifest.MapRunArn).toBe(mapRun!.mapRunArn);
    expect(manifest.ResultFiles.FAILED).toEqual([]);
    expect(manifest.ResultFiles.SUCCEEDED).toEqual([
      { Key: `${plan.resultsPrefix}/${runId}/SUCCEEDED_0.json`, Size: expect.any(Number) },
    ]);
    const succeeded = (await getJson(manifest.ResultFiles.SUCCEEDED[0]!.Key)) as Array<Record<string, unknown>>;
    expect(succeeded).toHaveLength(50);
    for (const [n, record] of succeeded.entries()) {
      expect(record.Status).toBe('SUCCEEDED');
      expect(JSON.parse(record.Input as string)).toEqual({
        invocationId: input.invocationId,
        fence: 7,
        part: parts[n],
      });
      expect(JSON.parse(record.Output as string)).toEqual({ part: n, rows: n * 10 });
      expect(record.ExecutionArn).toMatch(
        /^arn:aws:states:local:000000000000:execution:distributed-map-fixture\/ExtractLoadParts:/,
      );
    }
  });

  it('MaxConcurrencyPath 1 runs the items one at a time', async () => {
    const { result, steps } = await run(partsOf(6), { maxConcurrency: 1 });
    expect(result.status, result.cause).toBe('SUCCEEDED');
    expect(steps.calls).toHaveLength(6);
    expect(steps.state.maxInFlight).toBe(1);
  });

  it('a failing item fails the Map with States.ExceedToleratedFailureThreshold (ToleratedFailurePercentage 0) and the Catch route is taken', async () => {
    const { result, plan } = await run(
      partsOf(10, (p) => (p.n === 3 ? { ...p, fail: true } : p)),
      { maxConcurrency: 2 },
    );
    expect(result.status).toBe('SUCCEEDED');
    expect(entered(result)).toEqual(['Plan', 'ExtractLoadParts', 'PartsFailed']);
    const output = result.output as { error: { Error: string; Cause: string } };
    expect(output.error.Error).toBe('States.ExceedToleratedFailureThreshold');
    expect(result.events).toContainEqual(expect.objectContaining({ type: 'StateCaught', state: 'ExtractLoadParts' }));
    expect(result.events).toContainEqual(
      expect.objectContaining({
        type: 'MapRunItemFailed',
        state: 'ExtractLoadParts',
        item: 3,
        error: 'Test.PartFailed',
      }),
    );
    expect(result.events).toContainEqual(
      expect.objectContaining({
        type: 'MapRunFailed',
        state: 'ExtractLoadParts',
        error: 'States.ExceedToleratedFailureThreshold',
      }),
    );
    const [mapRun] = result.mapRuns;
    expect(mapRun!.failed).toBe(1);
    // AWS writes the results of a failed Map Run too: the failed child is in FAILED_0.json.
    const runId = mapRun!.mapRunArn.split(':').pop();
    const manifest = (await getJson(`${plan.resultsPrefix}/${runId}/manifest.json`)) as Manifest;
    const failed = (await getJson(manifest.ResultFiles.FAILED[0]!.Key)) as Array<Record<string, unknown>>;
    expect(failed).toEqual([
      expect.objectContaining({ Status: 'FAILED', Error: 'Test.PartFailed', Cause: 'part 3 failed' }),
    ]);
  });

  it('ToleratedFailureCount lets a Map Run with that many failed items pass, and fails it at one more', async () => {
    const tolerating = (count: number): AslDefinition => {
      const definition = fixtureFlow();
      const map = definition.States.ExtractLoadParts!;
      delete map.ToleratedFailurePercentage;
      map.ToleratedFailureCount = count;
      return definition;
    };
    const parts = partsOf(8, (p) => (p.n === 2 || p.n === 5 ? { ...p, fail: true } : p));
    const passes = await run(parts, { definition: tolerating(2) });
    expect(entered(passes.result)).toEqual(['Plan', 'ExtractLoadParts', 'VerifyEof']);
    expect(passes.result.mapRuns).toEqual([expect.objectContaining({ items: 8, succeeded: 6, failed: 2 })]);
    const fails = await run(parts, { definition: tolerating(1) });
    expect(entered(fails.result)).toEqual(['Plan', 'ExtractLoadParts', 'PartsFailed']);
  });

  it('Retry on the Map state re-runs the whole Map Run, like a Task', async () => {
    const definition = fixtureFlow();
    definition.States.ExtractLoadParts!.Retry = [
      { ErrorEquals: ['States.ExceedToleratedFailureThreshold'], MaxAttempts: 1 },
    ];
    const { result, steps } = await run(
      partsOf(5, (p) => (p.n === 1 ? { ...p, failOnce: true } : p)),
      { definition, maxConcurrency: 1 },
    );
    expect(entered(result)).toEqual(['Plan', 'ExtractLoadParts', 'VerifyEof']);
    expect(result.events.filter((e) => e.type === 'StateRetried').map((e) => e.state)).toEqual(['ExtractLoadParts']);
    expect(result.mapRuns.map((r) => [r.failed, r.succeeded])).toEqual([
      [1, 1],
      [0, 5],
    ]);
    expect(steps.attempts.get(1)).toBe(2);
  });
});

describe('ResultWriter at its cut point (local.map-run.result-write)', () => {
  it.each([
    ['lose-response', 'SUCCEEDED', undefined],
    ['fail', 'FAILED', 'States.ResultWriterFailed'],
    ['lose-request', 'FAILED', 'States.ResultWriterFailed'],
  ])(
    '%s: the run reads the exact key back and fails only if the results are not there',
    async (kind, status, error) => {
      const injector = stores.faults.arm(`${RESULT_WRITE_CUT_POINT}:${kind}`);
      try {
        const { result } = await run(partsOf(3));
        expect(injector.fired).toEqual([expect.objectContaining({ cutPoint: RESULT_WRITE_CUT_POINT, kind })]);
        expect(result.status).toBe(status);
        expect(result.error).toBe(error);
      } finally {
        stores.faults.disarm();
      }
    },
  );
});

describe('ItemReader refusals (States.ItemReaderFailed, not caught by a Catch for the threshold)', () => {
  it.each([
    ['a bucket that is not the object store', [{ n: 0 }], 'another-bucket', /not the object store's bucket/],
    ['an object that is a JSON object, not an array', { parts: [{ n: 0 }] }, undefined, /not an array/],
    ['an object that is not JSON', 'not json', undefined, /not JSON/],
  ])('%s', async (_what, parts, bucket, cause) => {
    if (typeof parts === 'string') {
      const { result } = await runRaw(parts);
      expectReaderFailed(result, cause);
      return;
    }
    const { result, steps } = await run(parts, bucket ? { bucket } : {});
    expectReaderFailed(result, cause);
    expect(steps.calls).toEqual([]);
  });
});

async function runRaw(text: string) {
  const key = `plans/raw-${++seq}.json`;
  await stores.ports.objects.put('test.plan.put', key, new TextEncoder().encode(text), {});
  const steps = recordingSteps();
  const plan = { bucket: stores.config.bucketName, key, maxConcurrency: 1, resultsPrefix: 'results/raw' };
  const result = await runFlow(
    'distributed-map-fixture',
    { invocationId: 'raw', fence: 1, plan },
    { ports: stores.ports, retryIntervalMs: 0, definition: fixtureFlow(), taskHandlers: steps.taskHandlers },
  );
  return { result, steps };
}

function expectReaderFailed(result: FlowResult, cause: RegExp): void {
  expect(result.status).toBe('FAILED');
  expect(result.error).toBe('States.ItemReaderFailed');
  expect(result.cause).toMatch(cause);
  expect(result.mapRuns).toEqual([]);
}
