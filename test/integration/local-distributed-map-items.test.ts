import { beforeAll, describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../src/local/asl.js';
import type { AslState } from '../../statemachines/spec/task.js';
import { runFlow } from '../../src/local/flow-runner.js';
import { recordingSteps } from '../fixtures/distributed-map-steps.js';
import { freshStores, type TestStores } from '../support/emulators.js';

/**
 * Distributed Map fields beyond the S3 reader (see local-distributed-map.test.ts): items
 * from the state input (ItemsPath, InputPath), `$$.Map.Item.*` in ItemSelector, unlimited
 * MaxConcurrency, the Map's output without ResultWriter, nesting, and what the runner
 * refuses before it starts.
 */

let stores: TestStores;

beforeAll(async () => {
  stores = await freshStores();
});

const PROCESSOR = {
  ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
  StartAt: 'ExtractLoadPart',
  States: {
    ExtractLoadPart: { Type: 'Task', Resource: '${TestExtractLoadPartFunctionArn}', TimeoutSeconds: 60, End: true },
  },
};

function flowWith(map: Record<string, unknown>): AslDefinition {
  return {
    StartAt: 'Parts',
    States: { Parts: { Type: 'Map', ItemProcessor: PROCESSOR, End: true, ...map } as AslState },
  };
}

async function run(definition: AslDefinition, input: unknown) {
  const steps = recordingSteps();
  const result = await runFlow('items-fixture', input, {
    ports: stores.ports,
    retryIntervalMs: 0,
    definition,
    taskHandlers: steps.taskHandlers,
    executionName: 'exec-1',
  });
  return { result, steps };
}

const parts = (count: number) => Array.from({ length: count }, (_, n) => ({ n }));

describe('Distributed Map over the state input', () => {
  it('ItemsPath + ItemSelector ($$.Map.Item.Index/Value, $$.Execution.Name, $), unlimited MaxConcurrency, output = child outputs in item order', async () => {
    const definition = flowWith({
      ItemsPath: '$.parts',
      ItemSelector: {
        'index.$': '$$.Map.Item.Index',
        'value.$': '$$.Map.Item.Value',
        'execution.$': '$$.Execution.Name',
        'shared.$': '$.shared',
      },
      MaxConcurrency: 0,
      ResultPath: '$.results',
    });
    const input = { shared: 'S', parts: parts(12) };
    const { result, steps } = await run(definition, input);
    expect(result.status, result.cause).toBe('SUCCEEDED');
    expect(result.output).toEqual({ ...input, results: input.parts.map(({ n }) => ({ part: n, rows: n * 10 })) });
    const calls = [...steps.calls].sort((a, b) => (a as { index: number }).index - (b as { index: number }).index);
    expect(calls).toEqual(input.parts.map((value, index) => ({ index, value, execution: 'exec-1', shared: 'S' })));
    expect(steps.state.maxInFlight).toBe(12);
    expect(result.transitions).toBe(1 + 12);
  });

  it('InputPath selects the items when ItemsPath is absent; a tolerated failure stays in the output as its child record', async () => {
    const definition = flowWith({ InputPath: '$.parts', ToleratedFailurePercentage: 25 });
    const input = { parts: [{ n: 0 }, { n: 1, fail: true }, { n: 2 }, { n: 3 }] };
    const { result } = await run(definition, input);
    expect(result.status, result.cause).toBe('SUCCEEDED');
    const output = result.output as unknown[];
    expect(output).toHaveLength(4);
    expect(output[0]).toEqual({ part: 0, rows: 0 });
    expect(output[1]).toEqual(
      expect.objectContaining({
        Status: 'FAILED',
        Error: 'Test.PartFailed',
        Input: JSON.stringify({ n: 1, fail: true }),
      }),
    );
    expect(result.mapRuns).toEqual([expect.objectContaining({ items: 4, succeeded: 3, failed: 1 })]);
  });

  it('with no tolerance given, one failed item fails the Map Run (States.ExceedToleratedFailureThreshold, uncaught here)', async () => {
    const { result } = await run(flowWith({ ItemsPath: '$.parts', MaxConcurrency: 1 }), {
      parts: [{ n: 0 }, { n: 1, fail: true }, { n: 2 }],
    });
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('States.ExceedToleratedFailureThreshold');
    expect(result.cause).toMatch(/1 of 3 items failed/);
    // The run stops starting children once the threshold is exceeded.
    expect(result.mapRuns).toEqual([expect.objectContaining({ items: 3, succeeded: 1, failed: 1 })]);
  });

  it('an empty item list succeeds with an empty result and no child', async () => {
    const { result, steps } = await run(flowWith({ ItemsPath: '$.parts' }), { parts: [] });
    expect(result.output).toEqual([]);
    expect(steps.calls).toEqual([]);
  });

  it('a Distributed Map nested in a Parallel branch runs its children with the same Task overrides', async () => {
    const definition: AslDefinition = {
      StartAt: 'Both',
      States: { Both: { Type: 'Parallel', Branches: [flowWith({ ItemsPath: '$.parts' })], End: true } },
    };
    const { result } = await run(definition, { parts: parts(3) });
    expect(result.status, result.cause).toBe('SUCCEEDED');
    expect(result.output).toEqual([[0, 1, 2].map((n) => ({ part: n, rows: n * 10 }))]);
    expect(result.mapRuns).toEqual([expect.objectContaining({ state: 'Parts', items: 3, succeeded: 3 })]);
  });

  it.each([
    ['ItemsPath not an array', { ItemsPath: '$.parts' }, { parts: { n: 1 } }, /ItemsPath does not point to an array/],
    [
      'MaxConcurrencyPath negative',
      { ItemsPath: '$.parts', MaxConcurrencyPath: '$.max' },
      { parts: [], max: -1 },
      /MaxConcurrency resolved to -1/,
    ],
    [
      'ToleratedFailurePercentagePath over 100',
      { ItemsPath: '$.parts', ToleratedFailurePercentagePath: '$.pct' },
      { parts: [], pct: 101 },
      /ToleratedFailurePercentage resolved to 101/,
    ],
    ['MaxConcurrencyPath missing', { ItemsPath: '$.parts', MaxConcurrencyPath: '$.nope' }, { parts: [] }, /\$\.nope/],
  ])('%s fails the state with States.Runtime', async (_what, map, input, cause) => {
    const { result, steps } = await run(flowWith(map), input);
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('States.Runtime');
    expect(result.cause).toMatch(cause);
    expect(steps.calls).toEqual([]);
  });

  it('ResultWriter to a bucket other than the object store fails the Map with States.ResultWriterFailed', async () => {
    const definition = flowWith({
      ItemsPath: '$.parts',
      ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'elsewhere', Prefix: 'r' } },
    });
    const { result } = await run(definition, { parts: parts(2) });
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('States.ResultWriterFailed');
    expect(result.cause).toMatch(/"elsewhere" is not the object store's bucket/);
  });
});

describe('what the runner refuses before the execution starts (never ignored)', () => {
  const reader = {
    Resource: 'arn:aws:states:::s3:getObject',
    ReaderConfig: { InputType: 'JSON' },
    Parameters: { Bucket: 'b', Key: 'k' },
  };
  it.each([
    [
      'ItemBatcher',
      flowWith({ ItemsPath: '$.parts', ItemBatcher: { MaxItemsPerBatch: 2 } }),
      /Parts: ItemBatcher is not supported/,
    ],
    [
      'an EXPRESS child',
      flowWith({ ItemProcessor: { ...PROCESSOR, ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'EXPRESS' } } }),
      /ExecutionType EXPRESS is not supported/,
    ],
    [
      'a CSV ItemReader',
      flowWith({ ItemReader: { ...reader, ReaderConfig: { InputType: 'CSV', CSVHeaderLocation: 'FIRST_ROW' } } }),
      /ReaderConfig must be exactly/,
    ],
    ['ItemReader with ItemsPath', flowWith({ ItemReader: reader, ItemsPath: '$.parts' }), /ItemsPath with ItemReader/],
    [
      'ReaderConfig.MaxItems',
      flowWith({ ItemReader: { ...reader, ReaderConfig: { InputType: 'JSON', MaxItems: 5 } } }),
      /ReaderConfig must be exactly/,
    ],
    [
      'an ItemReader VersionId',
      flowWith({ ItemReader: { ...reader, Parameters: { Bucket: 'b', Key: 'k', VersionId: 'v1' } } }),
      /ItemReader.Parameters: VersionId not supported/,
    ],
    [
      'an inline Map with a ResultWriter',
      flowWith({
        ItemProcessor: { ...PROCESSOR, ProcessorConfig: { Mode: 'INLINE' } },
        ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'b' } },
      }),
      /ResultWriter need\(s\) ItemProcessor.ProcessorConfig.Mode DISTRIBUTED/,
    ],
  ])('%s', async (_what, definition, message) => {
    const steps = recordingSteps();
    const running = runFlow(
      'refused',
      { parts: parts(2) },
      { ports: stores.ports, definition, taskHandlers: steps.taskHandlers },
    );
    await expect(running).rejects.toThrow(message);
    await expect(running).rejects.toMatchObject({ name: 'Cutpoint.UnsupportedAsl', code: 'local.unsupported_asl' });
    expect(steps.calls).toEqual([]);
  });
});
