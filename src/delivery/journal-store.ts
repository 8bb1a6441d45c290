import { setTimeout as sleep } from 'node:timers/promises';
import { Journal, type JournalEntry } from '../authority/journal.js';
import { canonicalDigest, canonicalJson } from '../domain/digest.js';
import {
  recoveryIndexOf,
  recoveryProjectionOf,
  validateInvocationId,
  isInvocationId,
  isManifestName,
  type RecoveryIndex,
  type RecoveryProjection,
  type RecoverySummary,
} from '../domain/delivery/identifiers.js';
import {
  assertTransition,
  isTerminal,
  JournalUnavailableError,
  missingProof,
  parseJournalState,
  proofsOf,
  type JournalState,
} from '../domain/delivery/journal-states.js';
import { custodyProblems, factProblems, headProblems, targetProblems } from '../domain/delivery/journal-invariants.js';
import { validateSealedAuthority, type SealedAuthority } from '../domain/delivery/sealed-authority.js';
import { CutpointError, EffectFailedError, IdentityConflictError, OutcomeUnknownError, ValidationError } from '../domain/errors.js';
import type { AuthorityItem, AuthorityStore, Fence, ItemKey, TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import type { PublishMode, TableRef } from '../ports/target.js';
import { DELIVERY_CUT_POINTS } from './cut-points.js';

/**
 * The delivery journal and target custody in the authority table (seed 004: "the journal
 * and custody live in the DynamoDB authority table").
 *
 * Key layout (one table, pk/sk, no index):
 *
 *   target#<targetId>       custody              who holds the target: fence {owner = invocation id,
 *                                                session, epoch} while HELD; the last epoch when RELEASED
 *   target#<targetId>       checkpoint#<route>   the route's checkpoint (checkpoint.ts)
 *   delivery#<targetId>     inv#<invocationId>   the invocation record: state, sealed authority,
 *                                                facts, custodyEpoch, journalSeq (the journal head)
 *   delivery#invocations    inv#<invocationId>   pointer → targetId: `inspect <id>` finds the
 *                                                target from the id alone; inspect-all lists them
 *   journal#<invocationId>  seq#<12 digits>      the gap-free journal records (authority/journal.ts layout)
 *   journal#<invocationId>  tx#<transitionId>    the claim: a transition id is journaled once
 *
 * Every write to an invocation is ONE TransactWriteItems: the invocation update (expected
 * version; it carries `journalSeq`, so it is the journal head), the custody leg (a fenced
 * ConditionCheck — the zombie guard — or the fenced release/takeover), the journal record
 * seq n+1 (must be absent) and the transition-id claim (must be absent), plus any leg the
 * step needs (the checkpoint). State, journal and custody can therefore never disagree:
 * there is no window in which the state moved but the journal did not, or custody was
 * released while the journal still retains it. The records are readable with the
 * `Journal` class (`journalOf`), whose own `append` must not be used on these partitions:
 * the head lives in the invocation record, not in a `head` item.
 */

// ---------------------------------------------------------------------------------------
// Identifiers and keys

/** `targetIdOf` output: `<binding>.<schema>.<table>`, lower-case. */
const TARGET_ID = /^[a-z][a-z0-9_-]{0,63}\.[a-z_][a-z0-9_]{0,62}\.[a-z_][a-z0-9_]{0,62}$/;
/** Caller transition ids: the journal's alphabet; `sys:` is reserved for this module. */
const TRANSITION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const SESSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const HEX64 = /^[0-9a-f]{64}$/;

export function isTargetId(value: unknown): value is string {
  return typeof value === 'string' && TARGET_ID.test(value);
}

export function validateTargetId(value: unknown): string {
  if (!isTargetId(value)) throw new ValidationError('delivery.target_id_invalid', 'target id must be <binding>.<schema>.<table> in lower case');
  return value;
}

export function validateTransitionId(value: unknown): string {
  if (typeof value !== 'string' || !TRANSITION_ID.test(value) || value.startsWith('sys:')) {
    throw new ValidationError('delivery.transition_id_invalid', 'transition id must be 1-128 characters of [A-Za-z0-9._:-] and not start with sys:');
  }
  return value;
}

export function validateSession(value: unknown): string {
  if (typeof value !== 'string' || !SESSION.test(value)) {
    throw new ValidationError('delivery.session_invalid', 'session must be 1-100 characters of [A-Za-z0-9._-]');
  }
  return value;
}

export function validateFence(value: unknown): Fence {
  const f = value as Partial<Fence> | null;
  if (!f || typeof f !== 'object' || !isInvocationId(f.owner) || typeof f.session !== 'string' || !SESSION.test(f.session) || !Number.isSafeInteger(f.epoch) || (f.epoch as number) < 1) {
    throw new ValidationError('delivery.fence_invalid', 'fence must name an invocation id, a session and an epoch >= 1');
  }
  return { owner: f.owner, session: f.session, epoch: f.epoch as number };
}

/** Which invocation of which target a write addresses. */
export interface InvocationRef {
  targetId: string;
  invocationId: string;
}

export function validateRef(value: unknown): InvocationRef {
  const r = value as Partial<InvocationRef> | null;
  if (!r || typeof r !== 'object') throw new ValidationError('delivery.invocation_ref_invalid', 'an invocation reference needs targetId and invocationId');
  return { targetId: validateTargetId(r.targetId), invocationId: validateInvocationId(r.invocationId) };
}

const SEQ_WIDTH = 12; // authority/journal.ts
export const INVOCATIONS_PK = 'delivery#invocations';

export const deliveryKeys = {
  custody: (targetId: string): ItemKey => ({ pk: `target#${targetId}`, sk: 'custody' }),
  checkpoint: (targetId: string, route: string): ItemKey => ({ pk: `target#${targetId}`, sk: `checkpoint#${route}` }),
  invocationsOf: (targetId: string): string => `delivery#${targetId}`,
  invocation: (targetId: string, invocationId: string): ItemKey => ({ pk: `delivery#${targetId}`, sk: `inv#${invocationId}` }),
  pointer: (invocationId: string): ItemKey => ({ pk: INVOCATIONS_PK, sk: `inv#${invocationId}` }),
  journal: (invocationId: string): string => `journal#${invocationId}`,
  journalRecord: (invocationId: string, seq: number): ItemKey => ({ pk: `journal#${invocationId}`, sk: `seq#${String(seq).padStart(SEQ_WIDTH, '0')}` }),
  journalClaim: (invocationId: string, transitionId: string): ItemKey => ({ pk: `journal#${invocationId}`, sk: `tx#${transitionId}` }),
} as const;

/** Read access to an invocation's journal records (`read`, `find`); never `append`. */
export function journalOf(store: AuthorityStore, invocationId: string): Journal {
  return new Journal(store, deliveryKeys.journal(invocationId), DELIVERY_CUT_POINTS.journalTransition);
}

// ---------------------------------------------------------------------------------------
// Facts: what the journal proved beyond the state

export interface StagingFact {
  table: TableRef;
  /** The engine's object id at creation (decimal text). */
  objectId: string;
  /** The owner binding digest stored on the object. */
  owner: string;
}
/**
 * An extracted chunk's receipt (chunk-codec.ts `ExtractedChunkReceipt` plus its object key).
 * Only these fields are journaled; source key values (firstKey/lastKey) are not copied
 * into the authority table.
 */
export interface ChunkFact {
  seq: number;
  rows: number;
  /** Size of the chunk object. */
  bytes: number;
  /** Hex SHA-256 of the object bytes. */
  sha256: string;
  /** The object key (`chunkObjectKeyOf`). */
  key: string;
  /** `chunkDigest(columns, rows)`: what the load receipt of this seq must match. */
  digest?: string;
}
export interface LoadFact {
  seq: number;
  rows: number;
  digest: string;
}
/** The publication receipt as journaled (JSON-safe: instants as canonical ISO text). */
export interface PublicationFact {
  rows: number;
  digest: string;
  stagingObjectId: string;
  mode: PublishMode;
  publishedAt: string;
}
export interface EvidenceFact {
  key: string;
  sha256: string;
}
/**
 * The owned stage's absence as the target proved it (`dropStaging` ABSENT_PROVED, or no
 * object under the derived name with the schema's metadata visible). `objectId` is the
 * recorded stage's object id; absent when no stage was ever recorded.
 */
export interface AbsenceFact {
  table: TableRef;
  objectId?: string;
}
export interface CheckpointFact {
  windowEnd: string;
  /** False when the checkpoint already stood at or past this window's end (never moved back). */
  moved: boolean;
  at: string;
}

export interface DeliveryFacts {
  /** Every owned stage has its exact object id and owner binding recorded (journal-states.ts). */
  ownedStagesRecorded: boolean;
  staging?: StagingFact;
  /** Extracted chunk receipts, by seq. */
  chunks: ChunkFact[];
  /** Chunk load receipts, by seq. */
  loads: LoadFact[];
  publication?: PublicationFact;
  evidence?: EvidenceFact;
  /** The owned stage's proved absence: required by RETIRED and CUSTODY_RELEASED. */
  absence?: AbsenceFact;
  /** Set only by advanceCheckpoint. */
  checkpoint?: CheckpointFact;
}

/**
 * Facts a step records. Scalars are set once (recording the same value again is a no-op,
 * a different value is contradicting evidence: `delivery.fact_conflict`); chunk and load
 * receipts are merged by seq under the same rule. `ownedStagesRecorded` may only turn true.
 */
export interface FactsPatch {
  ownedStagesRecorded?: boolean;
  staging?: StagingFact;
  chunks?: ChunkFact[];
  loads?: LoadFact[];
  publication?: PublicationFact;
  evidence?: EvidenceFact;
  absence?: AbsenceFact;
}

export const EMPTY_FACTS: DeliveryFacts = { ownedStagesRecorded: false, chunks: [], loads: [] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
const isInstant = (v: unknown): v is string => isText(v, 64) && Number.isFinite(Date.parse(v));

// Each picker returns a clean copy (no smuggled attributes) or undefined when malformed.
function pickStaging(v: unknown): StagingFact | undefined {
  if (!isObj(v) || !isObj(v.table) || !isText(v.table.schema, 128) || !isText(v.table.table, 128) || !isText(v.objectId, 64) || !isText(v.owner, 256)) return undefined;
  return { table: { schema: v.table.schema, table: v.table.table }, objectId: v.objectId, owner: v.owner };
}
function pickChunk(v: unknown): ChunkFact | undefined {
  if (!isObj(v) || !isNat(v.seq) || !isNat(v.rows) || !isNat(v.bytes) || typeof v.sha256 !== 'string' || !HEX64.test(v.sha256) || !isText(v.key)) return undefined;
  if (v.digest !== undefined && (typeof v.digest !== 'string' || !HEX64.test(v.digest))) return undefined;
  return { seq: v.seq, rows: v.rows, bytes: v.bytes, sha256: v.sha256, key: v.key, ...(v.digest === undefined ? {} : { digest: v.digest }) };
}
function pickLoad(v: unknown): LoadFact | undefined {
  if (!isObj(v) || !isNat(v.seq) || !isNat(v.rows) || typeof v.digest !== 'string' || !HEX64.test(v.digest)) return undefined;
  return { seq: v.seq, rows: v.rows, digest: v.digest };
}
function pickPublication(v: unknown): PublicationFact | undefined {
  if (!isObj(v) || !isNat(v.rows) || typeof v.digest !== 'string' || !HEX64.test(v.digest) || !isText(v.stagingObjectId, 64)) return undefined;
  if ((v.mode !== 'replace_window' && v.mode !== 'merge') || !isInstant(v.publishedAt)) return undefined;
  return { rows: v.rows, digest: v.digest, stagingObjectId: v.stagingObjectId, mode: v.mode, publishedAt: v.publishedAt };
}
function pickEvidence(v: unknown): EvidenceFact | undefined {
  if (!isObj(v) || !isText(v.key) || typeof v.sha256 !== 'string' || !HEX64.test(v.sha256)) return undefined;
  return { key: v.key, sha256: v.sha256 };
}
function pickAbsence(v: unknown): AbsenceFact | undefined {
  if (!isObj(v) || !isObj(v.table) || !isText(v.table.schema, 128) || !isText(v.table.table, 128)) return undefined;
  if (v.objectId !== undefined && !isText(v.objectId, 64)) return undefined;
  return { table: { schema: v.table.schema, table: v.table.table }, ...(v.objectId === undefined ? {} : { objectId: v.objectId }) };
}
function pickCheckpoint(v: unknown): CheckpointFact | undefined {
  if (!isObj(v) || !isInstant(v.windowEnd) || typeof v.moved !== 'boolean' || !isInstant(v.at)) return undefined;
  return { windowEnd: v.windowEnd, moved: v.moved, at: v.at };
}
function pickList<T extends { seq: number }>(v: unknown, pick: (x: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: T[] = [];
  for (const x of v) {
    const p = pick(x);
    if (!p) return undefined;
    out.push(p);
  }
  return new Set(out.map((x) => x.seq)).size === out.length ? out.sort((a, b) => a.seq - b.seq) : undefined;
}

/** Facts read back from the journal; anything malformed makes the journal inconsistent. */
function parseFacts(v: unknown): DeliveryFacts {
  const bad = () => inconsistent('journal record has malformed facts');
  if (!isObj(v) || typeof v.ownedStagesRecorded !== 'boolean') throw bad();
  const chunks = pickList(v.chunks ?? [], pickChunk);
  const loads = pickList(v.loads ?? [], pickLoad);
  if (!chunks || !loads) throw bad();
  const facts: DeliveryFacts = { ownedStagesRecorded: v.ownedStagesRecorded, chunks, loads };
  const optional = [
    ['staging', pickStaging],
    ['publication', pickPublication],
    ['evidence', pickEvidence],
    ['absence', pickAbsence],
    ['checkpoint', pickCheckpoint],
  ] as const;
  for (const [field, pick] of optional) {
    if (v[field] === undefined) continue;
    const picked = pick(v[field]);
    if (!picked) throw bad();
    (facts as unknown as Obj)[field] = picked;
  }
  return facts;
}

/** A patch as a step hands it over: validated and copied field by field. */
export function validatePatch(value: unknown): FactsPatch {
  if (value === undefined) return {};
  const invalid = (field: string) => new ValidationError('delivery.fact_invalid', `fact ${field} is malformed`);
  if (!isObj(value)) throw invalid('patch');
  const known = new Set(['ownedStagesRecorded', 'staging', 'chunks', 'loads', 'publication', 'evidence', 'absence']);
  for (const field of Object.keys(value)) if (!known.has(field)) throw invalid(field === 'checkpoint' ? 'checkpoint (set by advanceCheckpoint only)' : 'name');
  const patch: FactsPatch = {};
  if (value.ownedStagesRecorded !== undefined) {
    if (typeof value.ownedStagesRecorded !== 'boolean') throw invalid('ownedStagesRecorded');
    patch.ownedStagesRecorded = value.ownedStagesRecorded;
  }
  if (value.staging !== undefined) patch.staging = pickStaging(value.staging) ?? fail(invalid('staging'));
  if (value.chunks !== undefined) patch.chunks = pickList(value.chunks, pickChunk) ?? fail(invalid('chunks'));
  if (value.loads !== undefined) patch.loads = pickList(value.loads, pickLoad) ?? fail(invalid('loads'));
  if (value.publication !== undefined) patch.publication = pickPublication(value.publication) ?? fail(invalid('publication'));
  if (value.evidence !== undefined) patch.evidence = pickEvidence(value.evidence) ?? fail(invalid('evidence'));
  if (value.absence !== undefined) patch.absence = pickAbsence(value.absence) ?? fail(invalid('absence'));
  return patch;
}

function fail(error: Error): never {
  throw error;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/** Applies a patch to the recorded facts; contradicting evidence is refused, never overwritten. */
export function mergeFacts(current: DeliveryFacts, patch: FactsPatch): DeliveryFacts {
  const conflict = (field: string) => new IdentityConflictError('delivery.fact_conflict', `recorded ${field} differs from the one given; the journal keeps the first`);
  const next: DeliveryFacts = { ...current, chunks: [...current.chunks], loads: [...current.loads] };
  if (patch.ownedStagesRecorded !== undefined) {
    if (current.ownedStagesRecorded && !patch.ownedStagesRecorded) throw conflict('ownedStagesRecorded');
    next.ownedStagesRecorded = patch.ownedStagesRecorded;
  }
  for (const field of ['staging', 'publication', 'evidence', 'absence'] as const) {
    const given = patch[field];
    if (given === undefined) continue;
    if (current[field] !== undefined && !same(current[field], given)) throw conflict(field);
    (next as unknown as Obj)[field] = given;
  }
  for (const field of ['chunks', 'loads'] as const) {
    const given = patch[field];
    if (!given) continue;
    const bySeq = new Map<number, ChunkFact | LoadFact>(next[field].map((x) => [x.seq, x]));
    for (const receipt of given) {
      const recorded = bySeq.get(receipt.seq);
      if (recorded && !same(recorded, receipt)) throw conflict(`${field}[seq ${receipt.seq}]`);
      bySeq.set(receipt.seq, receipt);
    }
    (next as unknown as Obj)[field] = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  }
  return next;
}

// ---------------------------------------------------------------------------------------
// Records

export interface InvocationRecord {
  invocationId: string;
  route: string;
  targetId: string;
  state: JournalState;
  sealed: SealedAuthority;
  facts: DeliveryFacts;
  /** The epoch of the custody session that last acquired custody for this invocation. */
  custodyEpoch: number;
  /** The journal head: the seq of the last journal record. */
  journalSeq: number;
  lastTransitionId: string;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export interface CustodyRecord {
  targetId: string;
  state: 'HELD' | 'RELEASED';
  /** The holder's epoch (HELD) or the last holder's (RELEASED); the next acquire takes epoch + 1. */
  epoch: number;
  /** Present only while HELD, so no fenced condition can ever pass on a released target. */
  fence?: Fence;
  /** The holder (HELD) or the last holder (RELEASED). */
  invocationId: string;
  acquiredAt: string;
  releasedAt?: string;
  version: number;
}

const inconsistent = (message: string) => new JournalUnavailableError('delivery.recovery_journal_inconsistent', message);

/** Validates an invocation item read back from the authority. Messages never echo content. */
export function parseInvocation(item: AuthorityItem, expected: { invocationId: string; targetId?: string }): InvocationRecord {
  if (item.invocationId !== expected.invocationId) throw inconsistent('journal record does not belong to the invocation it is filed under');
  if (!isTargetId(item.targetId) || (expected.targetId !== undefined && item.targetId !== expected.targetId)) {
    throw inconsistent('journal record names an invalid or different target');
  }
  if (!isManifestName(item.route)) throw inconsistent('journal record has an invalid route');
  const state = parseJournalState(item.state);
  const sealed = validateSealedAuthority(item.sealed);
  if (sealed.invocationId !== expected.invocationId) throw inconsistent('sealed authority belongs to another invocation');
  const facts = parseFacts(item.facts);
  for (const field of ['custodyEpoch', 'journalSeq', 'version'] as const) {
    if (!Number.isSafeInteger(item[field]) || (item[field] as number) < 1) throw inconsistent(`journal record has an invalid ${field}`);
  }
  if (typeof item.lastTransitionId !== 'string' || !TRANSITION_ID.test(item.lastTransitionId)) throw inconsistent('journal record has an invalid last transition id');
  if (!isInstant(item.createdAt) || !isInstant(item.updatedAt)) throw inconsistent('journal record has invalid timestamps');
  // State ↔ facts: a state without the proof its transition required is not a state.
  const [factProblem] = factProblems({ invocationId: expected.invocationId, state, custodyEpoch: item.custodyEpoch as number, facts });
  if (factProblem !== undefined) throw inconsistent(factProblem);
  return {
    invocationId: expected.invocationId,
    route: item.route,
    targetId: item.targetId,
    state,
    sealed,
    facts,
    custodyEpoch: item.custodyEpoch as number,
    journalSeq: item.journalSeq as number,
    lastTransitionId: item.lastTransitionId,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    version: item.version,
  };
}

export function parseCustody(item: AuthorityItem, targetId: string): CustodyRecord {
  const bad = () => inconsistent('target custody record is malformed');
  if (item.targetId !== targetId || (item.state !== 'HELD' && item.state !== 'RELEASED')) throw bad();
  if (!Number.isSafeInteger(item.epoch) || (item.epoch as number) < 1 || !isInvocationId(item.invocationId) || !isInstant(item.acquiredAt)) throw bad();
  const record: CustodyRecord = {
    targetId,
    state: item.state,
    epoch: item.epoch as number,
    invocationId: item.invocationId,
    acquiredAt: item.acquiredAt,
    version: item.version,
  };
  if (item.state === 'HELD') {
    const f = item.fence;
    if (!f || f.owner !== item.invocationId || f.epoch !== item.epoch || typeof f.session !== 'string') throw bad();
    record.fence = { owner: f.owner, session: f.session, epoch: f.epoch };
  } else if (item.fence !== undefined) {
    throw bad();
  }
  if (isInstant(item.releasedAt)) record.releasedAt = item.releasedAt;
  return record;
}

/** Reads the store; a failure to read is an unavailable journal, never a guess. */
async function read<T>(what: () => Promise<T>): Promise<T> {
  try {
    return await what();
  } catch (error) {
    if (error instanceof JournalUnavailableError) throw error;
    throw new JournalUnavailableError('delivery.recovery_journal_unavailable', 'the delivery journal could not be read from the authority store');
  }
}

export async function loadCustody(ports: Ports, targetId: string): Promise<CustodyRecord | undefined> {
  const item = await read(() => ports.authority.get(deliveryKeys.custody(targetId)));
  return item ? parseCustody(item, targetId) : undefined;
}

/** The invocation record under an exact ref; missing is unavailable. */
export async function readInvocation(ports: Ports, ref: InvocationRef): Promise<InvocationRecord> {
  const item = await read(() => ports.authority.get(deliveryKeys.invocation(ref.targetId, ref.invocationId)));
  if (!item) throw new JournalUnavailableError('delivery.recovery_journal_unavailable', 'no journal exists for this invocation on this target');
  return parseInvocation(item, ref);
}

/**
 * `inspect <invocation-id>`: the record from the id alone. A malformed id is
 * `delivery.invocation_id_invalid`; an unknown one `delivery.recovery_journal_unavailable`;
 * a record (or pointer) that fails validation `delivery.recovery_journal_inconsistent`.
 * Read-only.
 */
export async function loadInvocation(ports: Ports, invocationId: unknown): Promise<InvocationRecord> {
  const id = validateInvocationId(invocationId);
  const pointer = await read(() => ports.authority.get(deliveryKeys.pointer(id)));
  if (!pointer) throw new JournalUnavailableError('delivery.recovery_journal_unavailable', 'no journal exists for this invocation', true);
  if (!isTargetId(pointer.targetId)) throw inconsistent('invocation pointer names an invalid target');
  const targetId = pointer.targetId;
  const loadRecord = async () => {
    const item = await read(() => ports.authority.get(deliveryKeys.invocation(targetId, id)));
    if (!item) {
      const custody = await loadCustody(ports, targetId);
      const held = custody?.state === 'HELD' && custody.invocationId === id ? ' while the target is still in its custody (orphaned custody)' : '';
      throw inconsistent(`invocation ${id} has a pointer but no journal record${held}`);
    }
    return parseInvocation(item, { invocationId: id, targetId });
  };
  // The record and custody/journal reads are not one snapshot: a problem seen while the
  // record moved (a concurrent transition) is read again; one that stays is the journal's.
  for (let round = 0; ; round++) {
    const record = await loadRecord();
    const problems = await recordProblems(ports, record, await loadCustody(ports, targetId));
    if (problems.length === 0) return record;
    if ((await loadRecord()).version === record.version || round >= MAX_READ_ROUNDS) throw inconsistent(problems.join('; '));
  }
}

const MAX_READ_ROUNDS = 4;

/** A journal record of an invocation by seq, or undefined. */
async function journalRecordAt(ports: Ports, invocationId: string, seq: number): Promise<AuthorityItem | undefined> {
  return read(() => ports.authority.get(deliveryKeys.journalRecord(invocationId, seq)));
}

/**
 * The invariants of one record that need reads (custody ↔ record, head ↔ journal records;
 * state ↔ facts is checked by parseInvocation). `custody` is the target's custody item.
 */
async function recordProblems(ports: Ports, record: InvocationRecord, custody: CustodyRecord | undefined): Promise<string[]> {
  const [first, head, next] = await Promise.all([
    journalRecordAt(ports, record.invocationId, 1),
    journalRecordAt(ports, record.invocationId, record.journalSeq),
    journalRecordAt(ports, record.invocationId, record.journalSeq + 1),
  ]);
  return [...custodyProblems(record, custody), ...headProblems(record, { first, head, next })];
}

/**
 * One target's records, checked against its custody and their journals. The reads are not
 * one snapshot: when a problem shows, custody and records are read again, and a problem
 * seen while either moved (a begin, a transition, a release) is checked once more rather
 * than reported.
 */
async function targetListing(ports: Ports, targetId: string): Promise<{ records: InvocationRecord[]; ids: string[]; problems: string[] }> {
  const snapshot = async () => {
    const custody = await loadCustody(ports, targetId);
    const items = await read(() => ports.authority.query(deliveryKeys.invocationsOf(targetId), 'inv#'));
    const records: InvocationRecord[] = [];
    const unreadable: string[] = [];
    for (const item of items) {
      const id = item.sk.slice('inv#'.length);
      if (!isInvocationId(id)) throw inconsistent('a journal record is filed under an invalid invocation id');
      try {
        records.push(parseInvocation(item, { invocationId: id, targetId }));
      } catch (error) {
        if (!(error instanceof JournalUnavailableError)) throw error;
        unreadable.push(error.message.includes(id) ? error.message : `invocation ${id}: ${error.message}`);
      }
    }
    const ids = items.map((i) => i.sk.slice('inv#'.length));
    return { custody, records, unreadable, ids, versions: JSON.stringify([custody?.version, ...items.map((i) => [i.sk, i.version])]) };
  };
  let current = await snapshot();
  for (let round = 0; ; round++) {
    const { custody, records, unreadable, ids } = current;
    const problems = [
      ...unreadable,
      ...targetProblems(targetId, custody, ids),
      ...(await Promise.all(records.map((r) => recordProblems(ports, r, custody)))).flat(),
    ];
    if (problems.length === 0) return { records, ids, problems };
    const again = await snapshot();
    if (again.versions === current.versions || round >= MAX_READ_ROUNDS) return { records, ids, problems };
    current = again;
  }
}

/**
 * Every invocation record, of one target or (without `targetId`) of all targets the
 * invocation pointers name, in invocation-id order, each checked against the journal's
 * invariants (state ↔ facts, head ↔ journal records, custody ↔ records: a target whose
 * custody names an invocation without a record is orphaned custody). Any violation fails
 * the whole listing with every problem found, by opaque id: inspect-all must never report
 * a retained_custody_count it cannot vouch for (seed 004: inconsistent journal state exits
 * 1, stdout empty). The healthy rest stays readable with `--target` and `inspect <id>`.
 */
export async function listInvocations(ports: Ports, options: { targetId?: string } = {}): Promise<InvocationRecord[]> {
  const problems: string[] = [];
  let records: InvocationRecord[];
  if (options.targetId !== undefined) {
    const listing = await targetListing(ports, validateTargetId(options.targetId));
    records = listing.records;
    problems.push(...listing.problems);
  } else {
    const pointers = await read(() => ports.authority.query(INVOCATIONS_PK, 'inv#'));
    const targets = new Set<string>();
    for (const p of pointers) {
      if (!isTargetId(p.targetId)) throw inconsistent('an invocation pointer names an invalid target');
      targets.add(p.targetId);
    }
    const listings = await Promise.all([...targets].sort().map((t) => targetListing(ports, t)));
    records = listings.flatMap((l) => l.records);
    problems.push(...listings.flatMap((l) => l.problems));
    const listed = new Set(listings.flatMap((l) => l.ids));
    for (const p of pointers) {
      const id = p.sk.slice('inv#'.length);
      if (!listed.has(id)) problems.push(`invocation ${id} has a pointer but no journal record`);
    }
  }
  if (problems.length) throw inconsistent([...new Set(problems)].join('; '));
  return records.sort((a, b) => (a.invocationId < b.invocationId ? -1 : a.invocationId > b.invocationId ? 1 : 0));
}

export function recoverySummaryOf(record: InvocationRecord): RecoverySummary {
  return {
    invocationId: record.invocationId,
    route: record.route,
    state: record.state,
    facts: { ownedStagesRecorded: record.facts.ownedStagesRecorded },
    window: record.sealed.window,
  };
}

/** The `inspect` document. Read-only. */
export async function inspectInvocation(ports: Ports, invocationId: unknown): Promise<RecoveryProjection> {
  return recoveryProjectionOf(recoverySummaryOf(await loadInvocation(ports, invocationId)));
}

/** The `inspect-all` document (`retained_custody_count` = records whose state holds custody). Read-only. */
export async function inspectAll(ports: Ports, options: { targetId?: string } = {}): Promise<RecoveryIndex> {
  return recoveryIndexOf((await listInvocations(ports, options)).map(recoverySummaryOf));
}

// ---------------------------------------------------------------------------------------
// Errors

/** Another invocation holds the target. Names the holder (an opaque id), never journal content. */
export class CustodyHeldError extends CutpointError {
  constructor(
    readonly targetId: string,
    readonly holder: string,
  ) {
    super('Delivery.CustodyHeld', 'delivery.custody_held', `target ${targetId} is in the custody of invocation ${holder}; resolve that invocation first`);
  }
}

/** The caller's fence is not the current custody: a newer session took over, or custody was released. */
export class CustodyFencedError extends CutpointError {
  constructor(ref: InvocationRef, fence: Fence) {
    super(
      'Delivery.Fenced',
      'delivery.custody_fenced',
      `invocation ${ref.invocationId}: custody epoch ${fence.epoch} of target ${ref.targetId} is no longer current; nothing was written`,
    );
  }
}

/** The journal is not in the state the step expected: another session moved it. */
export class JournalStateConflictError extends CutpointError {
  constructor(
    invocationId: string,
    readonly actual: JournalState,
    readonly expected: JournalState,
  ) {
    super('Delivery.JournalStateConflict', 'delivery.journal_state_conflict', `invocation ${invocationId} is in state ${actual}, not ${expected}; nothing was written`);
  }
}

/** A transition whose proof is not journaled yet (e.g. SUCCEEDED before the checkpoint). */
export class TransitionPreconditionError extends CutpointError {
  constructor(message: string) {
    super('Delivery.TransitionPrecondition', 'delivery.transition_precondition_unmet', message);
  }
}

// ---------------------------------------------------------------------------------------
// The journaled write: one transaction per journal record

export function sameFence(a: Fence | undefined, b: Fence | undefined): boolean {
  return !!a && !!b && a.owner === b.owner && a.session === b.session && a.epoch === b.epoch;
}

/** Throws Delivery.Fenced unless `fence` is the current custody of `ref`'s target, held by `ref`'s invocation. */
export function requireFence(ref: InvocationRef, custody: CustodyRecord | undefined, fence: Fence): asserts custody is CustodyRecord & { fence: Fence } {
  if (!custody || custody.state !== 'HELD' || custody.invocationId !== ref.invocationId || fence.owner !== ref.invocationId || !sameFence(custody.fence, fence)) {
    throw new CustodyFencedError(ref, fence);
  }
}

/** The zombie guard: the transaction applies only while this exact fence holds custody. */
export function custodyGuardLeg(custody: CustodyRecord & { fence: Fence }): TransactionLeg {
  return { kind: 'check', key: deliveryKeys.custody(custody.targetId), expect: { version: custody.version, fence: custody.fence } };
}

/** Fenced release to the RELEASED marker; the epoch stays so the next acquire increments it. */
export function custodyReleaseLeg(custody: CustodyRecord & { fence: Fence }, at: string): TransactionLeg {
  return {
    kind: 'update',
    key: deliveryKeys.custody(custody.targetId),
    expect: { version: custody.version, fence: custody.fence },
    set: { state: 'RELEASED', fence: undefined, releasedAt: at },
  };
}

export interface JournaledPlan {
  /** Invocation attributes to change (the journal bookkeeping is added). */
  set: { state?: JournalState; facts?: DeliveryFacts; custodyEpoch?: number };
  /** The custody leg: a fenced check, a fenced release or a fenced takeover. */
  custody: TransactionLeg;
  /** Further legs (e.g. the checkpoint CAS). */
  legs?: TransactionLeg[];
  /** Extra journal data (e.g. `by: { session, epoch }`). */
  journal: Record<string, unknown>;
}

export interface JournaledWrite {
  cutPoint: string;
  ref: InvocationRef;
  transitionId: string;
  /** Journal entry type: begin | transition | facts | custody | checkpoint. */
  type: string;
  /** What the write means; replaying a transition id must mean the same (`delivery.transition_id_reused`). */
  op: Record<string, unknown>;
  /** Decides the write from what is current, or throws a domain error (nothing written). */
  plan(current: { invocation: InvocationRecord; custody: CustodyRecord | undefined; at: string }): Promise<JournaledPlan> | JournaledPlan;
}

export interface JournaledResult {
  invocation: InvocationRecord;
  entry: JournalEntry;
  /** True when the transition id was already journaled (a retry after a lost response or crash). */
  alreadyApplied: boolean;
}

const MAX_ROUNDS = 6;

export function opDigestOf(type: string, op: Record<string, unknown>): string {
  return canonicalDigest({ kind: 'cutpoint.delivery.journal-op', type, op });
}

/** The entry a transition id was journaled as, if it was — and only if it is the same operation. */
export async function findJournaled(ports: Ports, invocationId: string, transitionId: string, opDigest: string): Promise<JournalEntry | undefined> {
  const entry = await read(() => journalOf(ports.authority, invocationId).find(transitionId));
  if (entry && entry.data.opDigest !== opDigest) {
    throw new IdentityConflictError('delivery.transition_id_reused', `transition id ${transitionId} is already journaled for a different operation`);
  }
  return entry;
}

/**
 * A concurrent transaction on one of the items (DynamoDB cancels with TransactionConflict,
 * or refuses with TransactionInProgress): nothing applied, and the next round re-reads.
 */
export function isContention(error: unknown): boolean {
  if (!(error instanceof EffectFailedError)) return false;
  const name = (error.cause as { name?: unknown } | undefined)?.name;
  return name === 'TransactionCanceledException' || name === 'TransactionInProgressException';
}

export async function backoff(round: number): Promise<void> {
  await sleep(Math.floor(Math.random() * 20 * 2 ** Math.min(round, 4)));
}

/**
 * Runs one journaled write to exactly-once: each round first reloads the exact claim of
 * the transition id (our write landed — now, after a lost response, or before a crash —
 * and it is the same operation), then plans against the current invocation and custody
 * and submits ONE transaction. UNKNOWN and CONFLICT both lead to the next round's exact
 * reload; the conditions (invocation version, custody fence, absent record and claim)
 * make a resubmission safe. Never "a similar state exists": only the claim counts.
 */
export async function journaledWrite(ports: Ports, write: JournaledWrite): Promise<JournaledResult> {
  const { ref, transitionId } = write;
  const opDigest = opDigestOf(write.type, write.op);
  let unknownReason: string | undefined;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const done = await findJournaled(ports, ref.invocationId, transitionId, opDigest);
    if (done) return { invocation: await readInvocation(ports, ref), entry: done, alreadyApplied: true };
    const [invocation, custody] = await Promise.all([readInvocation(ports, ref), loadCustody(ports, ref.targetId)]);
    const at = ports.clock.now().toISOString();
    const plan = await write.plan({ invocation, custody, at });
    const seq = invocation.journalSeq + 1;
    const entry: JournalEntry = { seq, transitionId, type: write.type, at, data: { ...plan.journal, op: write.op, opDigest } };
    const set = { ...plan.set, journalSeq: seq, lastTransitionId: transitionId, updatedAt: at };
    const legs: TransactionLeg[] = [
      { kind: 'update', key: deliveryKeys.invocation(ref.targetId, ref.invocationId), expect: { version: invocation.version }, set },
      plan.custody,
      { kind: 'put', item: { ...deliveryKeys.journalRecord(ref.invocationId, seq), ...entry }, expect: 'absent' },
      { kind: 'put', item: { ...deliveryKeys.journalClaim(ref.invocationId, transitionId), seq }, expect: 'absent' },
      ...(plan.legs ?? []),
    ];
    let outcome;
    try {
      outcome = await ports.authority.transact(write.cutPoint, legs);
    } catch (error) {
      if (!isContention(error)) throw error;
      await backoff(round);
      continue;
    }
    if (outcome.status === 'APPLIED') {
      return { invocation: { ...invocation, ...set, version: invocation.version + 1 }, entry, alreadyApplied: false };
    }
    if (outcome.status === 'UNKNOWN') unknownReason = outcome.reason;
    else await backoff(round);
  }
  const done = await findJournaled(ports, ref.invocationId, transitionId, opDigest);
  if (done) return { invocation: await readInvocation(ports, ref), entry: done, alreadyApplied: true };
  if (unknownReason !== undefined) {
    throw new OutcomeUnknownError(write.cutPoint, `${write.cutPoint}: ${transitionId} of invocation ${ref.invocationId} is still unknown (${unknownReason})`);
  }
  throw new EffectFailedError(write.cutPoint, `${write.cutPoint}: ${transitionId} of invocation ${ref.invocationId} kept conflicting and was not applied`);
}

// ---------------------------------------------------------------------------------------
// Transitions and facts

export interface TransitionRequest {
  from: JournalState;
  to: JournalState;
  fence: Fence;
  /** Chosen by the step, stable across its retries (e.g. derived from the execution). */
  transitionId: string;
  patch?: FactsPatch;
}

/** Proof a state needs in the journal before the journal may enter it (journal-states.ts `missingProof`). */
function assertPreconditions(to: JournalState, facts: DeliveryFacts): void {
  const missing = missingProof(to, proofsOf(facts));
  if (missing !== undefined) throw new TransitionPreconditionError(missing);
}

/**
 * Moves an invocation `from` → `to` (a TRANSITIONS edge, asserted before any I/O), with
 * `patch` merged into its facts, guarded by the caller's custody fence, journaled once
 * under `transitionId`. A transition to a terminal state (RETIRED, CUSTODY_RELEASED)
 * releases custody in the same transaction, at `delivery.custody.release`; every other
 * runs at `delivery.journal.transition`.
 *
 * Errors, all without a write: Delivery.IllegalTransition, Delivery.Fenced (a zombie
 * from an old epoch), Delivery.JournalStateConflict, Delivery.TransitionPrecondition,
 * Cutpoint.IdentityConflict (`delivery.fact_conflict`, `delivery.transition_id_reused`),
 * Delivery.JournalUnavailable. Cutpoint.OutcomeUnknown only if the outcome stays unknown
 * through every round; injected crashes and definite failures pass through (repeat the
 * call: the claim makes it exactly-once).
 */
export async function transition(ports: Ports, ref: InvocationRef, request: TransitionRequest): Promise<JournaledResult> {
  assertTransition(request.from, request.to);
  const target = validateRef(ref);
  const fence = validateFence(request.fence);
  const transitionId = validateTransitionId(request.transitionId);
  const patch = validatePatch(request.patch);
  const { from, to } = request;
  const terminal = isTerminal(to);
  return journaledWrite(ports, {
    cutPoint: terminal ? DELIVERY_CUT_POINTS.custodyRelease : DELIVERY_CUT_POINTS.journalTransition,
    ref: target,
    transitionId,
    type: 'transition',
    op: { from, to, patch },
    plan: ({ invocation, custody, at }) => {
      requireFence(target, custody, fence);
      if (invocation.state !== from) throw new JournalStateConflictError(target.invocationId, invocation.state, from);
      const facts = mergeFacts(invocation.facts, patch);
      assertPreconditions(to, facts);
      return {
        set: { state: to, facts },
        custody: terminal ? custodyReleaseLeg(custody, at) : custodyGuardLeg(custody),
        journal: { from, to, by: { session: fence.session, epoch: fence.epoch } },
      };
    },
  });
}

export interface FactsRequest {
  /** The state the invocation must be in; recording facts never changes it. */
  state: JournalState;
  fence: Fence;
  transitionId: string;
  patch: FactsPatch;
  /** The step's cut point, e.g. `delivery.chunk.receipt`; default `delivery.journal.transition`. */
  cutPoint?: string;
}

/**
 * Records facts without a state change (staging identity, chunk and load receipts, the
 * publication receipt, the evidence object), journaled and fenced like a transition. A
 * step batches a whole set of receipts into one call: one transaction, one journal record.
 */
export async function recordFacts(ports: Ports, ref: InvocationRef, request: FactsRequest): Promise<JournaledResult> {
  const state = parseStateArgument(request.state);
  const target = validateRef(ref);
  const fence = validateFence(request.fence);
  const transitionId = validateTransitionId(request.transitionId);
  const patch = validatePatch(request.patch);
  if (isTerminal(state)) throw new TransitionPreconditionError(`a ${state} journal is closed; no facts can be recorded`);
  return journaledWrite(ports, {
    cutPoint: request.cutPoint ?? DELIVERY_CUT_POINTS.journalTransition,
    ref: target,
    transitionId,
    type: 'facts',
    op: { state, patch },
    plan: ({ invocation, custody }) => {
      requireFence(target, custody, fence);
      if (invocation.state !== state) throw new JournalStateConflictError(target.invocationId, invocation.state, state);
      return {
        set: { facts: mergeFacts(invocation.facts, patch) },
        custody: custodyGuardLeg(custody),
        journal: { state, by: { session: fence.session, epoch: fence.epoch } },
      };
    },
  });
}

function parseStateArgument(value: unknown): JournalState {
  try {
    return parseJournalState(value);
  } catch {
    throw new ValidationError('delivery.state_invalid', 'state must be one of the journal states');
  }
}
