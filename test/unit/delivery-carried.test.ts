import { describe, expect, it } from 'vitest';
import { parseCarried } from '../../src/delivery/steps/carried.js';
import { forRerun, parseStepInput } from '../../src/delivery/steps/common.js';

const invocationId = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';
const fence = { owner: invocationId, session: 's-1', epoch: 2 };
const ref = { targetId: 'warehouse.dwh.events', invocationId };
const custody = {
  targetId: ref.targetId,
  state: 'HELD',
  epoch: 2,
  fence,
  invocationId,
  acquiredAt: '2026-12-01T00:00:00.000Z',
  version: 3,
};

describe('carried state', () => {
  it('a first attempt carries what the previous step left; a retry (any retry count) reads instead', () => {
    const known = { invocation: { version: 1 }, custody };
    expect(parseStepInput({ invocationId, fence, known }).known).toBe(known);
    expect(parseStepInput({ invocationId, fence, known, retry: 0 }).known).toBe(known);
    expect(parseStepInput({ invocationId, fence, known, retry: 1 })).not.toHaveProperty('known');
    expect(parseStepInput({ invocationId, fence, known: null })).not.toHaveProperty('known');
    expect(forRerun({ invocationId, fence, known: known as never })).toEqual({ invocationId, fence });
  });

  it('a retry count that is not a count is refused', () => {
    for (const retry of [-1, 1.5, '1', null]) {
      expect(() => parseStepInput({ invocationId, fence, retry })).toThrow(
        expect.objectContaining({ code: 'delivery.step_input_invalid' }),
      );
    }
  });

  it("a carried state that is malformed, or not this invocation's, target's or fence's, is refused as a whole", () => {
    const refuse = (value: unknown, f = fence) =>
      expect(() => parseCarried(value, ref, f)).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.step_input_invalid' }),
      );
    refuse(undefined);
    refuse({ invocation: {}, custody });
    refuse({ invocation: { version: 1, invocationId }, custody });
    // The custody record itself must be held by this fence.
    refuse({ invocation: { version: 1, invocationId }, custody }, { ...fence, epoch: 1 });
    refuse({ invocation: { version: 1, invocationId }, custody: { ...custody, state: 'RELEASED', fence: undefined } });
  });
});
