import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertProfileFlag } from '../../src/cli/aws-settings.js';
import type { Ports } from '../../src/ports/index.js';
import { materializeGen0Batch } from '../../src/stream/append/gen0-batch.js';
import { compactLane } from '../../src/stream/compaction/compact-lane.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * Inputs the fuzz suite (test/fuzz/refusals-surface.test.ts) found accepted where they must be
 * refused before anything is touched: a flow input's `max` / `maxRanges` out of the range the
 * CLI allows (the materialize step coerced `"32"`, 0, -1 or 1.5 to a default and ran), and
 * `flow run --name` / `--state-machine-arn` without --aws (ignored: the flow ran locally), and a
 * malformed `--profile` (it reached the SDK: DescribeStacks was attempted under that name).
 * The stores are never reached, so none is given.
 */
const noStores = undefined as unknown as Ports;
const lane = { stream: 'orders', partition: 0 };

describe('flow inputs: lane maintenance knobs are refused, never coerced', () => {
  it.each([0, -1, 1.5, 1001, '32', null, true, 2 ** 53])('stream-materialize max %j', async (max) => {
    await expect(materializeGen0Batch({ ...lane, max }, noStores)).rejects.toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'stream.invalid_materialize_knob',
    });
  });

  it.each([0, 1, 1001, 1.5, '16', null])('stream-compact maxRanges %j', async (maxRanges) => {
    await expect(compactLane({ ...lane, maxRanges }, noStores)).rejects.toMatchObject({
      name: 'Cutpoint.ValidationError',
      code: 'stream.invalid_compaction_knob',
    });
  });
});

describe('cutpoint flow run: --name and --state-machine-arn need --aws', () => {
  const stateDir = join(tmpdir(), `cutpoint-fuzz-findings-${process.pid}-never-created`);
  it.each([
    ['--name', 'trim-1'],
    ['--state-machine-arn', 'arn:aws:states:eu-west-1:111111111111:stateMachine:x'],
  ])('%s without --aws is a usage error before anything runs', async (flag, value) => {
    const r = await runCutpointInProcess(
      ['flow', 'run', 'stream-trim', '--input', '{"stream":"orders","partition":0,"to":0}', flag, value],
      { env: { CUTPOINT_STATE_DIR: stateDir } },
    );
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(/^cli\.usage: --state-machine-arn and --name need --aws\n/),
    });
  });
});

describe('--profile grammar (checked before any AWS lookup)', () => {
  it.each(['ops', 'default', 'ops team', 'ops-prod_1', 'ops@acme.com', 'a'.repeat(128), undefined])(
    'accepts %j',
    (name) => {
      expect(() => assertProfileFlag(name)).not.toThrow();
    },
  );
  it.each([
    '',
    ' ',
    ' ops',
    'ops ',
    'ops\t',
    'ops\n[default]',
    '[ops]',
    'a]b',
    '\u001b[31mops',
    'o\u0085ps',
    'a'.repeat(129),
  ])('refuses %j as a usage error', (name) => {
    expect(() => assertProfileFlag(name)).toThrow(
      expect.objectContaining({ name: 'UsageError', message: expect.stringMatching(/^--profile takes/) }),
    );
  });
});
