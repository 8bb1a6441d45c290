import { canonicalJson } from '../../domain/digest.js';
import { IdentityConflictError, ValidationError } from '../../domain/errors.js';
import type { TableRef } from '../../domain/delivery/target-types.js';
import type { ContinuableFact } from '../../domain/delivery/action-guide.js';
import { inconsistent } from './errors.js';
import type {
  StagingFact,
  PlanFact,
  PartsFact,
  PublicationFact,
  EvidenceFact,
  AbsenceFact,
  CandidateFact,
  DispatchFact,
  PublicationCleanupFact,
  CheckpointFact,
  DeliveryFacts,
  FactsPatch,
} from './fact-types.js';

/** The fact types are declared in fact-types.ts; the journal's callers take them from here with the rules. */
export type * from './fact-types.js';

export const EMPTY_FACTS: DeliveryFacts = { ownedStagesRecorded: false };

const HEX64 = /^[0-9a-f]{64}$/;
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const isNat = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown, max = 1024): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;
export const isInstant = (v: unknown): v is string => isText(v, 64) && Number.isFinite(Date.parse(v));

// Each picker returns a clean copy (no smuggled attributes) or undefined when malformed.
function pickStaging(v: unknown): StagingFact | undefined {
  if (
    !isObj(v) ||
    !isObj(v.table) ||
    !isText(v.table.schema, 128) ||
    !isText(v.table.table, 128) ||
    !isText(v.objectId, 64) ||
    !isText(v.owner, 256)
  )
    return undefined;
  return { table: { schema: v.table.schema, table: v.table.table }, objectId: v.objectId, owner: v.owner };
}
function pickPlan(v: unknown): PlanFact | undefined {
  if (
    !isObj(v) ||
    !isText(v.key) ||
    typeof v.sha256 !== 'string' ||
    !HEX64.test(v.sha256) ||
    !isNat(v.parts) ||
    (v.parts as number) < 1 ||
    !isNat(v.partRows)
  )
    return undefined;
  return { key: v.key, sha256: v.sha256, parts: v.parts as number, partRows: v.partRows as number };
}
function pickParts(v: unknown): PartsFact | undefined {
  if (
    !isObj(v) ||
    !isNat(v.parts) ||
    !isNat(v.chunks) ||
    !isNat(v.rows) ||
    !isNat(v.bytes) ||
    typeof v.digest !== 'string' ||
    !HEX64.test(v.digest)
  )
    return undefined;
  return {
    parts: v.parts as number,
    chunks: v.chunks as number,
    rows: v.rows as number,
    bytes: v.bytes as number,
    digest: v.digest,
  };
}
function pickPublication(v: unknown): PublicationFact | undefined {
  if (
    !isObj(v) ||
    !isNat(v.rows) ||
    typeof v.digest !== 'string' ||
    !HEX64.test(v.digest) ||
    !isText(v.stagingObjectId, 64)
  )
    return undefined;
  if ((v.mode !== 'replace_window' && v.mode !== 'merge' && v.mode !== 'exchange') || !isInstant(v.publishedAt))
    return undefined;
  return {
    rows: v.rows,
    digest: v.digest,
    stagingObjectId: v.stagingObjectId,
    mode: v.mode,
    publishedAt: v.publishedAt,
  };
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);
function pickCandidate(v: unknown): CandidateFact | undefined {
  const table = isObj(v) ? pickTable(v.table) : undefined;
  if (!isObj(v) || !table || !isUuid(v.uuid) || !isNat(v.rows) || !isText(v.digest, 64)) return undefined;
  return { table, uuid: v.uuid, rows: v.rows as number, digest: v.digest };
}
function pickDispatch(v: unknown): DispatchFact | undefined {
  if (!isObj(v) || v.count !== 1 || !isUuid(v.predecessorUuid) || !isUuid(v.candidateUuid) || !isText(v.runId, 64))
    return undefined;
  return { count: 1, predecessorUuid: v.predecessorUuid, candidateUuid: v.candidateUuid, runId: v.runId };
}
function pickEvidence(v: unknown): EvidenceFact | undefined {
  if (!isObj(v) || !isText(v.key) || typeof v.sha256 !== 'string' || !HEX64.test(v.sha256)) return undefined;
  return { key: v.key, sha256: v.sha256 };
}
const pickTable = (v: unknown): TableRef | undefined =>
  isObj(v) && isText(v.schema, 128) && isText(v.table, 128) ? { schema: v.schema, table: v.table } : undefined;
function pickAbsence(v: unknown): AbsenceFact | undefined {
  const table = isObj(v) ? pickTable(v.table) : undefined;
  if (!isObj(v) || !table) return undefined;
  if (v.objectId !== undefined && !isText(v.objectId, 64)) return undefined;
  const attached = v.attached === undefined ? undefined : pickTable(v.attached);
  if (v.attached !== undefined && (!attached || v.objectId === undefined)) return undefined;
  return { table, ...(v.objectId === undefined ? {} : { objectId: v.objectId }), ...(attached ? { attached } : {}) };
}
function pickPublicationCleanup(v: unknown): PublicationCleanupFact | undefined {
  if (!isObj(v) || !isUuid(v.predecessorUuid) || !isInstant(v.capsuleRetiredAt)) return undefined;
  return { predecessorUuid: v.predecessorUuid, capsuleRetiredAt: v.capsuleRetiredAt };
}
function pickContinuable(v: unknown): ContinuableFact | undefined {
  if (!isObj(v) || !isNat(v.unfinishedParts) || (v.unfinishedParts as number) < 1 || !isNat(v.rowsProved))
    return undefined;
  return { unfinishedParts: v.unfinishedParts as number, rowsProved: v.rowsProved as number };
}
function pickCheckpoint(v: unknown): CheckpointFact | undefined {
  if (!isObj(v) || !isInstant(v.windowEnd) || typeof v.moved !== 'boolean' || !isInstant(v.at)) return undefined;
  return { windowEnd: v.windowEnd, moved: v.moved, at: v.at };
}
/** Every fact a step may record, with its picker (set once; the checkpoint is advanceCheckpoint's alone). */
const PATCHABLE = {
  staging: pickStaging,
  plan: pickPlan,
  parts: pickParts,
  publication: pickPublication,
  candidate: pickCandidate,
  dispatch: pickDispatch,
  evidence: pickEvidence,
  absence: pickAbsence,
  publicationCleanup: pickPublicationCleanup,
  continuable: pickContinuable,
} as const;
type PatchableField = keyof typeof PATCHABLE;
const PATCHABLE_FIELDS = Object.keys(PATCHABLE) as PatchableField[];

/** Facts read back from the journal; anything malformed makes the journal inconsistent. */
export function parseFacts(v: unknown): DeliveryFacts {
  const bad = () => inconsistent('journal record has malformed facts');
  if (!isObj(v) || typeof v.ownedStagesRecorded !== 'boolean') throw bad();
  const facts: DeliveryFacts = { ownedStagesRecorded: v.ownedStagesRecorded };
  const pickers: ReadonlyArray<readonly [string, (x: unknown) => unknown]> = [
    ...Object.entries(PATCHABLE),
    ['checkpoint', pickCheckpoint],
  ];
  for (const [field, pick] of pickers) {
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
  for (const field of Object.keys(value)) {
    if (field !== 'ownedStagesRecorded' && !Object.hasOwn(PATCHABLE, field))
      throw invalid(field === 'checkpoint' ? 'checkpoint (set by advanceCheckpoint only)' : 'name');
  }
  const patch: FactsPatch = {};
  if (value.ownedStagesRecorded !== undefined) {
    if (typeof value.ownedStagesRecorded !== 'boolean') throw invalid('ownedStagesRecorded');
    patch.ownedStagesRecorded = value.ownedStagesRecorded;
  }
  for (const field of PATCHABLE_FIELDS) {
    if (value[field] === undefined) continue;
    (patch as Obj)[field] = PATCHABLE[field](value[field]) ?? fail(invalid(field));
  }
  return patch;
}

function fail(error: Error): never {
  throw error;
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/** Applies a patch to the recorded facts; contradicting evidence is refused, never overwritten. */
export function mergeFacts(current: DeliveryFacts, patch: FactsPatch): DeliveryFacts {
  const conflict = (field: string) =>
    new IdentityConflictError(
      'delivery.fact_conflict',
      `recorded ${field} differs from the one given; the journal keeps the first`,
    );
  const next: DeliveryFacts = { ...current };
  if (patch.ownedStagesRecorded !== undefined) {
    if (current.ownedStagesRecorded && !patch.ownedStagesRecorded) throw conflict('ownedStagesRecorded');
    next.ownedStagesRecorded = patch.ownedStagesRecorded;
  }
  for (const field of PATCHABLE_FIELDS) {
    const given = patch[field];
    if (given === undefined) continue;
    if (current[field] !== undefined && !same(current[field], given)) throw conflict(field);
    (next as unknown as Obj)[field] = given;
  }
  return next;
}

// ---------------------------------------------------------------------------------------
