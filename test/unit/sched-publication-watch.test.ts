import { describe, expect, it } from 'vitest';
import {
  capsuleHistoryProblems,
  custodyHistoryProblems,
  type CapsuleSample,
  type CustodySample,
} from '../sched/scenarios/publication-watch.js';

/**
 * The publication scenario's history rules (docs/rules.md#quality-capsule moves; custody
 * released by its holder), on samples only.
 */
const cap = (version: number, state: CapsuleSample['state'], extra: Partial<CapsuleSample> = {}): CapsuleSample => ({
  version,
  state,
  retired: false,
  at: 'cut',
  ...extra,
});
const cus = (state: CustodySample['state'], epoch: number, invocationId = 'inv-a'): CustodySample => ({
  state,
  epoch,
  invocationId,
  at: 'cut',
});

describe('capsuleHistoryProblems', () => {
  it('accepts the forward paths of the capsule state machine, guard and completion writes in between', () => {
    expect(
      capsuleHistoryProblems([
        cap(1, 'PREPARED'),
        cap(2, 'PREPARED', { reader: 't1' }),
        cap(3, 'TARGET_PENDING'),
        cap(4, 'TARGET_PENDING', { reader: 't2' }),
        cap(5, 'COMPLETE', { completionVersion: 5 }),
        cap(6, 'COMPLETE', { completionVersion: 5, retired: true }),
      ]),
    ).toEqual([]);
    expect(capsuleHistoryProblems([cap(1, 'PREPARED'), cap(2, 'FAILED')])).toEqual([]);
  });

  it('names a move back, a rewritten verdict or completion version, an un-retirement and a guard replaced without release', () => {
    expect(capsuleHistoryProblems([cap(1, 'PREPARED'), cap(2, 'TARGET_PENDING'), cap(3, 'PREPARED')])).toEqual([
      expect.stringContaining('outside its state machine'),
    ]);
    expect(
      capsuleHistoryProblems([
        cap(2, 'COMPLETE', { completionVersion: 2 }),
        cap(3, 'FAILED', { completionVersion: 2 }),
      ]),
    ).toEqual([expect.stringContaining('outside its state machine')]);
    expect(
      capsuleHistoryProblems([
        cap(2, 'COMPLETE', { completionVersion: 2 }),
        cap(3, 'COMPLETE', { completionVersion: 3 }),
      ]),
    ).toEqual([expect.stringContaining('completion version rewritten 2 → 3')]);
    expect(capsuleHistoryProblems([cap(3, 'PREPARED'), cap(2, 'PREPARED')])).toEqual([
      expect.stringContaining('version went back'),
    ]);
    expect(capsuleHistoryProblems([cap(3, 'COMPLETE', { retired: true }), cap(4, 'COMPLETE')])).toEqual([
      expect.stringContaining('un-retired'),
    ]);
    expect(
      capsuleHistoryProblems([
        cap(2, 'PREPARED', { reader: 'aaaaaaaa1' }),
        cap(3, 'PREPARED', { reader: 'bbbbbbbb2' }),
      ]),
    ).toEqual([expect.stringContaining('replaced')]);
  });
});

describe('custodyHistoryProblems', () => {
  it('accepts takeovers by the same operation and a release at the holder epoch', () => {
    expect(custodyHistoryProblems([cus('HELD', 1), cus('HELD', 2), cus('RELEASED', 2)], 'inv-a')).toEqual([]);
  });

  it('names another holder, an epoch going back and a release at another epoch', () => {
    expect(custodyHistoryProblems([cus('HELD', 1, 'inv-b')], 'inv-a')).toEqual([
      expect.stringContaining('custody names inv-b'),
    ]);
    expect(custodyHistoryProblems([cus('HELD', 2), cus('HELD', 1)], 'inv-a')).toEqual([
      expect.stringContaining('went back 2 → 1'),
    ]);
    expect(custodyHistoryProblems([cus('HELD', 2), cus('RELEASED', 3)], 'inv-a')).toEqual([
      expect.stringContaining('held at epoch 2 released at epoch 3'),
    ]);
  });
});
