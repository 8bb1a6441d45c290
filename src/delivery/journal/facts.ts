import { canonicalJson } from '../../domain/digest.js';
import { IdentityConflictError, ValidationError } from '../../domain/errors.js';
import type { PublishMode, TableRef } from '../../ports/target.js';
import { inconsistent } from './errors.js';

/** Facts: what the journal proved beyond the state. */

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

const HEX64 = /^[0-9a-f]{64}$/;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
export const isInstant = (v: unknown): v is string => isText(v, 64) && Number.isFinite(Date.parse(v));

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
export function parseFacts(v: unknown): DeliveryFacts {
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
