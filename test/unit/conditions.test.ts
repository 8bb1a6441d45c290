import { describe, expect, it } from 'vitest';
import { conditionFor, updateFor } from '../../src/adapters/dynamodb/conditions.js';
import { classifyDynamoFailure } from '../../src/adapters/dynamodb/outcome.js';
import { canonicalJson } from '../../src/domain/digest.js';

describe('conditional-write expressions', () => {
  it('absent means the key is unused', () => {
    expect(conditionFor('absent').expression).toBe('attribute_not_exists(#pk)');
  });

  it('a fenced expectation names version, owner, session and epoch', () => {
    const c = conditionFor({ version: 7, fence: { owner: 'w1', session: 's1', epoch: 3 } });
    expect(c.expression).toBe(
      '#version = :expectedVersion AND #fence.#owner = :fenceOwner AND #fence.#session = :fenceSession AND #fence.#epoch = :fenceEpoch',
    );
    expect(c.values[':fenceEpoch']).toEqual({ N: '3' });
  });

  it('an update bumps the version, sets and removes attributes, and never touches keys', () => {
    const u = updateFor(8, { state: 'COMMITTED', stale: undefined });
    expect(u.expression).toBe('SET #nextVersionName = :nextVersion, #a0 = :v0 REMOVE #a1');
    expect(u.values[':nextVersion']).toEqual({ N: '8' });
    expect(() => updateFor(2, { pk: 'x' })).toThrow();
  });
});

describe('failure classification', () => {
  it('conditional failures conflict; 4xx are definite; timeouts and 5xx are unknown', () => {
    expect(classifyDynamoFailure({ name: 'ConditionalCheckFailedException' })).toBe('conflict');
    expect(classifyDynamoFailure({ name: 'ValidationException' })).toBe('definite');
    expect(classifyDynamoFailure({ name: 'Foo', $metadata: { httpStatusCode: 400 } })).toBe('definite');
    expect(classifyDynamoFailure({ name: 'InternalServerError', $metadata: { httpStatusCode: 500 } })).toBe('unknown');
    expect(classifyDynamoFailure({ name: 'TimeoutError' })).toBe('unknown');
  });
});

describe('canonical JSON', () => {
  it('is independent of key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [3, { f: 1, e: 2 }] } })).toBe(
      '{"a":{"c":[3,{"e":2,"f":1}],"d":2},"b":1}',
    );
  });
});
