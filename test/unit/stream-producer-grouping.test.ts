import { describe, expect, it } from 'vitest';
import type { AppendOutcome } from '../../src/domain/stream.js';
import { MAX_BATCH_BYTES, MAX_RECORD_BYTES } from '../../src/domain/stream.js';
import { GroupAttemptIds } from '../../src/stream/producer/attempt-ids.js';
import { GroupBuffer, memberBytes, type PendingMember } from '../../src/stream/producer/group-buffer.js';
import { BATCH_HEADER_BYTES, DEFAULT_KNOBS, validateKnobs } from '../../src/stream/producer/knobs.js';
import { memberOutcomes } from '../../src/stream/producer/member-outcome.js';

/** The producer's pure rules: knobs, member sizes, where a group is cut, how its outcome is split. */
const bytesOf = (...sizes: number[]) => sizes.map((n) => new Uint8Array(n));
let arrival = 0;
function member(...sizes: number[]): PendingMember<string> {
  const records = bytesOf(...sizes);
  return { records, bytes: memberBytes(records), arrivedAt: arrival++, ticket: `m${arrival}` };
}
const fence = { owner: 'writer', session: 'session-0123456789abcdef', epoch: 3 };

describe('producer knobs', () => {
  it('defaults, and accepts integers in range', () => {
    expect(validateKnobs()).toEqual(DEFAULT_KNOBS);
    expect(validateKnobs({ lingerMs: 0, maxBytes: MAX_BATCH_BYTES, maxRecords: 1, maxInFlight: 8 })).toEqual({
      lingerMs: 0,
      maxBytes: MAX_BATCH_BYTES,
      maxRecords: 1,
      maxInFlight: 8,
    });
  });

  it.each([
    { lingerMs: -1 },
    { lingerMs: 1.5 },
    { maxBytes: MAX_BATCH_BYTES + 1 },
    { maxBytes: 3 },
    { maxRecords: 0 },
    { maxInFlight: 0 },
    { maxInFlight: Number.NaN },
  ])('refuses %o with a stable code', (knobs) => {
    expect(() => validateKnobs(knobs)).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'stream.producer_invalid_knob' }),
    );
  });
});

describe('member size', () => {
  it('counts 4 framing bytes per record', () => {
    expect(memberBytes(bytesOf(0, 10, 3))).toBe(3 * 4 + 13);
  });

  it('refuses an empty batch, a record over MAX_RECORD_BYTES and one batch over MAX_BATCH_BYTES alone', () => {
    expect(() => memberBytes([])).toThrow(expect.objectContaining({ code: 'stream.empty_batch' }));
    expect(() => memberBytes(bytesOf(MAX_RECORD_BYTES + 1))).toThrow(
      expect.objectContaining({ code: 'stream.record_too_large' }),
    );
    const tooMany = Array.from({ length: Math.ceil(MAX_BATCH_BYTES / MAX_RECORD_BYTES) }, () => MAX_RECORD_BYTES);
    expect(() => memberBytes(bytesOf(...tooMany))).toThrow(expect.objectContaining({ code: 'stream.batch_too_large' }));
  });
});

describe('where a group is cut', () => {
  it('takes members in arrival order up to maxRecords', () => {
    const buffer = new GroupBuffer<string>({ maxRecords: 5, maxBytes: MAX_BATCH_BYTES });
    const [a, b, c] = [member(1, 1), member(1, 1, 1), member(1)];
    [a, b, c].forEach((m) => buffer.push(m));
    expect(buffer.full()).toBe(true);
    expect(buffer.take()).toEqual([a, b]);
    expect(buffer.full()).toBe(false);
    expect(buffer.take()).toEqual([c]);
    expect(buffer.size).toBe(0);
    expect(buffer.take()).toEqual([]);
  });

  it('keeps a group within maxBytes, header and framing included', () => {
    // Each member is 2 records of 10 bytes: 28 framed bytes; header 7.
    const buffer = new GroupBuffer<string>({ maxRecords: 1000, maxBytes: BATCH_HEADER_BYTES + 2 * 28 });
    const members = [member(10, 10), member(10, 10), member(10, 10)];
    members.forEach((m) => buffer.push(m));
    expect(buffer.take()).toEqual(members.slice(0, 2));
    expect(buffer.take()).toEqual(members.slice(2));
  });

  it('splits a group that would pass MAX_BATCH_BYTES, never refuses it', () => {
    const buffer = new GroupBuffer<string>({ maxRecords: 1000, maxBytes: MAX_BATCH_BYTES });
    const big = Array.from({ length: 5 }, () => member(MAX_RECORD_BYTES));
    big.forEach((m) => buffer.push(m));
    const first = buffer.take();
    const second = buffer.take();
    expect(first.length + second.length).toBe(5);
    for (const group of [first, second])
      expect(BATCH_HEADER_BYTES + group.reduce((s, m) => s + m.bytes, 0)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    expect([...first, ...second]).toEqual(big);
  });

  it('sends one batch larger than the knobs alone', () => {
    const buffer = new GroupBuffer<string>({ maxRecords: 2, maxBytes: 64 });
    const [huge, small] = [member(1, 1, 1, 1, 1000), member(1)];
    buffer.push(huge);
    buffer.push(small);
    expect(buffer.take()).toEqual([huge]);
    expect(buffer.take()).toEqual([small]);
  });

  it('cuts by size and order only: the same members give the same groups however they were pushed', () => {
    const sizes = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9];
    const cut = (pushBeforeTaking: number) => {
      const buffer = new GroupBuffer<string>({ maxRecords: 10, maxBytes: MAX_BATCH_BYTES });
      const groups: number[][] = [];
      const all = sizes.map((n) => member(...Array.from({ length: n }, () => 1)));
      let next = 0;
      while (next < all.length || buffer.size) {
        while (next < all.length && (!buffer.full() || next < pushBeforeTaking)) buffer.push(all[next++]!);
        groups.push(buffer.take().map((m) => m.records.length));
      }
      return groups;
    };
    expect(cut(0)).toEqual(cut(sizes.length));
    expect(cut(0).flat()).toEqual(sizes);
  });
});

describe("a group's outcome, member by member", () => {
  const lane = { stream: 'orders', partition: 2 };
  it('gives each committed member its own sub-range in arrival order', () => {
    const group: AppendOutcome = {
      status: 'KNOWN_COMMITTED',
      ...lane,
      attemptId: 'p-g4',
      recordCount: 6,
      start: 100,
      end: 106,
    };
    expect(
      memberOutcomes(group, 4, [2, 1, 3]).map((m) => [m.start, m.end, m.recordCount, m.attemptId, m.group]),
    ).toEqual([
      [100, 102, 2, 'p-g4', 4],
      [102, 103, 1, 'p-g4', 4],
      [103, 106, 3, 'p-g4', 4],
    ]);
  });

  it.each(['KNOWN_NOT_COMMITTED', 'MAY_HAVE_COMMITTED'] as const)(
    'gives every member the same %s, with no range',
    (status) => {
      const group: AppendOutcome = { status, ...lane, attemptId: 'p-g1', recordCount: 3, reason: 'why' };
      const members = memberOutcomes(group, 1, [1, 2]);
      expect(members).toEqual([
        { status, ...lane, attemptId: 'p-g1', group: 1, recordCount: 1, reason: 'why' },
        { status, ...lane, attemptId: 'p-g1', group: 1, recordCount: 2, reason: 'why' },
      ]);
    },
  );

  it('refuses a committed range that does not cover exactly the group', () => {
    const group: AppendOutcome = {
      status: 'KNOWN_COMMITTED',
      ...lane,
      attemptId: 'p-g1',
      recordCount: 3,
      start: 0,
      end: 4,
    };
    expect(() => memberOutcomes(group, 1, [1, 2])).toThrow(
      expect.objectContaining({ name: 'Stream.ProducerInconsistent', code: 'stream.producer_inconsistent' }),
    );
  });
});

describe('group attempt ids', () => {
  it('are deterministic from the session and the sequence, and never contain the session id', () => {
    const ids = new GroupAttemptIds(fence);
    expect(new GroupAttemptIds(fence).of(7)).toBe(ids.of(7));
    expect(ids.of(7)).toMatch(/^p[0-9a-f]{24}-g7$/);
    expect(ids.of(7)).not.toContain(fence.session);
    expect(new GroupAttemptIds({ ...fence, epoch: 4 }).of(7)).not.toBe(ids.of(7));
    expect(new GroupAttemptIds(fence, 'load-1').of(0)).toBe('load-1-g0');
  });

  it('refuses a prefix that cannot make valid attempt ids', () => {
    expect(() => new GroupAttemptIds(fence, 'x'.repeat(120))).toThrow(
      expect.objectContaining({ code: 'stream.invalid_attempt' }),
    );
    expect(() => new GroupAttemptIds(fence, 'bad/prefix')).toThrow(
      expect.objectContaining({ code: 'stream.invalid_attempt' }),
    );
  });
});
