import { describe, expect, it } from 'vitest';
import { walBindingOf, walFate, walMetadataOf } from '../../src/domain/stream.js';

/** walFate: what GC may conclude about a WAL object from its metadata, the head and commit#<start+count>. */
const lane = { stream: 's', partition: 0 };
const fence = (epoch: number) => ({ owner: 'o', session: 'session-0123456789', epoch });
const meta = (start: number, epoch = 2, count = 3, sha = 'a'.repeat(64)) =>
  walMetadataOf(lane, 'a1', sha, count, { fenceEpoch: epoch, start });

describe('WAL metadata binds the batch', () => {
  it('names attempt-id, sha256, record-count, fence-epoch and start, and reads back exactly', () => {
    const m = meta(10);
    expect(m).toMatchObject({
      'attempt-id': 'a1',
      sha256: 'a'.repeat(64),
      'record-count': '3',
      'fence-epoch': '2',
      start: '10',
    });
    expect(walBindingOf(m)).toEqual({
      attemptId: 'a1',
      walSha256: 'a'.repeat(64),
      recordCount: 3,
      fenceEpoch: 2,
      start: 10,
    });
    expect(walBindingOf({ sha256: 'x', 'attempt-id': 'a1', 'record-count': '1' })).toBeUndefined();
  });
});

describe('walFate', () => {
  const commit = (start: number, attemptId = 'a1', walSha256 = 'a'.repeat(64)) => ({ attemptId, walSha256, start });

  it('COMMITTED when commit#<end> names the attempt, SHA-256 and start — even under a later epoch', () => {
    expect(walFate(meta(10), { committedEnd: 13, fence: fence(2) }, commit(10))).toBe('COMMITTED');
    expect(walFate(meta(10), { committedEnd: 99, fence: fence(5) }, commit(10))).toBe('COMMITTED');
  });

  it('DEAD when written under an older fence epoch (the head CAS requires the head fence)', () => {
    expect(walFate(meta(13, 1), { committedEnd: 13, fence: fence(2) }, undefined)).toBe('DEAD');
  });

  it('DEAD when the committed end passed its start and commit#<end> names another attempt or other bytes', () => {
    expect(walFate(meta(10), { committedEnd: 13, fence: fence(2) }, commit(10, 'other'))).toBe('DEAD');
    expect(walFate(meta(10), { committedEnd: 13, fence: fence(2) }, commit(10, 'a1', 'b'.repeat(64)))).toBe('DEAD');
    expect(walFate(meta(10), { committedEnd: 11, fence: fence(2) }, undefined)).toBe('DEAD');
  });

  it('MAY_COMMIT while its turn can still come (bound at or past the committed end, current epoch), or when the metadata binds nothing', () => {
    expect(walFate(meta(13), { committedEnd: 13, fence: fence(2) }, undefined)).toBe('MAY_COMMIT');
    expect(walFate(meta(20), { committedEnd: 13, fence: fence(2) }, undefined)).toBe('MAY_COMMIT');
    expect(walFate({ sha256: 'x' }, { committedEnd: 13, fence: fence(2) }, undefined)).toBe('MAY_COMMIT');
  });
});
