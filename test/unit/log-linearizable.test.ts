import { describe, expect, it } from 'vitest';
import { OpHistory } from '../support/sched/op-history.js';
import { checkLogHistory, type ChainLink } from '../support/stream-history/log-linearizable.js';

/** The stream history checker on histories written by hand: one linearizable, and each way one is not. */
function base(): { h: OpHistory; chain: ChainLink[] } {
  const h = new OpHistory();
  const a = h.invoke('w0', 'append', { attempt: 'a', records: ['a0', 'a1'] });
  a.ok({ status: 'KNOWN_COMMITTED', start: 0, end: 2 });
  const b = h.invoke('w1', 'append', { attempt: 'b', records: ['b0'] });
  const r = h.invoke('r', 'read', { from: 0, maxRecords: 10 });
  b.info({ error: 'Cutpoint.OutcomeUnknown' });
  r.ok({ records: ['a0', 'a1', 'b0'], committedEnd: 3 });
  const c = h.invoke('w0', 'append', { attempt: 'c', records: ['c0'] });
  c.fail({ status: 'KNOWN_NOT_COMMITTED' });
  const res = h.invoke('op', 'resolve', { attempt: 'b' });
  res.ok({ status: 'KNOWN_COMMITTED', start: 2, end: 3 });
  return {
    h,
    chain: [
      { attemptId: 'a', start: 0, end: 2 },
      { attemptId: 'b', start: 2, end: 3 },
    ],
  };
}

describe('checkLogHistory', () => {
  it('passes a linearizable history: an unknown append read before its outcome, a failed one absent', () => {
    const { h, chain } = base();
    expect(checkLogHistory(h, chain, 0)).toEqual([]);
  });

  it('catches a read of a record no committed attempt holds, and a skip', () => {
    const { h, chain } = base();
    h.invoke('r2', 'read', { from: 1, maxRecords: 2 }).ok({ records: ['b0'], committedEnd: 3 });
    h.invoke('r3', 'read', { from: 2, maxRecords: 2 }).ok({ records: ['c0'], committedEnd: 3 });
    expect(checkLogHistory(h, chain, 0)).toEqual([
      'read (op 11) from 1 returned b0 at 1; the log holds a1 there',
      'read (op 13) from 2 returned c0 at 2; the log holds b0 there',
    ]);
  });

  it('catches a stale read: a committed end behind an append told committed before it', () => {
    const { h, chain } = base();
    h.invoke('r2', 'read', { from: 0, maxRecords: 1 }).ok({ records: ['a0'], committedEnd: 1 });
    expect(checkLogHistory(h, chain, 0)).toEqual([
      'read (op 11) saw committed end 1, yet an append ending at 2 was told committed before it',
    ]);
  });

  it('catches outcomes the chain contradicts, and real-time order broken', () => {
    const { h } = base();
    // c told KNOWN_NOT_COMMITTED, yet the chain holds it; b sits before a although a was told committed first.
    const chain: ChainLink[] = [
      { attemptId: 'b', start: 0, end: 1 },
      { attemptId: 'a', start: 1, end: 3 },
      { attemptId: 'c', start: 3, end: 4 },
    ];
    const broken = checkLogHistory(h, chain, 0);
    expect(broken).toContain('append (op 1) told a KNOWN_COMMITTED [0, 2), the chain holds [1, 3)');
    expect(broken).toContain('append (op 7) told c KNOWN_NOT_COMMITTED, yet the chain holds it at [3, 4)');
    expect(broken).toContain('a was told committed (op 1) before b was invoked (op 2), yet sits after it');
  });

  it('catches a chain that reuses or skips offsets', () => {
    const { h } = base();
    const broken = checkLogHistory(
      h,
      [
        { attemptId: 'a', start: 0, end: 2 },
        { attemptId: 'b', start: 1, end: 2 },
      ],
      0,
    );
    expect(broken[0]).toBe('the commit chain jumps from 2 to 1');
  });
});
