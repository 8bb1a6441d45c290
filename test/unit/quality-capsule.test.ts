import { describe, expect, it } from 'vitest';
import {
  assertCapsuleStateChange,
  assertCapsuleTransition,
  assertOwnerToken,
  assertReaderAcquirable,
  assertRetirable,
  assertWindowClosable,
  assertWritableCapsule,
  CAPSULE_STATES,
  CAPSULE_TRANSITIONS,
  canCapsuleTransition,
  isFinalCapsuleState,
  type CapsuleState,
} from '../../src/domain/quality/capsule.js';
import { parseCapsule } from '../../src/domain/quality/capsule-parse.js';
import { CutpointError } from '../../src/domain/errors.js';
import {
  completeCapsule,
  failedCapsule,
  hex,
  pendingCapsule,
  preparedCapsule,
  retiredCapsule,
  TOKEN,
  v1Capsule,
  withReader,
} from './quality-fixtures.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof CutpointError) return `${error.name} ${error.code}`;
    throw error;
  }
  return 'no error';
}

/** docs/rules.md#quality-capsule, edge for edge (U1). */
const SPEC_EDGES: Array<[CapsuleState | null, CapsuleState]> = [
  [null, 'PREPARED'],
  ['PREPARED', 'COMPLETE'],
  ['PREPARED', 'FAILED'],
  ['PREPARED', 'TARGET_PENDING'],
  ['TARGET_PENDING', 'COMPLETE'],
  ['TARGET_PENDING', 'FAILED'],
  ['TARGET_PENDING', 'TARGET_PENDING'],
];

describe('capsule transitions (U1, docs/rules.md#quality-capsule)', () => {
  it('the table is exactly the spec edges', () => {
    expect(CAPSULE_TRANSITIONS.map((t) => [t.from, t.to])).toEqual(SPEC_EDGES);
  });

  it('every pair not in the table is refused with a stable name and code', () => {
    const key = (from: CapsuleState | null, to: CapsuleState) => `${from}>${to}`;
    const allowed = new Set(SPEC_EDGES.map(([f, t]) => key(f, t)));
    for (const from of [null, ...CAPSULE_STATES]) {
      for (const to of CAPSULE_STATES) {
        expect(canCapsuleTransition(from, to)).toBe(allowed.has(key(from, to)));
        if (!allowed.has(key(from, to))) {
          expect(codeOf(() => assertCapsuleTransition(from, to))).toBe(
            'Quality.IllegalCapsuleTransition quality.illegal_capsule_transition',
          );
        }
      }
    }
  });

  it('COMPLETE and FAILED are final; nothing re-enters PREPARED', () => {
    for (const to of CAPSULE_STATES) {
      expect(canCapsuleTransition('COMPLETE', to)).toBe(false);
      expect(canCapsuleTransition('FAILED', to)).toBe(false);
    }
    for (const from of CAPSULE_STATES) expect(canCapsuleTransition(from, 'PREPARED')).toBe(false);
    expect(CAPSULE_STATES.filter(isFinalCapsuleState)).toEqual(['COMPLETE', 'FAILED']);
  });
});

describe('owner token (U1)', () => {
  it('a state change needs the exact token of the held guard', () => {
    const held = withReader(preparedCapsule());
    expect(() => assertOwnerToken(held, TOKEN)).not.toThrow();
    expect(() => assertCapsuleStateChange(held, 'COMPLETE', TOKEN)).not.toThrow();
    expect(codeOf(() => assertCapsuleStateChange(held, 'COMPLETE', `${TOKEN}x`))).toBe(
      'Quality.ReaderGuardHeld quality.reader_guard_held',
    );
    expect(codeOf(() => assertCapsuleStateChange(held, 'COMPLETE', ''))).toBe(
      'Quality.ReaderGuardHeld quality.reader_guard_held',
    );
    expect(codeOf(() => assertCapsuleStateChange(preparedCapsule(), 'COMPLETE', TOKEN))).toBe(
      'Quality.ReaderGuardNotHeld quality.reader_guard_not_held',
    );
  });

  it('the token is checked before the edge, and the edge still applies with the right token', () => {
    const held = withReader(pendingCapsule());
    expect(codeOf(() => assertCapsuleStateChange(held, 'PREPARED', TOKEN))).toBe(
      'Quality.IllegalCapsuleTransition quality.illegal_capsule_transition',
    );
    expect(codeOf(() => assertCapsuleStateChange(held, 'PREPARED', 'stale'))).toBe(
      'Quality.ReaderGuardHeld quality.reader_guard_held',
    );
  });

  it('refusal messages never carry the token', () => {
    try {
      assertOwnerToken(withReader(preparedCapsule()), 'tok-zombie');
    } catch (error) {
      expect(String((error as Error).message)).not.toContain(TOKEN);
      expect(String((error as Error).message)).not.toContain('tok-zombie');
    }
  });

  it('v1 capsules are read-only: no guard, no change, no markers', () => {
    const v1 = v1Capsule();
    const code = 'Quality.CapsuleVersionUnsupported quality.capsule_version_unsupported';
    expect(codeOf(() => assertWritableCapsule(v1))).toBe(code);
    expect(codeOf(() => assertOwnerToken(v1, TOKEN))).toBe(code);
    expect(codeOf(() => assertReaderAcquirable(v1))).toBe(code);
    expect(codeOf(() => assertRetirable(v1))).toBe(code);
  });

  it('the guard is acquirable only in PREPARED/TARGET_PENDING without a reader', () => {
    expect(() => assertReaderAcquirable(preparedCapsule())).not.toThrow();
    expect(() => assertReaderAcquirable(pendingCapsule())).not.toThrow();
    expect(codeOf(() => assertReaderAcquirable(withReader(preparedCapsule())))).toBe(
      'Quality.ReaderGuardHeld quality.reader_guard_held',
    );
    expect(codeOf(() => assertReaderAcquirable(completeCapsule()))).toContain('quality.illegal_capsule_transition');
    expect(codeOf(() => assertReaderAcquirable(failedCapsule()))).toContain('quality.illegal_capsule_transition');
  });

  it('only a COMPLETE capsule gets the retirement and closure markers, each once', () => {
    expect(() => assertRetirable(completeCapsule())).not.toThrow();
    expect(codeOf(() => assertRetirable(failedCapsule()))).toContain('quality.illegal_capsule_transition');
    expect(codeOf(() => assertRetirable(retiredCapsule()))).toContain('quality.illegal_capsule_transition');
    const noEvidence = completeCapsule({
      completion: { version: 6, at: '2026-01-02T03:05:00.000Z', runId: 'run-current' },
    });
    expect(codeOf(() => assertRetirable(noEvidence))).toContain('quality.illegal_capsule_transition');
    expect(() => assertWindowClosable(retiredCapsule())).not.toThrow();
    expect(codeOf(() => assertWindowClosable(completeCapsule()))).toContain('quality.illegal_capsule_transition');
    const closed = retiredCapsule({
      replay: { windowEndsAt: '2026-01-16T03:05:00.000Z', closedAt: '2026-01-05T00:00:00.000Z', reason: 'expired' },
    });
    expect(codeOf(() => assertWindowClosable(closed))).toContain('quality.illegal_capsule_transition');
  });
});

describe('parseCapsule', () => {
  const stored = (c: object) => ({ pk: 'quality#t', sk: 'capsule#inv-x', ...c });

  it('reads every valid shape back unchanged (envelope dropped)', () => {
    for (const c of [
      preparedCapsule(),
      withReader(preparedCapsule()),
      pendingCapsule(),
      completeCapsule(),
      retiredCapsule(),
      failedCapsule(),
      v1Capsule(),
    ]) {
      expect(parseCapsule(JSON.parse(JSON.stringify(stored(c))))).toEqual(c);
    }
  });

  it('keeps a restored item whose completion version exceeds its row version (rollback is decided by continuity)', () => {
    const rolledBack = completeCapsule({ version: 4 });
    expect(parseCapsule(rolledBack)).toEqual(rolledBack);
  });

  const MALFORMED = 'Quality.EvidenceInvalid quality.evidence_malformed';
  const broken: Array<[string, unknown]> = [
    ['not an object', 'capsule'],
    ['array', []],
    ['no schema', { ...preparedCapsule(), schema: undefined }],
    ['schema as text', { ...preparedCapsule(), schema: '2' }],
    ['unknown field', { ...preparedCapsule(), extra: 1 }],
    ['missing state', { ...preparedCapsule(), state: undefined }],
    ['v1 state in v2', { ...preparedCapsule(), state: 'REJECTED' }],
    ['INCOMPLETE is never stored', { ...preparedCapsule(), state: 'INCOMPLETE' }],
    ['version 0', { ...preparedCapsule(), version: 0 }],
    ['version text', { ...preparedCapsule(), version: '3' }],
    ['short digest', { ...preparedCapsule(), coreDigest: 'abc' }],
    ['upper-case digest', { ...preparedCapsule(), coreDigest: hex('C') }],
    [
      'digests missing probes',
      {
        ...preparedCapsule(),
        digests: { policy: hex('1'), admission: hex('2'), inventory: hex('3'), authorityBinding: hex('5') },
      },
    ],
    ['bad uuid', { ...preparedCapsule(), generation: { candidateUuid: 'not-a-uuid' } }],
    ['staged not passed', { ...preparedCapsule(), staged: { passed: false, resultsDigest: hex('7') } }],
    ['null reader', { ...preparedCapsule(), reader: null }],
    [
      'reader without token',
      { ...withReader(preparedCapsule()), reader: { ...withReader(preparedCapsule()).reader, token: undefined } },
    ],
    ['bad instant', { ...retiredCapsule(), retiredAt: '2026-01-02' }],
    ['COMPLETE without completion', { ...completeCapsule(), completion: undefined }],
    ['completion on PREPARED', { ...preparedCapsule(), completion: completeCapsule().completion }],
    ['FAILED without failure', { ...failedCapsule(), failure: undefined }],
    [
      'failure naming no probe',
      { ...failedCapsule(), failure: { probes: [], at: '2026-01-02T03:05:00.000Z', runId: 'r' } },
    ],
    ['TARGET_PENDING without observation', { ...pendingCapsule(), lastObservation: undefined }],
    [
      'observation disagrees with state',
      { ...completeCapsule(), lastObservation: { ...completeCapsule().lastObservation, outcome: 'FAILED' } },
    ],
    [
      'retired FAILED',
      {
        ...failedCapsule(),
        retiredAt: '2026-01-02T04:00:00.000Z',
        replay: { windowEndsAt: '2026-01-16T03:05:00.000Z' },
      },
    ],
    ['retired without window end', { ...retiredCapsule(), replay: {} }],
    [
      'closed without reason',
      {
        ...retiredCapsule(),
        replay: { windowEndsAt: '2026-01-16T03:05:00.000Z', closedAt: '2026-01-05T00:00:00.000Z' },
      },
    ],
    [
      'successor closure without closedBy',
      {
        ...retiredCapsule(),
        replay: { windowEndsAt: '2026-01-16T03:05:00.000Z', closedAt: '2026-01-05T00:00:00.000Z', reason: 'successor' },
      },
    ],
    ['guard on COMPLETE', withReader(completeCapsule())],
    [
      'remote termination claimed',
      { ...pendingCapsule(), lastObservation: { ...pendingCapsule().lastObservation, remoteTermination: 'VERIFIED' } },
    ],
    ['v1 with completion', { ...v1Capsule(), completion: completeCapsule().completion }],
    ['v1 staged.passed text', { ...v1Capsule(), staged: { passed: 'true' } }],
  ];
  it.each(broken)('%s → quality.evidence_malformed, never a default', (_label, item) => {
    expect(codeOf(() => parseCapsule(item))).toBe(MALFORMED);
  });

  it('an unknown schema number is capsule_version_unsupported', () => {
    expect(codeOf(() => parseCapsule({ ...preparedCapsule(), schema: 3 }))).toBe(
      'Quality.CapsuleVersionUnsupported quality.capsule_version_unsupported',
    );
  });

  it('a v1 capsule stays v1 (no conversion)', () => {
    const parsed = parseCapsule(v1Capsule());
    expect(parsed.schema).toBe(1);
    expect(parsed).not.toHaveProperty('generation');
  });
});
