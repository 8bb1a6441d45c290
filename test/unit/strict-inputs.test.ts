import { describe, expect, it } from 'vitest';
import { assertFlowInput } from '../../src/engine/flow-input.js';
import { FLOWS } from '../../src/registry/index.js';
import { integerFromEnv } from '../../src/domain/env-integer.js';
import { validateLane } from '../../src/domain/stream.js';
import { localRetryMsFromEnv } from '../../src/local/runtime-config.js';
import { markedBlock, repoFile } from './readme-blocks.js';

/**
 * Values that were accepted although invalid (docs/deploy.md "Flow inputs", docs/flows.md): numbers from the
 * environment read by one strict reader, a partition of -0, flow inputs with fields no step
 * reads. Each is refused with a precise, stable code.
 */

describe('a whole number from the environment', () => {
  it('is decimal digits in range or unset; anything else is a config error naming the variable, never ignored or reinterpreted', () => {
    const read = (raw: string | undefined) => integerFromEnv({ N: raw }, 'N', { min: 0, max: 100 }, 'x.invalid_n');
    expect(read(undefined)).toBeUndefined();
    expect(read('')).toBeUndefined();
    expect(read('0')).toBe(0);
    expect(read('100')).toBe(100);
    for (const bad of ['abc', 'Infinity', '0x10', '1e1', '1.5', '-1', '+1', ' 5', '5 ', '101', '٣', '9'.repeat(20)]) {
      expect(() => read(bad), bad).toThrow(
        expect.objectContaining({
          name: 'Cutpoint.ConfigError',
          code: 'x.invalid_n',
          message: expect.stringMatching(/^N must be a whole number from 0 to 100/),
        }),
      );
    }
  });

  it('CUTPOINT_LOCAL_RETRY_MS: local.invalid_retry_ms for abc, Infinity, 0x10', () => {
    expect(localRetryMsFromEnv({ CUTPOINT_LOCAL_RETRY_MS: '250' })).toBe(250);
    for (const bad of ['abc', 'Infinity', '0x10']) {
      expect(() => localRetryMsFromEnv({ CUTPOINT_LOCAL_RETRY_MS: bad }), bad).toThrow(
        expect.objectContaining({
          code: 'local.invalid_retry_ms',
          message: expect.stringContaining('CUTPOINT_LOCAL_RETRY_MS'),
        }),
      );
    }
  });
});

describe('a lane', () => {
  it('refuses partition -0 (JSON can carry it; it is no partition number), accepts 0', () => {
    expect(validateLane(JSON.parse('{"stream":"orders","partition":0}'))).toEqual({ stream: 'orders', partition: 0 });
    expect(() => validateLane(JSON.parse('{"stream":"orders","partition":-0}'))).toThrow(
      expect.objectContaining({ code: 'stream.invalid_partition' }),
    );
  });
});

describe('flow inputs carry only the fields their flow reads', () => {
  const doc = repoFile('docs/flows.md');
  it.each(FLOWS.map((f) => [f.name]))(
    '%s: its documented input passes; an unknown field is refused by name',
    (flow) => {
      const block = markedBlock(doc, `flow-input: ${flow}`);
      const input = JSON.parse(block!.body) as Record<string, unknown>;
      expect(() => assertFlowInput(flow, input)).not.toThrow();
      for (const [key, value] of [
        ['extra', 1],
        ['x', Array.from({ length: 50_000 }, () => 0)],
        ['pages', 0],
        ['next', 'garbage-token'],
      ] as const) {
        expect(() => assertFlowInput(flow, { ...input, [key]: value }), key).toThrow(
          expect.objectContaining({ code: 'flow.input_unknown_field', message: expect.stringContaining(`"${key}"`) }),
        );
      }
      // Own keys only: a JSON "constructor" or "__proto__" is a field like any other.
      for (const text of ['{"constructor":{"prototype":{"polluted":true}}}', '{"__proto__":{"polluted":true}}']) {
        expect(() => assertFlowInput(flow, { ...input, ...(JSON.parse(text) as object) })).toThrow(
          expect.objectContaining({ code: 'flow.input_unknown_field' }),
        );
      }
    },
  );

  it('a recovery start ({recoveryOf, originalInput}) is an input of the flows some flow is recovered by, only', () => {
    const recovery = { recoveryOf: 'arn:aws:states:eu-west-1:111111111111:execution:x:y', originalInput: '{}' };
    expect(() => assertFlowInput('delivery-reconcile', recovery)).not.toThrow();
    expect(() => assertFlowInput('commit-generation', recovery)).not.toThrow();
    expect(() => assertFlowInput('stream-trim', recovery)).toThrow(
      expect.objectContaining({ code: 'flow.input_unknown_field' }),
    );
  });
});

describe('stream consume --max', () => {
  it("0 is a usage error: it would take the cursor over (fencing the group's consumer) to read nothing", async () => {
    const { CURSOR_HANDLERS } = await import('../../src/cli/commands/stream/consume.js');
    const check = CURSOR_HANDLERS.consume!.check!;
    expect(() => check({ partition: '0', group: 'billing', max: '0' })).toThrow(
      expect.objectContaining({ name: 'UsageError', message: expect.stringContaining('--max must be at least 1') }),
    );
    expect(() => check({ partition: '0', group: 'billing', max: '1' })).not.toThrow();
  });
});
