import { describe, expect, it } from 'vitest';
import {
  actionGuide,
  assertQualityAction,
  INCONSISTENT,
  type ActionInput,
  type CapsuleView,
} from '../../src/domain/quality/actions.js';
import { JOURNAL_STATES } from '../../src/domain/delivery/journal-states.js';
import { CAPSULE_STATES } from '../../src/domain/quality/capsule.js';

const base: ActionInput = {
  journalState: 'PUBLISHED',
  dispatchCount: 1,
  capsule: { kind: 'v2', state: 'PREPARED' },
  guardHeld: false,
  evidence: 'valid',
  replayWindow: 'none',
  retired: false,
  ownedStagesRecorded: true,
};
const v2 = (state: (typeof CAPSULE_STATES)[number]): CapsuleView => ({ kind: 'v2', state });
const guide = (over: Partial<ActionInput>) => actionGuide({ ...base, ...over });

/** docs/rules.md#quality-state-to-action, row by row (U2). */
describe('state-to-action guide (U2, docs/rules.md#quality-state-to-action)', () => {
  const rows: Array<[string, Partial<ActionInput>, string[], string]> = [
    [
      'EMPTY_STAGING, no capsule',
      { journalState: 'EMPTY_STAGING', dispatchCount: 0, capsule: { kind: 'absent' } },
      ['retire'],
      'delivery.empty_staging',
    ],
    [
      'PARTIAL_PROVED, stages recorded, no continuation proved',
      { journalState: 'PARTIAL_PROVED', dispatchCount: 0, capsule: { kind: 'absent' } },
      ['retire'],
      'delivery.partial_not_continuable',
    ],
    [
      'PARTIAL_PROVED, stages recorded, continuation proved',
      {
        journalState: 'PARTIAL_PROVED',
        dispatchCount: 0,
        capsule: { kind: 'absent' },
        continuable: { unfinishedParts: 2, rowsProved: 900 },
      },
      ['resume', 'retire'],
      'delivery.partial_proved',
    ],
    [
      'PARTIAL_PROVED, stages unrecorded',
      { journalState: 'PARTIAL_PROVED', dispatchCount: 0, capsule: { kind: 'absent' }, ownedStagesRecorded: false },
      [],
      'delivery.owned_stage_unrecorded',
    ],
    [
      'WRITING_UNKNOWN',
      { journalState: 'WRITING_UNKNOWN', dispatchCount: 0, capsule: { kind: 'absent' } },
      ['reconcile'],
      'delivery.writing_unknown',
    ],
    [
      'VERIFIED_EOF, no capsule, count 0',
      { journalState: 'VERIFIED_EOF', dispatchCount: 0, capsule: { kind: 'absent' } },
      ['resume'],
      'delivery.verified_eof',
    ],
    [
      'VERIFIED_EOF, PREPARED, count 0',
      { journalState: 'VERIFIED_EOF', dispatchCount: 0, capsule: v2('PREPARED') },
      ['resume'],
      'quality.prepared',
    ],
    [
      'REEXTRACT_REQUIRED, no capsule (staged failure)',
      { journalState: 'REEXTRACT_REQUIRED', dispatchCount: 0, capsule: { kind: 'absent' } },
      ['retire'],
      'quality.staged_failed',
    ],
    [
      'REEXTRACT_REQUIRED, v1 REJECTED',
      { journalState: 'REEXTRACT_REQUIRED', dispatchCount: 0, capsule: { kind: 'v1', state: 'REJECTED' } },
      ['retire'],
      'quality.staged_failed',
    ],
    [
      'REEXTRACT_REQUIRED, fenced non-publication',
      { journalState: 'REEXTRACT_REQUIRED', dispatchCount: 1, capsule: v2('PREPARED') },
      ['retire'],
      'publication.not_published_fenced',
    ],
    [
      'PUBLICATION_UNKNOWN, PREPARED, count 1',
      { journalState: 'PUBLICATION_UNKNOWN', capsule: v2('PREPARED') },
      ['reconcile'],
      'publication.dispatch_unknown',
    ],
    ['PUBLISHED, PREPARED', { capsule: v2('PREPARED') }, ['observe'], 'quality.prepared_published'],
    ['PUBLISHED, TARGET_PENDING', { capsule: v2('TARGET_PENDING') }, ['observe'], 'quality.target_pending'],
    ['PUBLISHED, guard held', { capsule: v2('TARGET_PENDING'), guardHeld: true }, [], 'quality.reader_guard_held'],
    ['PUBLISHED, FAILED', { capsule: v2('FAILED') }, [], 'quality.failed'],
    ['PUBLISHED, COMPLETE', { capsule: v2('COMPLETE') }, ['replay', 'resume'], 'quality.complete'],
    [
      'SUCCEEDED, COMPLETE',
      { journalState: 'SUCCEEDED', capsule: v2('COMPLETE') },
      ['replay', 'resume'],
      'quality.complete',
    ],
    [
      'CUSTODY_RELEASED, retired, window open',
      { journalState: 'CUSTODY_RELEASED', capsule: v2('COMPLETE'), retired: true, replayWindow: 'open' },
      ['replay'],
      'quality.complete_retired',
    ],
    [
      'CUSTODY_RELEASED, window closed',
      { journalState: 'CUSTODY_RELEASED', capsule: v2('COMPLETE'), retired: true, replayWindow: 'closed' },
      [],
      'quality.replay_window_closed',
    ],
    ['evidence missing', { capsule: v2('COMPLETE'), evidence: 'missing' }, [], 'quality.evidence_missing'],
    ['evidence malformed', { capsule: v2('PREPARED'), evidence: 'malformed' }, [], 'quality.evidence_malformed'],
    [
      'evidence unreadable',
      { capsule: v2('TARGET_PENDING'), evidence: 'unreadable' },
      [],
      'quality.evidence_unreadable',
    ],
    [
      'INCIDENT_RETAINED',
      { journalState: 'INCIDENT_RETAINED', capsule: v2('PREPARED') },
      [],
      'delivery.incident_retained',
    ],
  ];
  it.each(rows)('%s', (_label, over, actions, code) => {
    expect(guide(over)).toEqual({ permittedActions: actions, diagnosticCode: code });
  });

  it('guard held ⇒ [] in every journal state, capsule state and evidence class (N8)', () => {
    for (const journalState of JOURNAL_STATES) {
      for (const capsule of [
        ...CAPSULE_STATES.map(v2),
        { kind: 'absent' } as const,
        { kind: 'v1', state: 'PREPARED' } as const,
      ]) {
        for (const evidence of ['valid', 'missing', 'pending', 'unknown'] as const) {
          for (const dispatchCount of [0, 1]) {
            expect(guide({ journalState, capsule, evidence, dispatchCount, guardHeld: true })).toEqual({
              permittedActions: [],
              diagnosticCode: 'quality.reader_guard_held',
            });
          }
        }
      }
    }
  });

  it('a rolled-back capsule or a replaced authority table offers nothing in any journal state, guard or evidence class, and names which', () => {
    for (const journalState of JOURNAL_STATES) {
      for (const guardHeld of [false, true]) {
        expect(guide({ journalState, guardHeld, capsule: v2('COMPLETE'), authority: 'rollback' })).toEqual({
          permittedActions: [],
          diagnosticCode: 'quality.authority_version_rollback',
        });
        expect(guide({ journalState, guardHeld, capsule: v2('PREPARED'), authority: 'replaced' })).toEqual({
          permittedActions: [],
          diagnosticCode: 'quality.authority_replaced',
        });
      }
    }
  });

  it('INCIDENT_RETAINED and FAILED offer nothing, whatever else holds (N7)', () => {
    for (const capsule of CAPSULE_STATES.map(v2))
      expect(guide({ journalState: 'INCIDENT_RETAINED', capsule }).permittedActions).toEqual([]);
    for (const journalState of JOURNAL_STATES)
      expect(guide({ journalState, capsule: v2('FAILED') }).permittedActions).toEqual([]);
  });

  it('completion evidence not yet recorded: resume repairs it, replay is not offered', () => {
    expect(guide({ capsule: v2('COMPLETE'), evidence: 'pending' })).toEqual({
      permittedActions: ['resume'],
      diagnosticCode: 'quality.completion_evidence_pending',
    });
  });

  it('evidence not read by the caller lists the table row (the action verifies it before acting)', () => {
    expect(guide({ capsule: v2('PREPARED'), evidence: 'unknown' }).permittedActions).toEqual(['observe']);
  });

  it('an unusable capsule item offers nothing', () => {
    expect(guide({ capsule: { kind: 'malformed' } })).toEqual({
      permittedActions: [],
      diagnosticCode: 'quality.evidence_malformed',
    });
    expect(guide({ capsule: { kind: 'unreadable' } })).toEqual({
      permittedActions: [],
      diagnosticCode: 'quality.evidence_unreadable',
    });
  });

  it('a v1 capsule is never observed or replayed: its operation keeps the delivery guide (N16)', () => {
    expect(guide({ capsule: { kind: 'v1', state: 'PREPARED' } })).toEqual({
      permittedActions: ['resume'],
      diagnosticCode: 'delivery.published',
    });
    expect(guide({ journalState: 'CUSTODY_RELEASED', capsule: { kind: 'v1', state: 'PREPARED' } })).toEqual({
      permittedActions: [],
      diagnosticCode: 'delivery.custody_released',
    });
    expect(guide({ capsule: { kind: 'v1', state: 'REJECTED' } })).toEqual({
      permittedActions: [],
      diagnosticCode: INCONSISTENT,
    });
  });

  const inconsistent: Array<[string, Partial<ActionInput>]> = [
    [
      'observe would dispatch again: VERIFIED_EOF with count 1',
      { journalState: 'VERIFIED_EOF', dispatchCount: 1, capsule: v2('PREPARED') },
    ],
    [
      'VERIFIED_EOF with a consumed capsule',
      { journalState: 'VERIFIED_EOF', dispatchCount: 0, capsule: v2('COMPLETE') },
    ],
    [
      'PUBLICATION_UNKNOWN without dispatch',
      { journalState: 'PUBLICATION_UNKNOWN', dispatchCount: 0, capsule: v2('PREPARED') },
    ],
    ['PUBLICATION_UNKNOWN without capsule', { journalState: 'PUBLICATION_UNKNOWN', capsule: { kind: 'absent' } }],
    ['PUBLISHED without capsule', { capsule: { kind: 'absent' } }],
    ['SUCCEEDED not COMPLETE', { journalState: 'SUCCEEDED', capsule: v2('TARGET_PENDING') }],
    [
      'CUSTODY_RELEASED not retired',
      { journalState: 'CUSTODY_RELEASED', capsule: v2('COMPLETE'), replayWindow: 'open' },
    ],
    [
      'CUSTODY_RELEASED without capsule',
      { journalState: 'CUSTODY_RELEASED', capsule: { kind: 'absent' }, retired: true, replayWindow: 'open' },
    ],
    ['dispatch count 2', { dispatchCount: 2 }],
    [
      'a capsule before the stage is verified',
      { journalState: 'WRITING_UNKNOWN', dispatchCount: 0, capsule: v2('PREPARED') },
    ],
  ];
  it.each(inconsistent)('%s ⇒ [] (%s)', (_label, over) => {
    expect(guide(over)).toEqual({ permittedActions: [], diagnosticCode: INCONSISTENT });
  });

  it('lists are sorted and drawn from observe|reconcile|replay|resume|retire only', () => {
    for (const journalState of JOURNAL_STATES) {
      for (const capsule of [...CAPSULE_STATES.map(v2), { kind: 'absent' } as const]) {
        for (const dispatchCount of [0, 1]) {
          for (const replayWindow of ['open', 'closed', 'none'] as const) {
            const { permittedActions } = guide({
              journalState,
              capsule,
              dispatchCount,
              replayWindow,
              retired: replayWindow !== 'none',
            });
            expect(permittedActions).toEqual([...permittedActions].sort());
            for (const a of permittedActions)
              expect(['observe', 'reconcile', 'replay', 'resume', 'retire']).toContain(a);
            // replay only on COMPLETE; observe only on PREPARED/TARGET_PENDING after publication
            if (permittedActions.includes('replay')) expect(capsule).toEqual(v2('COMPLETE'));
            if (permittedActions.includes('observe')) expect(journalState).toBe('PUBLISHED');
          }
        }
      }
    }
  });

  it('assertQualityAction refuses what is not listed, with a stable name and code', () => {
    expect(() => assertQualityAction({ ...base, capsule: v2('PREPARED') }, 'observe')).not.toThrow();
    expect(() => assertQualityAction({ ...base, capsule: v2('FAILED') }, 'observe')).toThrow(
      expect.objectContaining({ name: 'Quality.ActionNotPermitted', code: 'quality.action_not_permitted' }),
    );
    expect(() => assertQualityAction({ ...base, capsule: v2('PREPARED'), guardHeld: true }, 'observe')).toThrow(
      expect.objectContaining({ code: 'quality.action_not_permitted' }),
    );
  });
});
