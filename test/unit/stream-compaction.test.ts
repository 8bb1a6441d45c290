import { describe, expect, it } from 'vitest';
import {
  compactionKeys,
  compactionRootOf,
  compactionTaskId,
  sameCompaction,
  sourcesOf,
  type CompactionRecord,
} from '../../src/stream/compaction/model.js';
import type { CommitRecord } from '../../src/domain/stream.js';

const lane = { stream: 's1', partition: 3 };
const commit = (start: number, end: number, sha: string): CommitRecord => ({
  ...lane,
  attemptId: `a${start}`,
  start,
  end,
  walKey: `wal/s1/3/a${start}/${sha}.wal`,
  walSha256: sha,
  walSize: 10,
  committedAt: '',
});

describe('compaction identity (pure)', () => {
  it('the task id is a function of the exact source set and the slot', () => {
    const a = sourcesOf([commit(0, 2, 'a'.repeat(64)), commit(2, 5, 'b'.repeat(64))]);
    const b = sourcesOf([commit(0, 2, 'a'.repeat(64)), commit(2, 5, 'c'.repeat(64))]);
    expect(compactionTaskId(a, 0)).toBe(compactionTaskId([...a], 0));
    expect(compactionTaskId(a, 0)).not.toBe(compactionTaskId(b, 0));
    expect(compactionTaskId(a, 0)).not.toBe(compactionTaskId(a, 1));
    expect(compactionTaskId(a, 0)).toMatch(/^c0-[0-9a-f]{32}$/);
  });

  it('the root is the run start, outside the range roots GC parses (r<start>); keys sort by end', () => {
    expect(compactionRootOf(lane, 7)).toBe('stream/s1/p3/c0000000000000007');
    expect(compactionKeys.record(lane, 12).sk < compactionKeys.record(lane, 100).sk).toBe(true);
  });

  it('exact identity: any field of the run or generation differing is another compaction', () => {
    const r: CompactionRecord = {
      ...lane,
      start: 0,
      end: 5,
      root: 'r',
      generation: 0,
      taskId: 't',
      objectKey: 'k',
      sha256: 'x',
      size: 1,
      recordCount: 5,
      sourceSetDigest: 'd',
      compactedAt: 'then',
    };
    expect(sameCompaction(r, { ...r, compactedAt: 'now' })).toBe(true);
    for (const change of [{ end: 6 }, { generation: 1 }, { sha256: 'y' }, { sourceSetDigest: 'e' }, { taskId: 'u' }])
      expect(sameCompaction(r, { ...r, ...change })).toBe(false);
  });
});
