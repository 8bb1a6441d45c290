import type { CapsuleV1, CapsuleV2 } from '../../src/domain/quality/capsule.js';

/** Fixed, valid capsule items for the quality unit tests (no I/O, no randomness). */

export const hex = (c: string): string => c.repeat(64).slice(0, 64);
export const TOKEN = 'tok-0123456789abcdef0123456789abcdef';
export const CANDIDATE_UUID = '0f1e2d3c-4b5a-8697-a8b9-cadbecfd0e1f';

export function preparedCapsule(overrides: Partial<CapsuleV2> = {}): CapsuleV2 {
  return {
    schema: 2,
    version: 3,
    state: 'PREPARED',
    coreDigest: hex('c'),
    digests: {
      policy: hex('1'),
      admission: hex('2'),
      inventory: hex('3'),
      probes: hex('4'),
      authorityBinding: hex('5'),
    },
    generation: { candidateUuid: CANDIDATE_UUID },
    prepared: { key: 'quality/daily/inv-abc/prepared.json', sha256: hex('6') },
    staged: { passed: true, resultsDigest: hex('7') },
    runs: { originalRunId: 'run-original', originalLoadId: 'load-original' },
    replay: {},
    ...overrides,
  };
}

export function withReader(capsule: CapsuleV2, token = TOKEN): CapsuleV2 {
  return {
    ...capsule,
    reader: {
      token,
      session: 'sess-1',
      runId: 'run-current',
      fence: { owner: 'owner-1', session: 'sess-1', epoch: 1 },
      acquiredAt: '2026-01-02T03:04:05.000Z',
      deadlineAt: '2026-01-02T03:08:05.000Z',
    },
  };
}

export function pendingCapsule(): CapsuleV2 {
  return preparedCapsule({
    state: 'TARGET_PENDING',
    version: 5,
    lastObservation: {
      runId: 'run-current',
      outcome: 'TARGET_PENDING',
      at: '2026-01-02T03:08:06.000Z',
      errorClass: 'KEEPER_NO_NODE',
      remoteTermination: 'UNVERIFIED',
    },
  });
}

export function completeCapsule(overrides: Partial<CapsuleV2> = {}): CapsuleV2 {
  return preparedCapsule({
    state: 'COMPLETE',
    version: 7,
    lastObservation: {
      runId: 'run-current',
      outcome: 'COMPLETE',
      at: '2026-01-02T03:05:00.000Z',
      remoteTermination: 'not_applicable',
    },
    completion: {
      version: 6,
      at: '2026-01-02T03:05:00.000Z',
      runId: 'run-current',
      evidence: { key: 'quality/daily/inv-abc/completion.json', sha256: hex('8') },
    },
    ...overrides,
  });
}

export function retiredCapsule(overrides: Partial<CapsuleV2> = {}): CapsuleV2 {
  return completeCapsule({
    version: 8,
    retiredAt: '2026-01-02T04:00:00.000Z',
    replay: { windowEndsAt: '2026-01-16T03:05:00.000Z' },
    ...overrides,
  });
}

export function failedCapsule(): CapsuleV2 {
  return preparedCapsule({
    state: 'FAILED',
    version: 5,
    lastObservation: {
      runId: 'run-current',
      outcome: 'FAILED',
      at: '2026-01-02T03:05:00.000Z',
      remoteTermination: 'not_applicable',
    },
    failure: { probes: ['unique_keys'], at: '2026-01-02T03:05:00.000Z', runId: 'run-current' },
  });
}

export function v1Capsule(): CapsuleV1 {
  return {
    schema: 1,
    version: 2,
    state: 'PREPARED',
    coreDigest: hex('a'),
    digests: { policy: hex('1'), admission: hex('2'), inventory: hex('3') },
    staged: { passed: true, resultsDigest: hex('7') },
  };
}
