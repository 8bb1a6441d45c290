import {
  CapsuleVersionUnsupportedError,
  IllegalCapsuleTransitionError,
  ReaderGuardHeldError,
  ReaderGuardNotHeldError,
} from './errors.js';

/**
 * The quality capsule (docs/rules.md#quality-capsule) as plain data, and its state machine. The
 * capsule is the authority row of its operation's governance: its store-assigned `version`
 * is the row version the rollback rule compares with the completion version
 * (docs/rules.md#version-continuity). Parsing lives in
 * capsule-parse.ts; nothing here performs I/O.
 */

export const CAPSULE_STATES = ['PREPARED', 'TARGET_PENDING', 'COMPLETE', 'FAILED'] as const;
export type CapsuleState = (typeof CAPSULE_STATES)[number];

/** v1 capsules (read-only compatibility, N16): never converted, never written. */
export const CAPSULE_V1_STATES = ['PREPARED', 'REJECTED'] as const;
export type CapsuleV1State = (typeof CAPSULE_V1_STATES)[number];

export const CAPSULE_SCHEMA = 2;

/** An immutable evidence object: exact key and the SHA-256 recorded for it. */
export interface EvidenceRef {
  key: string;
  sha256: string;
}

/** The custody fence of the run that holds the guard (same shape as the authority port's Fence). */
export interface ReaderFence {
  owner: string;
  session: string;
  epoch: number;
}

/** The non-expiring `quality_reader` guard: no lease, no TTL (N8). Absent = released. */
export interface ReaderGuard {
  token: string;
  session: string;
  runId: string;
  fence: ReaderFence;
  acquiredAt: string;
  deadlineAt: string;
}

export const OBSERVATION_OUTCOMES = ['COMPLETE', 'FAILED', 'TARGET_PENDING'] as const;
export type ObservationOutcome = (typeof OBSERVATION_OUTCOMES)[number];
export const REMOTE_TERMINATIONS = ['UNVERIFIED', 'not_applicable'] as const;
export type RemoteTermination = (typeof REMOTE_TERMINATIONS)[number];

export interface LastObservation {
  runId: string;
  outcome: ObservationOutcome;
  at: string;
  errorClass?: string;
  remoteTermination: RemoteTermination;
  /** The stable diagnostic code of this outcome (`quality.complete`, `quality.failed`, `quality.target_observation_*`). */
  code?: string;
  /** The capsule version the observation held the guard on (never printed as more than a number). */
  capsuleVersion?: number;
  /** The generation (UUID under the target name) the reader read before and after the probes, when it returned; stored, printed only as digests. */
  generation?: { before: string | null; after: string | null };
}

export interface Completion {
  /** v_c: the capsule version produced by the COMPLETE write. */
  version: number;
  at: string;
  runId: string;
  /** Recorded once completion.json is written and verified (cut point quality.completion.record). */
  evidence?: EvidenceRef;
}

export interface Failure {
  probes: string[];
  at: string;
  runId: string;
}

export const WINDOW_CLOSE_REASONS = ['successor', 'expired'] as const;
export type WindowCloseReason = (typeof WINDOW_CLOSE_REASONS)[number];

export interface ReplayMarkers {
  windowEndsAt?: string;
  closedAt?: string;
  /** The successor operation that closed the window (reason successor). */
  closedBy?: string;
  reason?: WindowCloseReason;
}

export interface CapsuleDigests {
  policy: string;
  admission: string;
  inventory: string;
  probes: string;
  authorityBinding: string;
}

export interface CapsuleV2 {
  schema: 2;
  /** Store-assigned row version (create 1, each write +1). */
  version: number;
  state: CapsuleState;
  coreDigest: string;
  digests: CapsuleDigests;
  generation: { candidateUuid: string };
  prepared: EvidenceRef;
  staged: { passed: true; resultsDigest: string };
  reader?: ReaderGuard;
  runs: { originalRunId: string; originalLoadId: string };
  lastObservation?: LastObservation;
  completion?: Completion;
  failure?: Failure;
  retiredAt?: string;
  replay: ReplayMarkers;
  /** Head of the capsule journal `qjournal#<id>` when the store keeps one on the item. */
  journalSeq?: number;
}

export interface CapsuleV1 {
  schema: 1;
  version: number;
  state: CapsuleV1State;
  coreDigest: string;
  digests: { policy: string; admission: string; inventory: string };
  staged: { passed: boolean; resultsDigest?: string };
}

export type StoredCapsule = CapsuleV1 | CapsuleV2;

/** One edge of the capsule state machine (docs/rules.md#quality-capsule). `from: null` is "(absent)". */
export interface CapsuleTransition {
  from: CapsuleState | null;
  to: CapsuleState;
  on: string;
}

/**
 * docs/rules.md#quality-capsule, edge for edge. There is no edge out of COMPLETE or FAILED, and
 * none into PREPARED from a state.
 */
export const CAPSULE_TRANSITIONS: readonly CapsuleTransition[] = [
  { from: null, to: 'PREPARED', on: 'staged probes pass + PREPARED evidence' },
  { from: 'PREPARED', to: 'COMPLETE', on: 'observe: exact commit + generation checks, probes pass' },
  { from: 'PREPARED', to: 'FAILED', on: 'observe: required probe fails on target' },
  {
    from: 'PREPARED',
    to: 'TARGET_PENDING',
    on: 'observe: deadline / observation failure, verified termination + persistence',
  },
  { from: 'TARGET_PENDING', to: 'COMPLETE', on: 'observe again: probes pass' },
  { from: 'TARGET_PENDING', to: 'FAILED', on: 'observe again: required probe fails' },
  { from: 'TARGET_PENDING', to: 'TARGET_PENDING', on: 'observe again: deadline / observation failure' },
];

const EDGES = new Set(CAPSULE_TRANSITIONS.map((t) => `${t.from ?? '-'}>${t.to}`));

export function isCapsuleState(value: unknown): value is CapsuleState {
  return typeof value === 'string' && (CAPSULE_STATES as readonly string[]).includes(value);
}

export function canCapsuleTransition(from: CapsuleState | null, to: CapsuleState): boolean {
  return EDGES.has(`${from ?? '-'}>${to}`);
}

export function assertCapsuleTransition(from: CapsuleState | null, to: CapsuleState): void {
  if (!canCapsuleTransition(from, to)) throw new IllegalCapsuleTransitionError(from ?? '(absent)', to);
}

/** COMPLETE and FAILED are final (N14, I5). */
export function isFinalCapsuleState(state: CapsuleState): boolean {
  return state === 'COMPLETE' || state === 'FAILED';
}

/** v1 capsules are read-only: no writer adds observations, markers or anything else (N16). */
export function assertWritableCapsule(capsule: StoredCapsule): asserts capsule is CapsuleV2 {
  if (capsule.schema !== CAPSULE_SCHEMA) {
    throw new CapsuleVersionUnsupportedError(
      `capsule schema ${capsule.schema} is read-only: no v2 writer converts or extends it`,
    );
  }
}

/**
 * The exact owner check of every capsule state change (docs/rules.md#reader-guard): the guard must be held and
 * its token must be exactly `token`. Absent guard and a foreign token are both refusals;
 * the message never prints either token.
 */
export function assertOwnerToken(capsule: StoredCapsule, token: string): asserts capsule is CapsuleV2 {
  assertWritableCapsule(capsule);
  const reader = capsule.reader;
  if (reader === undefined) throw new ReaderGuardNotHeldError();
  if (typeof token !== 'string' || token.length === 0 || reader.token !== token) throw new ReaderGuardHeldError();
}

/** Guard, owner token and edge, checked together before the persist-and-release transaction. */
export function assertCapsuleStateChange(capsule: StoredCapsule, to: CapsuleState, token: string): void {
  assertOwnerToken(capsule, token);
  assertCapsuleTransition(capsule.state, to);
}

/**
 * The guard may be acquired only on a v2 capsule in PREPARED/TARGET_PENDING with no reader
 * (docs/rules.md#bounded-reader step 1).
 */
export function assertReaderAcquirable(capsule: StoredCapsule): void {
  assertWritableCapsule(capsule);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (capsule.state !== 'PREPARED' && capsule.state !== 'TARGET_PENDING') {
    throw new IllegalCapsuleTransitionError(capsule.state, 'reader acquisition');
  }
}

/**
 * Retirement marker (release leg, docs/rules.md#successors-and-replay-window): COMPLETE,
 * completion evidence recorded, guard absent, not yet retired.
 */
export function assertRetirable(capsule: StoredCapsule): void {
  assertWritableCapsule(capsule);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (capsule.state !== 'COMPLETE' || capsule.completion?.evidence === undefined || capsule.retiredAt !== undefined) {
    throw new IllegalCapsuleTransitionError(capsule.state, 'retirement');
  }
}

/** Window closure marker (successor boundary or expiry): only a retired COMPLETE capsule, once. */
export function assertWindowClosable(capsule: StoredCapsule): void {
  assertWritableCapsule(capsule);
  if (capsule.reader !== undefined) throw new ReaderGuardHeldError();
  if (capsule.state !== 'COMPLETE' || capsule.retiredAt === undefined || capsule.replay.closedAt !== undefined) {
    throw new IllegalCapsuleTransitionError(capsule.state, 'window closure');
  }
}
