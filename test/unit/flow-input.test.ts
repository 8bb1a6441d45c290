import { describe, expect, it } from 'vitest';
import { assertFlowInput, executionInputFirst, firstTaskInput } from '../../src/engine/flow-input.js';
import {
  FLOW_INPUT_MAX_BYTES,
  STEP_FUNCTIONS_INPUT_MAX_BYTES,
  TWICE_PASSED_MAX_BYTES,
} from '../../src/engine/flow-input-fields.js';

/**
 * The one check of a flow's execution input (src/engine/flow-input.ts, docs/deploy.md "Flow
 * inputs"): what `cutpoint flow run` and every flow's first Task refuse, by code.
 */

const trim = { stream: 'orders', partition: 0, to: 5 };
const refused = (code: string, message?: string | RegExp) =>
  expect.objectContaining({
    name: 'Cutpoint.ValidationError',
    code,
    ...(message
      ? { message: typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message) }
      : {}),
  });
/** A JSON text of exactly `bytes` bytes: the trim input with a `to` string padded to fit. */
const ofBytes = (bytes: number) => {
  const shell = JSON.stringify({ ...trim, to: '' });
  return { ...trim, to: 'x'.repeat(bytes - Buffer.byteLength(shell)) };
};

describe('assertFlowInput', () => {
  it('accepts the fields its flow reads, optional ones left out', () => {
    expect(() => assertFlowInput('stream-trim', trim)).not.toThrow();
    expect(() => assertFlowInput('stream-gc', { stream: 'orders', partition: 0 })).not.toThrow();
  });

  it('refuses what is not a JSON object: flow.input_not_object', () => {
    for (const input of [[], [trim], null, 'x', 1, true, undefined]) {
      expect(() => assertFlowInput('stream-trim', input), JSON.stringify(input)).toThrow(
        refused('flow.input_not_object', 'must be a JSON object'),
      );
    }
  });

  it('refuses an own field the flow does not read, naming it: flow.input_unknown_field — constructor, __proto__ and prototype included', () => {
    expect(() => assertFlowInput('stream-trim', { ...trim, extra: 1 })).toThrow(
      refused(
        'flow.input_unknown_field',
        'stream-trim reads no input field "extra" (its fields: stream, partition, to)',
      ),
    );
    for (const text of [
      '{"constructor":{"prototype":{"polluted":true}}}',
      '{"__proto__":{"polluted":true}}',
      '{"prototype":1}',
      '{"Stream":"orders"}',
      '{"dryrun":true}',
    ]) {
      const input = { ...trim, ...(JSON.parse(text) as object) };
      expect(() => assertFlowInput('stream-trim', input), text).toThrow(
        refused('flow.input_unknown_field', `"${Object.keys(JSON.parse(text) as object)[0]!}"`),
      );
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    // Own keys only: what an object inherits is not its input.
    expect(() =>
      assertFlowInput('stream-trim', Object.assign(Object.create({ extra: 1 }) as object, trim)),
    ).not.toThrow();
    // A 100 KB junk array in a field no step reads is named, not merely too large.
    expect(() => assertFlowInput('stream-trim', { ...trim, x: Array.from({ length: 50_000 }, () => 0) })).toThrow(
      refused('flow.input_unknown_field', '"x"'),
    );
  });

  it(`caps the input at ${FLOW_INPUT_MAX_BYTES} bytes of JSON, ${STEP_FUNCTIONS_INPUT_MAX_BYTES} (Step Functions' own) for a bulk one: flow.input_too_large`, () => {
    expect(() => assertFlowInput('stream-trim', ofBytes(FLOW_INPUT_MAX_BYTES))).not.toThrow();
    expect(() => assertFlowInput('stream-trim', ofBytes(FLOW_INPUT_MAX_BYTES + 1))).toThrow(
      refused(
        'flow.input_too_large',
        `${FLOW_INPUT_MAX_BYTES + 1} bytes of JSON; it may be at most ${FLOW_INPUT_MAX_BYTES} (64 KiB)`,
      ),
    );
    // A 50,000-element junk array where the flow reads a number: too large before any step reads it.
    expect(() => assertFlowInput('stream-trim', { ...trim, to: Array.from({ length: 50_000 }, () => 0) })).toThrow(
      refused('flow.input_too_large'),
    );
    // UTF-8 bytes, not characters.
    expect(() => assertFlowInput('stream-trim', { ...trim, to: 'é'.repeat(FLOW_INPUT_MAX_BYTES / 2) })).toThrow(
      refused('flow.input_too_large'),
    );
    const append = (bytes: number) => ({
      stream: 'orders',
      partition: 0,
      attemptId: 'a1',
      session: 's',
      records: ['r'.repeat(bytes)],
    });
    expect(() => assertFlowInput('stream-append', append(200_000))).not.toThrow();
    expect(() => assertFlowInput('stream-append', append(STEP_FUNCTIONS_INPUT_MAX_BYTES))).toThrow(
      refused('flow.input_too_large', '256 KiB'),
    );
  });

  describe('a recovery start {recoveryOf, originalInput}', () => {
    const generation = { root: 'demo/x', generation: 2, taskId: 't-1', sources: [] };
    const envelope = (original: unknown, extra: object = {}) => ({
      recoveryOf: 'arn:aws:states:eu-west-1:111111111111:execution:x:y',
      originalInput: typeof original === 'string' ? original : JSON.stringify(original),
      ...extra,
    });

    it("is an input of a flow that recovers others, its original held to the recovered flows' fields", () => {
      expect(() => assertFlowInput('commit-generation', envelope(generation))).not.toThrow();
      expect(() =>
        assertFlowInput(
          'delivery-reconcile',
          envelope({ manifestText: 'm', selector: 's#r', invocationId: 'inv-x', session: 's' }),
        ),
      ).not.toThrow();
      expect(() =>
        assertFlowInput('stream-resolve-append', envelope({ stream: 'orders', partition: 0, attemptId: 'a1' })),
      ).not.toThrow();
      expect(() => assertFlowInput('stream-trim', envelope(trim))).toThrow(
        refused('flow.input_unknown_field', '"recoveryOf"'),
      );
      // delivery-reconcile recovers deliver-window and publish-clickhouse: their fields, not its own.
      expect(() =>
        assertFlowInput('delivery-reconcile', envelope({ manifestText: 'm', selector: 's#r', yes: true })),
      ).toThrow(refused('flow.input_unknown_field', '"yes"'));
    });

    it('refuses a field beside the envelope, a malformed envelope, and an original with a field its flow does not read', () => {
      expect(() => assertFlowInput('commit-generation', envelope(generation, { root: 'demo/x' }))).toThrow(
        refused('flow.input_unknown_field', 'reads no input field "root" (its fields: recoveryOf, originalInput)'),
      );
      expect(() =>
        assertFlowInput('commit-generation', { recoveryOf: 7, originalInput: JSON.stringify(generation) }),
      ).toThrow(refused('flow.recovery_input_invalid', 'recoveryOf'));
      expect(() => assertFlowInput('commit-generation', { recoveryOf: 'arn:x' })).toThrow(
        refused('flow.recovery_input_invalid', 'originalInput'),
      );
      expect(() => assertFlowInput('commit-generation', envelope('{"root":'))).toThrow(
        refused('flow.recovery_input_invalid', 'not JSON text'),
      );
      expect(() => assertFlowInput('commit-generation', envelope('[1]'))).toThrow(
        refused('flow.input_not_object', "a recovery start's original input"),
      );
      expect(() => assertFlowInput('commit-generation', envelope({ ...generation, extra: 1 }))).toThrow(
        refused('flow.input_unknown_field', '"extra"'),
      );
      expect(() =>
        assertFlowInput('commit-generation', envelope('{"__proto__":{"polluted":true},"root":"demo/x"}')),
      ).toThrow(refused('flow.input_unknown_field', '"__proto__"'));
      // The original of a recovery is never itself a recovery start (the flow's IsNestedRecovery ends such a run before any Task).
      expect(() => assertFlowInput('commit-generation', envelope(envelope(generation)))).toThrow(
        refused('flow.input_unknown_field', '"recoveryOf"'),
      );
    });
  });

  it('knows only the flows FLOW_INPUTS declares, by own name', () => {
    for (const flow of ['no-such-flow', 'constructor', '__proto__', 'toString'])
      expect(() => assertFlowInput(flow, {}), flow).toThrow(refused('flow.unknown_flow'));
  });
});

describe("a flow's first Task: firstTaskInput", () => {
  it("checks the execution input the Task passes against its flow, then hands on the step's own input, or else the execution input", () => {
    expect(firstTaskInput({ flow: 'stream-trim', executionInput: trim })).toBe(trim);
    const own = { root: 'demo/x', generation: 2, taskId: 't-1', sources: [] };
    expect(firstTaskInput({ flow: 'commit-generation', executionInput: own, input: own })).toBe(own);
    // The step's own input may be clean while the execution input is not: the execution input decides.
    expect(() =>
      firstTaskInput({ flow: 'commit-generation', executionInput: { ...own, extra: 1 }, input: own }),
    ).toThrow(refused('flow.input_unknown_field', '"extra"'));
  });

  it("a Task passing only the execution input gets, for a recovery start, the original input its flow's first states unwrap", () => {
    const own = { root: 'demo/x', generation: 2, taskId: 't-1', sources: [] };
    const envelope = {
      recoveryOf: 'arn:aws:states:eu-west-1:111111111111:execution:x:y',
      originalInput: JSON.stringify(own),
    };
    expect(firstTaskInput({ flow: 'commit-generation', executionInput: envelope })).toEqual(own);
    expect(firstTaskInput({ flow: 'commit-generation', executionInput: own })).toBe(own);
  });

  it(`a bulk input its first Task is passed twice (its state and the copy it checks) is capped at ${TWICE_PASSED_MAX_BYTES} bytes, so the Task's input stays under Step Functions' ${STEP_FUNCTIONS_INPUT_MAX_BYTES}`, () => {
    const manifest = (bytes: number) => ({
      invocationId: 'x',
      manifestText: 'm'.repeat(bytes),
      selector: 'f#r',
      yes: true,
    });
    expect(() => assertFlowInput('delivery-resume', manifest(100_000))).not.toThrow();
    expect(() => assertFlowInput('delivery-resume', manifest(TWICE_PASSED_MAX_BYTES))).toThrow(
      refused('flow.input_too_large', '120 KiB'),
    );
    expect(2 * TWICE_PASSED_MAX_BYTES).toBeLessThan(STEP_FUNCTIONS_INPUT_MAX_BYTES);
    // commit-generation's RegisterTask takes its input from the checked copy only: 1,000 sources fit.
    const sources = Array.from({ length: 1000 }, (_, i) => ({
      key: `stream/orders/p0/wal/${'k'.repeat(60)}${i}.wal`,
      sha256: 'a'.repeat(64),
      size: 123456,
    }));
    expect(() =>
      assertFlowInput('commit-generation', { root: 'demo/x', generation: 2, taskId: 't-1', sources }),
    ).not.toThrow();
  });

  it('refuses a Task that passes no flow or no execution input: a flow whose first Task lost its parameters fails every run', () => {
    for (const event of [
      {},
      null,
      'x',
      { flow: 'stream-trim' },
      { executionInput: trim },
      { flow: 7, executionInput: trim },
      trim,
    ]) {
      expect(() => firstTaskInput(event), JSON.stringify(event)).toThrow(refused('flow.first_task_invalid'));
    }
  });

  it("executionInputFirst: a delivery step's deps provider is never called for a refused input", async () => {
    const calls: unknown[] = [];
    const provider = executionInputFirst(async (event: unknown) => (calls.push(event), 'deps'));
    const event = {
      flow: 'delivery-resume',
      executionInput: { invocationId: 'inv-x', manifestText: 'm', selector: 's#r', yes: true, extra: 1 },
    };
    await expect(provider(event)).rejects.toMatchObject({ code: 'flow.input_unknown_field' });
    expect(calls).toEqual([]);
    const { extra: _extra, ...accepted } = event.executionInput;
    await expect(provider({ ...event, executionInput: accepted })).resolves.toBe('deps');
    expect(calls).toEqual([{ ...event, executionInput: accepted }]);
  });
});
