import { mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LaneRef } from '../../src/domain/stream.js';
import { runFlow } from '../../src/local/flow-runner.js';
import type { Fence } from '../../src/domain/fence.js';
import { laneWithRanges } from '../faults/stream-compaction-world.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { entered, expectRefusedUnwritten, storeSnapshot, unknownField, why } from '../support/flow-input-refusal.js';
import { newGenerationCase } from '../support/generation-fixture.js';

/*
 * The generation and stream flows started as StartExecution starts them (the console,
 * `aws stepfunctions start-execution`, an EventBridge rule): the local runner with the
 * execution input as given, not `cutpoint flow run`. A field the flow does not read is
 * refused by its first Task (docs/deploy.md "Flow inputs") before anything durable is written; the
 * same input without it runs as before.
 */

let stores: TestStores;
const start = (flow: string, input: unknown) => runFlow(flow, input, { ports: stores.ports, retryIntervalMs: 0 });
const b64 = (text: string) => Buffer.from(text).toString('base64');

beforeAll(async () => {
  stores = await freshStores();
}, 60_000);

describe('commit-generation', () => {
  it('an unknown field is Generation.Rejected at RegisterTask, nothing written; without it the task commits', async () => {
    const c = await newGenerationCase(stores.ports, 'flow-input');
    await expectRefusedUnwritten(stores.config, () => start('commit-generation', { ...c.input, extra: 1 }), {
      error: 'Generation.Rejected',
      cause: unknownField('commit-generation', 'extra'),
      states: ['IsRecovery', 'Init', 'RegisterTask', 'Rejected'],
    });
    const run = await start('commit-generation', c.input);
    expect(run, why(run)).toMatchObject({
      status: 'SUCCEEDED',
      output: { outcome: 'COMMITTED', root: c.root, taskId: c.input.taskId },
    });
  });

  it('a recovery start: a field beside the envelope or in its original input is refused the same way; the clean envelope finishes the task', async () => {
    const c = await newGenerationCase(stores.ports, 'flow-input-recovery');
    const envelope = (original: object, extra: object = {}) => ({
      recoveryOf: 'arn:aws:states:eu-west-1:111111111111:execution:commit-generation:x',
      originalInput: JSON.stringify(original),
      ...extra,
    });
    const states = [
      'IsRecovery',
      'UnwrapRecovery',
      'IsNestedRecovery',
      'UseOriginalInput',
      'Init',
      'RegisterTask',
      'Rejected',
    ];
    await expectRefusedUnwritten(stores.config, () => start('commit-generation', envelope({ ...c.input, extra: 1 })), {
      error: 'Generation.Rejected',
      cause: unknownField('commit-generation', 'extra'),
      states,
    });
    await expectRefusedUnwritten(stores.config, () => start('commit-generation', envelope(c.input, { sources: [] })), {
      error: 'Generation.Rejected',
      cause: unknownField('commit-generation', 'sources'),
      states,
    });
    const run = await start('commit-generation', envelope(c.input));
    expect(run, why(run)).toMatchObject({
      status: 'SUCCEEDED',
      output: { outcome: 'COMMITTED', taskId: c.input.taskId },
    });
  });
});

describe('stream flows', () => {
  let lane: LaneRef;
  let fence: Fence;
  beforeAll(async () => {
    const made = await laneWithRanges(stores.ports, 'flow-input', 3);
    ({ lane, session: fence } = made);
    // The LaneWriter releases its writer slot, so the flows below may append to the lane.
    expect(await made.writer.close()).toMatchObject({ released: true });
  }, 120_000);

  it('stream-append: refused at WriteWal (Stream.Rejected), no WAL object, no head move; without the field the batch commits', async () => {
    const input = {
      ...lane,
      attemptId: `fi-${randomUUID().slice(0, 8)}`,
      session: fence,
      records: [b64('one'), b64('two')],
    };
    await expectRefusedUnwritten(stores.config, () => start('stream-append', { ...input, extra: 1 }), {
      error: 'Stream.Rejected',
      cause: unknownField('stream-append', 'extra'),
      states: ['WriteWal', 'Rejected'],
    });
    const run = await start('stream-append', input);
    expect(run, why(run)).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 'KNOWN_COMMITTED', attemptId: input.attemptId },
    });

    const resolve = { ...lane, attemptId: input.attemptId };
    await expectRefusedUnwritten(stores.config, () => start('stream-resolve-append', { ...resolve, extra: 1 }), {
      error: 'Stream.Rejected',
      cause: unknownField('stream-resolve-append', 'extra'),
      states: ['IsRecovery', 'ResolveWhat', 'Resolve', 'Rejected'],
    });
    // Its recovery start too: the original input is held to the flow's own fields.
    await expectRefusedUnwritten(
      stores.config,
      () =>
        start('stream-resolve-append', {
          recoveryOf: 'arn:x',
          originalInput: JSON.stringify({ ...resolve, extra: 1 }),
        }),
      {
        error: 'Stream.Rejected',
        cause: unknownField('stream-resolve-append', 'extra'),
        states: [
          'IsRecovery',
          'UnwrapRecovery',
          'IsNestedRecovery',
          'UseOriginalInput',
          'ResolveWhat',
          'Resolve',
          'Rejected',
        ],
      },
    );
    const resolved = await start('stream-resolve-append', resolve);
    expect(resolved, why(resolved)).toMatchObject({ status: 'SUCCEEDED', output: { status: 'KNOWN_COMMITTED' } });
  }, 120_000);

  it('stream-trim: an unknown field, and a 50,000-element junk array where it reads an offset (flow.input_too_large), are refused; then the trim moves', async () => {
    const states = ['Trim', 'Rejected'];
    await expectRefusedUnwritten(stores.config, () => start('stream-trim', { ...lane, to: 1, extra: 1 }), {
      error: 'Stream.TrimRefused',
      cause: unknownField('stream-trim', 'extra'),
      states,
    });
    await expectRefusedUnwritten(
      stores.config,
      () => start('stream-trim', { ...lane, to: Array.from({ length: 50_000 }, () => 0) }),
      { error: 'Stream.TrimRefused', cause: /it may be at most 65536 \(64 KiB\)/, states },
    );
    const run = await start('stream-trim', { ...lane, to: 1 });
    expect(run, why(run)).toMatchObject({ status: 'SUCCEEDED', output: { ...lane, trimOffset: 1 } });
  });

  it('stream-materialize, stream-compact and stream-gc: refused at their one first step; without the field each runs', async () => {
    for (const [flow, first, refusal] of [
      ['stream-materialize', ['Materialize'], 'Refused'],
      ['stream-compact', ['Compact'], 'Refused'],
      ['stream-gc', ['Begin', 'Scan'], 'Rejected'],
    ] as const) {
      const error = refusal === 'Refused' ? 'Cutpoint.ValidationError' : 'Stream.GcRefused';
      await expectRefusedUnwritten(stores.config, () => start(flow, { ...lane, pages: 1 }), {
        error,
        cause: unknownField(flow, 'pages'),
        states: [...first, refusal],
      });
      const run = await start(flow, { ...lane });
      expect(run, `${flow}: ${why(run)}`).toMatchObject({ status: 'SUCCEEDED' });
    }
  }, 180_000);

  it('stream-takeover: refused (a JSON "constructor" key) before the fence moves; without it the lane is taken over', async () => {
    const input = { ...lane, owner: 'ops', session: randomUUID() };
    const polluted = JSON.parse(
      `{"constructor":{"prototype":{"polluted":true}},${JSON.stringify(input).slice(1)}`,
    ) as object;
    await expectRefusedUnwritten(stores.config, () => start('stream-takeover', polluted), {
      error: 'Stream.Rejected',
      cause: unknownField('stream-takeover', 'constructor'),
      states: ['Takeover', 'Rejected'],
    });
    const run = await start('stream-takeover', input);
    expect(run, why(run)).toMatchObject({
      status: 'SUCCEEDED',
      output: { ...lane, owner: 'ops', epoch: fence.epoch + 1 },
    });
  });

  it('stream-maintain: refused at CheckInput (a JSON "__proto__" key) before any child starts; without it the lane is maintained', async () => {
    const polluted = JSON.parse(`{"__proto__":{"polluted":true},"lanes":[${JSON.stringify(lane)}]}`) as object;
    const refused = await expectRefusedUnwritten(stores.config, () => start('stream-maintain', polluted), {
      error: 'Cutpoint.ValidationError',
      cause: unknownField('stream-maintain', '__proto__'),
      states: ['CheckInput', 'Refused'],
    });
    expect(refused.transitions).toBe(2);
    const run = await start('stream-maintain', { lanes: [lane] });
    expect(run, why(run)).toMatchObject({ status: 'SUCCEEDED', output: [{ ...lane, status: 'MAINTAINED' }] });
    expect(entered(run).slice(0, 3)).toEqual(['CheckInput', 'CheckLanes', 'Lanes']);
  }, 180_000);
});

describe('cutpoint flow run', () => {
  it('refuses the same inputs with the same check before anything runs: no runtime is even looked for', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cutpoint-flow-input-'));
    try {
      const before = await storeSnapshot(stores.config);
      for (const [flow, input, code] of [
        ['stream-trim', { stream: 'orders', partition: 0, to: 1, extra: 1 }, 'flow.input_unknown_field'],
        [
          'stream-trim',
          { stream: 'orders', partition: 0, to: Array.from({ length: 50_000 }, () => 0) },
          'flow.input_too_large',
        ],
        [
          'commit-generation',
          { recoveryOf: 'arn:x', originalInput: '{"root":"demo/x","extra":1}' },
          'flow.input_unknown_field',
        ],
        ['stream-maintain', [], 'flow.input_not_object'],
      ] as const) {
        const r = await runCutpointInProcess(['flow', 'run', flow, '--input', JSON.stringify(input)], {
          env: { CUTPOINT_STATE_DIR: stateDir },
        });
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(new RegExp(`^${code.replace('.', '\\.')}: `));
      }
      // The same well-formed input gets past the check and only then finds no runtime here.
      const r = await runCutpointInProcess(
        ['flow', 'run', 'stream-trim', '--input', JSON.stringify({ stream: 'orders', partition: 0, to: 1 })],
        { env: { CUTPOINT_STATE_DIR: stateDir } },
      );
      expect(r.code).toBe(1);
      expect(r.stderr).not.toMatch(/^flow\./);
      expect(await storeSnapshot(stores.config)).toEqual(before);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
