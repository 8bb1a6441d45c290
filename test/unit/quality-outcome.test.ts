import { describe, expect, it } from 'vitest';
import { JOURNAL_STATES, type JournalState } from '../../src/domain/delivery/journal-states.js';
import {
  assertObservationClosed,
  governanceOf,
  incompleteReasons,
  isIncomplete,
  remoteTerminationOf,
  targetCommitOf,
  type ObservationClosure,
} from '../../src/domain/quality/outcome.js';
import { completeCapsule, failedCapsule, pendingCapsule, preparedCapsule, v1Capsule } from './quality-fixtures.js';

describe('target_commit (N1, N9)', () => {
  const proven: Record<JournalState, ReturnType<typeof targetCommitOf>> = {
    EMPTY_STAGING: 'not_proven',
    WRITING_UNKNOWN: 'not_proven',
    PARTIAL_PROVED: 'not_proven',
    VERIFIED_EOF: 'not_proven',
    REEXTRACT_REQUIRED: 'not_proven',
    PUBLICATION_UNKNOWN: 'unknown',
    PUBLISHED: 'proven',
    SUCCEEDED: 'proven',
    RETIRED: 'not_proven',
    CUSTODY_RELEASED: 'proven',
    INCIDENT_RETAINED: 'proven',
  };
  it.each(JOURNAL_STATES)('%s with the fact it should hold', (state) => {
    const hasPublicationFact = proven[state] === 'proven';
    expect(targetCommitOf({ state, hasPublicationFact })).toBe(proven[state]);
  });

  it('a missing publication fact is never proof of either outcome', () => {
    for (const state of ['PUBLISHED', 'SUCCEEDED', 'CUSTODY_RELEASED', 'INCIDENT_RETAINED'] as const) {
      expect(targetCommitOf({ state, hasPublicationFact: false })).toBe('unknown');
    }
  });

  it('a publication fact contradicting a pre-dispatch state is unknown; an unreadable journal is unknown', () => {
    expect(targetCommitOf({ state: 'VERIFIED_EOF', hasPublicationFact: true })).toBe('unknown');
    expect(targetCommitOf({ state: 'PUBLICATION_UNKNOWN', hasPublicationFact: true })).toBe('unknown');
    expect(targetCommitOf('unreadable')).toBe('unknown');
  });
});

describe('governance (N1)', () => {
  it('comes from the capsule only', () => {
    expect(governanceOf(preparedCapsule())).toBe('pending');
    expect(governanceOf(pendingCapsule())).toBe('pending');
    expect(governanceOf(completeCapsule())).toBe('complete');
    expect(governanceOf(failedCapsule())).toBe('failed');
    expect(governanceOf(v1Capsule())).toBe('staged_only');
    expect(governanceOf('absent')).toBe('not_started');
    expect(governanceOf('unreadable')).toBe('unknown');
    expect(governanceOf('malformed')).toBe('unknown');
  });
});

describe('INCOMPLETE (N12)', () => {
  const verified: ObservationClosure = { workerExit: 'observed', persistence: 'applied', guardRelease: 'released' };

  it('is not derived when every closing step is verified', () => {
    expect(incompleteReasons(verified)).toEqual([]);
    expect(isIncomplete(verified)).toBe(false);
    expect(isIncomplete({ ...verified, workerExit: 'not_started' })).toBe(false);
    expect(() => assertObservationClosed(verified)).not.toThrow();
  });

  const uncertain: Array<[Partial<ObservationClosure>, string[]]> = [
    [{ workerExit: 'not_observed' }, ['worker_shutdown_unverified']],
    [{ persistence: 'unknown' }, ['pending_persistence_uncertain']],
    [
      { persistence: 'not_applied', guardRelease: 'retained' },
      ['pending_persistence_uncertain', 'guard_release_uncertain'],
    ],
    [{ guardRelease: 'unknown' }, ['guard_release_uncertain']],
    [
      { workerExit: 'not_observed', persistence: 'unknown', guardRelease: 'unknown' },
      ['worker_shutdown_unverified', 'pending_persistence_uncertain', 'guard_release_uncertain'],
    ],
  ];
  it.each(uncertain)('%j ⇒ INCOMPLETE %j', (over, reasons) => {
    const closure = { ...verified, ...over };
    expect(incompleteReasons(closure)).toEqual(reasons);
    expect(() => assertObservationClosed(closure)).toThrow(
      expect.objectContaining({ name: 'Quality.Incomplete', code: 'quality.incomplete' }),
    );
  });

  it('remote termination is never claimed', () => {
    expect(remoteTerminationOf(true)).toBe('UNVERIFIED');
    expect(remoteTerminationOf(false)).toBe('not_applicable');
  });
});
