import { describe, expect, it } from 'vitest';
import { chunkObjectKeyOf, evidenceObjectKeyOf } from '../../src/domain/delivery/identifiers.js';
import { outputKeyOf } from '../../src/domain/generation.js';
import { rangeRootOf, walKeyOf } from '../../src/domain/stream.js';
import { assertOperatorKey, systemRootOf } from '../../src/objects/reserved-keys.js';

/** Every key the system derives for its own objects lies under a reserved root, so `object put` can never write it. */
describe('system object roots', () => {
  const invocationId = `inv-${'a'.repeat(26)}`;
  const lane = { stream: 'orders', partition: 3 };
  const systemKeys = [
    walKeyOf(lane, 'a-1', 'f'.repeat(64)),
    outputKeyOf({ root: rangeRootOf(lane, 0), generation: 0, taskId: 'a-1' }),
    outputKeyOf({ root: 'reports/daily', generation: 7, taskId: 't' }),
    chunkObjectKeyOf('daily', invocationId, 0),
    evidenceObjectKeyOf('daily', invocationId),
  ];

  it.each(systemKeys)('%s is reserved', (key) => {
    expect(systemRootOf(key)).toBeDefined();
    expect(() => assertOperatorKey(key)).toThrow(
      expect.objectContaining({ code: 'objects.reserved_key', name: 'Cutpoint.ValidationError' }),
    );
  });

  it('operator keys elsewhere are not', () => {
    for (const key of ['sources/a.csv', 'walnut/x', 'delivery', 'my/wal/x'])
      expect(() => assertOperatorKey(key)).not.toThrow();
  });
});
