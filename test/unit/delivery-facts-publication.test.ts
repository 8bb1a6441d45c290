import { describe, expect, it } from 'vitest';
import { EMPTY_FACTS, mergeFacts, parseFacts, validatePatch } from '../../src/delivery/journal/facts.js';

const C = '0e6f5b1c-2d3a-8b4c-9d5e-6f708192a3b4';
const P = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const dispatch = { count: 1, predecessorUuid: P, candidateUuid: C, runId: 'run-abc' };
const candidate = {
  table: { schema: 'pub', table: 'cutpoint_stg_abc_c' },
  uuid: C,
  rows: 3,
  digest: '12345678901234567890',
};

describe('ClickHouse publication facts: the candidate and the dispatch intent', () => {
  it('are validated field by field and read back the same', () => {
    const patch = validatePatch({ candidate, dispatch });
    expect(patch).toEqual({ candidate, dispatch });
    const facts = mergeFacts(EMPTY_FACTS, patch);
    expect(parseFacts(JSON.parse(JSON.stringify(facts)))).toEqual(facts);
  });

  it('a dispatch count other than 1, a UUID that is not one, or a smuggled field is refused', () => {
    expect(() => validatePatch({ dispatch: { ...dispatch, count: 2 } })).toThrow(/fact dispatch is malformed/);
    expect(() => validatePatch({ dispatch: { ...dispatch, predecessorUuid: 'not-a-uuid' } })).toThrow(/dispatch/);
    expect(() => validatePatch({ candidate: { ...candidate, uuid: C.toUpperCase() } })).toThrow(/candidate/);
    expect(validatePatch({ dispatch: { ...dispatch, extra: 'x' } }).dispatch).toEqual(dispatch);
  });

  it('I1: the dispatch is set once — a second, different intent is contradicting evidence, the same one a no-op', () => {
    const facts = mergeFacts(EMPTY_FACTS, validatePatch({ dispatch }));
    expect(mergeFacts(facts, validatePatch({ dispatch }))).toEqual(facts);
    expect(() => mergeFacts(facts, validatePatch({ dispatch: { ...dispatch, runId: 'run-other' } }))).toThrow(
      /dispatch differs/,
    );
  });
});
