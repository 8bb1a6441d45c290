// Over ~300 lines (399), kept whole — one subject: the journal states, their edges and the state-to-action guide, case by case (no I/O).
import { describe, expect, it } from 'vitest';
import {
  assertTransition,
  canTransition,
  holdsCustody,
  IllegalTransitionError,
  INITIAL_STATE,
  isJournalState,
  isTerminal,
  JOURNAL_STATES,
  parseJournalState,
  successorsOf,
  TRANSITIONS,
  type JournalState,
} from '../../src/domain/delivery/journal-states.js';
import {
  diagnosticReasonFor,
  ActionNotPermittedError,
  assertActionPermitted,
  repeatsCompleted,
  assertConfirmed,
  ConfirmationRequiredError,
  diagnosticCodeFor,
  permittedActions,
  type LiveAction,
} from '../../src/domain/delivery/action-guide.js';
import { missingProof, proofsOf, type TransitionProofs } from '../../src/domain/delivery/journal-proofs.js';

/** The core state diagram (docs/rules.md#delivery-journal-states), edge for edge. */
const SEED_DIAGRAM: Array<[JournalState, JournalState]> = [
  ['EMPTY_STAGING', 'WRITING_UNKNOWN'],
  ['WRITING_UNKNOWN', 'PARTIAL_PROVED'],
  ['WRITING_UNKNOWN', 'VERIFIED_EOF'],
  ['PARTIAL_PROVED', 'RETIRED'],
  ['VERIFIED_EOF', 'PUBLICATION_UNKNOWN'],
  ['VERIFIED_EOF', 'PUBLISHED'],
  ['PUBLICATION_UNKNOWN', 'PUBLISHED'],
  ['PUBLISHED', 'SUCCEEDED'],
  ['SUCCEEDED', 'CUSTODY_RELEASED'],
  ['WRITING_UNKNOWN', 'INCIDENT_RETAINED'],
];

const recorded = { ownedStagesRecorded: true };
const unrecorded = { ownedStagesRecorded: false };
/** A PARTIAL_PROVED whose observation proved continuing safe (reconcile.ts). */
const continuableFacts = { ownedStagesRecorded: true, continuable: { unfinishedParts: 1, rowsProved: 1_170 } };

describe('journal states', () => {
  it('are exactly the seed eleven', () => {
    expect([...JOURNAL_STATES].sort()).toEqual(
      [
        'CUSTODY_RELEASED',
        'EMPTY_STAGING',
        'INCIDENT_RETAINED',
        'PARTIAL_PROVED',
        'PUBLICATION_UNKNOWN',
        'PUBLISHED',
        'REEXTRACT_REQUIRED',
        'RETIRED',
        'SUCCEEDED',
        'VERIFIED_EOF',
        'WRITING_UNKNOWN',
      ].sort(),
    );
    expect(INITIAL_STATE).toBe('EMPTY_STAGING');
  });

  it('parse back from the journal or report it inconsistent', () => {
    for (const state of JOURNAL_STATES) expect(parseJournalState(state)).toBe(state);
    for (const bad of ['published', 'UNKNOWN', '', null, 3]) {
      expect(isJournalState(bad)).toBe(false);
      expect(() => parseJournalState(bad)).toThrow(
        expect.objectContaining({
          name: 'Delivery.JournalUnavailable',
          code: 'delivery.recovery_journal_inconsistent',
        }),
      );
    }
  });
});

describe('transitions', () => {
  it.each(SEED_DIAGRAM)('diagram edge %s → %s is allowed and marked as such', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransition(from, to)).not.toThrow();
    expect(TRANSITIONS).toContainEqual(expect.objectContaining({ from, to, basis: 'diagram' }));
  });

  it('the diagram edges are exactly the ones marked diagram', () => {
    const marked = TRANSITIONS.filter((t) => t.basis === 'diagram').map((t) => [t.from, t.to]);
    expect(marked).toEqual(SEED_DIAGRAM);
  });

  it.each([
    ['EMPTY_STAGING', 'RETIRED'],
    ['REEXTRACT_REQUIRED', 'RETIRED'],
    ['PUBLICATION_UNKNOWN', 'VERIFIED_EOF'],
    ['PUBLICATION_UNKNOWN', 'REEXTRACT_REQUIRED'],
    ['VERIFIED_EOF', 'REEXTRACT_REQUIRED'],
    ['PUBLICATION_UNKNOWN', 'INCIDENT_RETAINED'],
    ['PARTIAL_PROVED', 'INCIDENT_RETAINED'],
    ['SUCCEEDED', 'INCIDENT_RETAINED'],
  ] as Array<[JournalState, JournalState]>)('text-implied edge %s → %s is allowed', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  it('the continue edge PARTIAL_PROVED → WRITING_UNKNOWN is declared with its own basis, and is the only one', () => {
    expect(canTransition('PARTIAL_PROVED', 'WRITING_UNKNOWN')).toBe(true);
    expect(TRANSITIONS.filter((t) => t.basis === 'continue')).toEqual([
      {
        from: 'PARTIAL_PROVED',
        to: 'WRITING_UNKNOWN',
        on: 'continue: the writer restarts on the unfinished parts',
        basis: 'continue',
      },
    ]);
    expect(successorsOf('PARTIAL_PROVED')).toEqual(['WRITING_UNKNOWN', 'RETIRED', 'INCIDENT_RETAINED']);
  });

  it.each([
    // Never backwards, never skipping proof.
    ['EMPTY_STAGING', 'VERIFIED_EOF'],
    ['EMPTY_STAGING', 'PUBLISHED'],
    ['WRITING_UNKNOWN', 'PUBLISHED'],
    ['WRITING_UNKNOWN', 'RETIRED'],
    ['PARTIAL_PROVED', 'VERIFIED_EOF'],
    ['PARTIAL_PROVED', 'PUBLISHED'],
    ['VERIFIED_EOF', 'SUCCEEDED'],
    ['VERIFIED_EOF', 'RETIRED'],
    ['PUBLICATION_UNKNOWN', 'RETIRED'],
    ['PUBLICATION_UNKNOWN', 'SUCCEEDED'],
    ['PUBLISHED', 'RETIRED'],
    ['PUBLISHED', 'VERIFIED_EOF'],
    ['PUBLISHED', 'REEXTRACT_REQUIRED'],
    ['PUBLISHED', 'CUSTODY_RELEASED'],
    ['SUCCEEDED', 'PUBLISHED'],
    ['SUCCEEDED', 'RETIRED'],
    ['RETIRED', 'EMPTY_STAGING'],
    ['CUSTODY_RELEASED', 'SUCCEEDED'],
    ['INCIDENT_RETAINED', 'RETIRED'],
    ['INCIDENT_RETAINED', 'CUSTODY_RELEASED'],
    ['REEXTRACT_REQUIRED', 'VERIFIED_EOF'],
    ['VERIFIED_EOF', 'VERIFIED_EOF'],
  ] as Array<[JournalState, JournalState]>)('illegal %s → %s is refused', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
    try {
      assertTransition(from, to);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(IllegalTransitionError);
      expect(e).toMatchObject({ name: 'Delivery.IllegalTransition', code: 'delivery.illegal_transition', from, to });
    }
  });

  it('terminal states and the incident state have no way out', () => {
    for (const state of ['RETIRED', 'CUSTODY_RELEASED', 'INCIDENT_RETAINED'] as const)
      expect(successorsOf(state)).toEqual([]);
  });

  it('a published delivery can never be retired or re-extracted: only completed', () => {
    expect(successorsOf('PUBLISHED')).toEqual(['SUCCEEDED', 'INCIDENT_RETAINED']);
    expect(successorsOf('SUCCEEDED')).toEqual(['CUSTODY_RELEASED', 'INCIDENT_RETAINED']);
  });

  it('every state is reachable from the initial state, and every custody holder can reach a release or an incident', () => {
    const reach = (from: JournalState) => {
      const seen = new Set<JournalState>([from]);
      const queue = [from];
      while (queue.length) {
        for (const next of successorsOf(queue.shift() as JournalState)) {
          if (!seen.has(next)) {
            seen.add(next);
            queue.push(next);
          }
        }
      }
      return seen;
    };
    expect([...reach(INITIAL_STATE)].sort()).toEqual([...JOURNAL_STATES].sort());
    for (const state of JOURNAL_STATES.filter((s) => holdsCustody(s) && s !== 'INCIDENT_RETAINED')) {
      const r = reach(state);
      expect(r.has('RETIRED') || r.has('CUSTODY_RELEASED')).toBe(true);
      expect(r.has('INCIDENT_RETAINED')).toBe(true);
    }
  });
});

describe('the state-to-action guide', () => {
  const guide: Array<[JournalState, LiveAction[], LiveAction[]]> = [
    // state, permitted with owned stages recorded, permitted without
    // EMPTY_STAGING offers retire even unrecorded: retire observes the stage by derived name and owner marker.
    ['EMPTY_STAGING', ['retire'], ['retire']],
    ['WRITING_UNKNOWN', ['reconcile'], ['reconcile']],
    ['PARTIAL_PROVED', ['retire'], []],
    ['VERIFIED_EOF', ['resume'], ['resume']],
    ['REEXTRACT_REQUIRED', ['retire'], []],
    ['PUBLICATION_UNKNOWN', ['reconcile'], ['reconcile']],
    ['PUBLISHED', ['resume'], ['resume']],
    ['SUCCEEDED', ['resume'], ['resume']],
    ['RETIRED', [], []],
    ['CUSTODY_RELEASED', [], []],
    ['INCIDENT_RETAINED', [], []],
  ];

  it('covers every state', () => {
    expect(guide.map(([s]) => s).sort()).toEqual([...JOURNAL_STATES].sort());
  });

  it.each(guide)('%s permits %j (stages recorded) and %j (not recorded)', (state, withStages, withoutStages) => {
    expect(permittedActions(state, recorded)).toEqual(withStages);
    expect(permittedActions(state, unrecorded)).toEqual(withoutStages);
  });

  it.each(guide)(
    '%s refuses every other live action with a stable name and code; inspect and the repeat of a completed retire always pass',
    (state, withStages) => {
      for (const action of ['reconcile', 'resume', 'retire'] as const) {
        if (withStages.includes(action) || (state === 'RETIRED' && action === 'retire')) {
          expect(() => assertActionPermitted(state, recorded, action)).not.toThrow();
          continue;
        }
        try {
          assertActionPermitted(state, recorded, action);
          expect.unreachable();
        } catch (e) {
          expect(e).toBeInstanceOf(ActionNotPermittedError);
          expect(e).toMatchObject({
            name: 'Delivery.ActionNotPermitted',
            code: 'delivery.recovery_action_not_permitted',
            action,
            state,
          });
        }
      }
      expect(() => assertActionPermitted(state, unrecorded, 'inspect')).not.toThrow();
    },
  );

  it('only retire repeats on the state it completed in (RETIRED), and it is not offered there', () => {
    const repeats = JOURNAL_STATES.flatMap((state) =>
      (['reconcile', 'resume', 'retire'] as const)
        .filter((action) => repeatsCompleted(state, action))
        .map((action) => `${action}@${state}`),
    );
    expect(repeats).toEqual(['retire@RETIRED']);
    expect(permittedActions('RETIRED', recorded)).toEqual([]);
    expect(repeatsCompleted('RETIRED', 'inspect')).toBe(false);
  });

  it('PARTIAL_PROVED offers resume (continue) only on the journaled continuation proof, with the stages recorded', () => {
    expect(permittedActions('PARTIAL_PROVED', continuableFacts)).toEqual(['retire', 'resume']);
    expect(() => assertActionPermitted('PARTIAL_PROVED', continuableFacts, 'resume')).not.toThrow();
    expect(permittedActions('PARTIAL_PROVED', { ...continuableFacts, ownedStagesRecorded: false })).toEqual([]);
    expect(diagnosticReasonFor('PARTIAL_PROVED', continuableFacts)).toBeUndefined();
    expect(diagnosticReasonFor('PARTIAL_PROVED', recorded)).toMatch(/every part reached EOF/);
    expect(diagnosticReasonFor('PARTIAL_PROVED', unrecorded)).toBeUndefined();
    // The fact means nothing in any other state.
    for (const state of JOURNAL_STATES.filter((s) => s !== 'PARTIAL_PROVED')) {
      expect(permittedActions(state, continuableFacts)).toEqual(permittedActions(state, recorded));
      expect(diagnosticReasonFor(state, recorded)).toBeUndefined();
    }
  });

  it('retire is refused when the owned stages are not recorded', () => {
    expect(() => assertActionPermitted('PARTIAL_PROVED', unrecorded, 'retire')).toThrow(
      expect.objectContaining({ code: 'delivery.recovery_action_not_permitted' }),
    );
  });

  it('every permitted action leads somewhere the transition table allows', () => {
    // retire ends in RETIRED; reconcile and resume move forward along declared edges.
    for (const state of JOURNAL_STATES) {
      const actions = permittedActions(state, recorded);
      if (actions.includes('retire')) expect(canTransition(state, 'RETIRED')).toBe(true);
      if (actions.length > 0) expect(successorsOf(state).length).toBeGreaterThan(0);
    }
  });

  it('custody: held by every state except RETIRED and CUSTODY_RELEASED', () => {
    for (const state of JOURNAL_STATES) {
      const terminal = state === 'RETIRED' || state === 'CUSTODY_RELEASED';
      expect(isTerminal(state)).toBe(terminal);
      expect(holdsCustody(state)).toBe(!terminal);
    }
    expect(holdsCustody('INCIDENT_RETAINED')).toBe(true);
  });

  it('diagnostic codes are stable, distinct and subsystem-scoped', () => {
    const codes = JOURNAL_STATES.map((s) => diagnosticCodeFor(s));
    expect(new Set(codes).size).toBe(JOURNAL_STATES.length);
    for (const code of codes) expect(code).toMatch(/^delivery\.[a-z_]+$/);
    expect(diagnosticCodeFor('PUBLICATION_UNKNOWN')).toBe('delivery.publication_unknown');
    expect(diagnosticCodeFor('INCIDENT_RETAINED')).toBe('delivery.incident_retained');
    expect(diagnosticCodeFor('PARTIAL_PROVED', continuableFacts)).toBe('delivery.partial_proved');
    expect(diagnosticCodeFor('PARTIAL_PROVED', recorded)).toBe('delivery.partial_not_continuable');
    expect(diagnosticCodeFor('PARTIAL_PROVED', unrecorded)).toBe('delivery.owned_stage_unrecorded');
    expect(
      diagnosticCodeFor('PARTIAL_PROVED', {
        ownedStagesRecorded: false,
        continuable: { unfinishedParts: 1, rowsProved: 0 },
      }),
    ).toBe('delivery.owned_stage_unrecorded');
    expect(diagnosticCodeFor('VERIFIED_EOF', unrecorded)).toBe('delivery.verified_eof');
    expect(diagnosticCodeFor('EMPTY_STAGING', unrecorded)).toBe('delivery.empty_staging');
  });
});

describe('proofs in the transition rule (missingProof)', () => {
  const none: TransitionProofs = {
    partsVerified: false,
    publication: false,
    evidence: false,
    checkpoint: false,
    stageAbsent: false,
  };
  const all: TransitionProofs = {
    partsVerified: true,
    publication: true,
    evidence: true,
    checkpoint: true,
    stageAbsent: true,
  };

  it("VERIFIED_EOF needs the parts' verified receipts, and nothing else", () => {
    expect(missingProof('VERIFIED_EOF', none)).toMatch(/parts' verified receipts/);
    expect(missingProof('VERIFIED_EOF', { ...all, partsVerified: false })).toMatch(/parts' verified receipts/);
    expect(missingProof('VERIFIED_EOF', { ...none, partsVerified: true })).toBeUndefined();
  });

  it("CUSTODY_RELEASED and RETIRED need the owned stage's proved absence, and nothing else", () => {
    for (const to of ['CUSTODY_RELEASED', 'RETIRED'] as const) {
      expect(missingProof(to, none)).toMatch(/absence proved/);
      expect(missingProof(to, { ...all, stageAbsent: false })).toMatch(/absence proved/);
      expect(missingProof(to, { ...none, stageAbsent: true })).toBeUndefined();
    }
  });

  it('a ClickHouse exchange publication reaches CUSTODY_RELEASED only with its predecessor proved absent and its capsule retired (the rule, not only the cleanup step)', () => {
    const exchange = { ...all, exchange: true };
    expect(missingProof('CUSTODY_RELEASED', exchange)).toMatch(
      /predecessor generation proved absent and its quality capsule retired/,
    );
    expect(missingProof('CUSTODY_RELEASED', { ...exchange, predecessorRetired: false })).toMatch(/predecessor/);
    expect(missingProof('CUSTODY_RELEASED', { ...exchange, predecessorRetired: true })).toBeUndefined();
    // What the facts prove: the cleanup fact must name the very predecessor the dispatch recorded.
    const P = '11111111-1111-4111-8111-111111111111';
    const facts = {
      parts: {},
      publication: {},
      evidence: {},
      checkpoint: {},
      absence: { table: { schema: 'pub', table: 'stg' } },
      dispatch: { predecessorUuid: P },
    };
    expect(proofsOf(facts)).toMatchObject({ exchange: true, predecessorRetired: false });
    expect(
      proofsOf({ ...facts, publicationCleanup: { predecessorUuid: '22222222-2222-4222-8222-222222222222' } }),
    ).toMatchObject({ predecessorRetired: false });
    expect(proofsOf({ ...facts, publicationCleanup: { predecessorUuid: P } })).toMatchObject({
      predecessorRetired: true,
    });
    // A SQL route (no dispatch) is not asked for it.
    expect(proofsOf({ ...facts, dispatch: undefined })).not.toHaveProperty('exchange');
  });

  it('PUBLISHED needs the receipt; SUCCEEDED the evidence and the checkpoint', () => {
    expect(missingProof('PUBLISHED', none)).toMatch(/publication receipt/);
    expect(missingProof('PUBLISHED', { ...none, publication: true })).toBeUndefined();
    expect(missingProof('SUCCEEDED', { ...none, evidence: true })).toMatch(/checkpoint/);
    expect(missingProof('SUCCEEDED', { ...none, checkpoint: true })).toMatch(/evidence/);
    expect(missingProof('SUCCEEDED', { ...none, evidence: true, checkpoint: true })).toBeUndefined();
  });

  it('every custody release (every edge into a terminal state) requires a proof; so do VERIFIED_EOF, PUBLISHED and SUCCEEDED; the other states need none', () => {
    for (const t of TRANSITIONS) {
      if (isTerminal(t.to)) expect(missingProof(t.to, none), `${t.from}>${t.to}`).toBeDefined();
      else if (t.to !== 'PUBLISHED' && t.to !== 'SUCCEEDED' && t.to !== 'VERIFIED_EOF')
        expect(missingProof(t.to, none), `${t.from}>${t.to}`).toBeUndefined();
    }
  });
});

describe('confirmation', () => {
  it.each(['reconcile', 'resume', 'retire'] as const)('%s without --yes is refused before anything else', (action) => {
    for (const yes of [undefined, false]) {
      try {
        assertConfirmed(action, yes);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(ConfirmationRequiredError);
        expect(e).toMatchObject({
          name: 'Delivery.ConfirmationRequired',
          code: 'delivery.recovery_confirmation_required',
        });
      }
    }
    expect(() => assertConfirmed(action, true)).not.toThrow();
  });
});
