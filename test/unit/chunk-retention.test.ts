import { describe, expect, it } from 'vitest';
import { CHUNK_RETENTION, chunkRetentionRule, isChunkObjectKey } from '../../src/delivery/chunk-retention.js';
import {
  chunkObjectKeyOf,
  evidenceObjectKeyOf,
  invocationIdFrom,
  planObjectKeyOf,
} from '../../src/domain/delivery/identifiers.js';

const id = invocationIdFrom(new Uint8Array(16).fill(7));

describe('chunk retention rule', () => {
  it('defaults to 7 days on tagged objects under delivery/', () => {
    expect(chunkRetentionRule()).toEqual({
      keyPrefix: 'delivery/',
      tag: { key: 'cutpoint-retention', value: 'released' },
      expirationDays: 7,
    });
    expect(chunkRetentionRule(30).expirationDays).toBe(30);
    expect(chunkObjectKeyOf('daily', id, 3).startsWith(CHUNK_RETENTION.keyPrefix)).toBe(true);
  });

  it('refuses a retention that is not whole days in range', () => {
    for (const days of [0, -1, 1.5, 3651, Number.NaN])
      expect(() => chunkRetentionRule(days)).toThrow(
        expect.objectContaining({ code: 'delivery.chunk_retention_invalid' }),
      );
  });

  it('chunk keys (gzip and pre-compression) are what release tags; plan and evidence are not', () => {
    expect(isChunkObjectKey(chunkObjectKeyOf('daily', id, 3))).toBe(true);
    expect(isChunkObjectKey(chunkObjectKeyOf('daily', id, 3).replace(/\.gz$/, ''))).toBe(true);
    expect(isChunkObjectKey(planObjectKeyOf('daily', id))).toBe(false);
    expect(isChunkObjectKey(evidenceObjectKeyOf('daily', id))).toBe(false);
  });
});
