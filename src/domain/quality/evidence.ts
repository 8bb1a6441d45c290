// Over ~300 lines since the formatter wrapped it at 120 columns (208 lines before), kept whole:
// one job: the prepared and completion evidence documents (build, read strictly, witness), one
// format.
import { canonicalJson, sha256Hex } from '../digest.js';
import type { CapsuleDigests } from './capsule.js';
import type { CompletionWitness } from './continuity.js';
import {
  sealCore,
  type AuthorityBinding,
  type CoreIdentity,
  type Inventory,
  type ObservationRetryPolicy,
} from './core.js';
import { CoreDigestMismatchError, EvidenceInvalidError, type InvalidEvidenceClass } from './errors.js';
import { PROBE_KINDS, PROBE_RESULTS, type OriginalProbe, type ProbeResult } from './probes.js';
import {
  anyText,
  exactly,
  hex64,
  instant,
  join,
  list,
  malformed,
  nonNegativeInt,
  oneOf,
  positiveInt,
  record,
  text,
  uuid,
} from './shape.js';

/**
 * The two immutable evidence documents (docs/rules.md#quality-evidence): `prepared.json` (the sealed
 * inputs of the immutable core, with the original probes in full) and `completion.json`
 * (the independent witness of the completion version, with the original results). Bytes
 * are canonical JSON, so the same facts always give the same SHA-256 (a lost PUT is
 * resolved by comparing it; completion.json is rewritten from the capsule's completion
 * record).
 * Reading verifies the SHA first, then the exact shape, then the recomputed digests.
 */

export const PREPARED_KIND = 'cutpoint.quality-prepared.v1';
export const COMPLETION_KIND = 'cutpoint.quality-completion.v1';

export interface PreparedDocument extends CoreIdentity {
  kind: typeof PREPARED_KIND;
  qualityBlock: unknown;
  plan: {
    probes: OriginalProbe[];
    observeDeadlineSeconds: number;
    reapBoundMs: number;
    retry: ObservationRetryPolicy;
    replayWindowDays: number;
  };
  inventory: Inventory;
  authorityBinding: AuthorityBinding;
  coreDigest: string;
  digests: CapsuleDigests;
  stagedResults: Array<{ name: string; result: ProbeResult }>;
  runs: { originalRunId: string; originalLoadId: string };
}

export interface CompletionDocument {
  kind: typeof COMPLETION_KIND;
  invocationId: string;
  coreDigest: string;
  candidateUuid: string;
  /** v_c: the capsule version the COMPLETE write produced. */
  version: number;
  at: string;
  runId: string;
  results: Array<{ name: string; result: ProbeResult }>;
}

export interface EvidenceBytes {
  bytes: string;
  sha256: string;
}

const bytesOf = (doc: object): EvidenceBytes => {
  const bytes = canonicalJson(doc);
  return { bytes, sha256: sha256Hex(bytes) };
};

/** prepared.json for the sealed inputs: the digests are computed here, never supplied. */
export function preparedDocument(
  input: Omit<PreparedDocument, 'kind' | 'coreDigest' | 'digests'>,
): { document: PreparedDocument } & EvidenceBytes {
  const { coreDigest, digests } = sealCore(input);
  const document: PreparedDocument = { ...input, kind: PREPARED_KIND, coreDigest, digests };
  return { document, ...bytesOf(document) };
}

export function completionDocument(
  input: Omit<CompletionDocument, 'kind'>,
): { document: CompletionDocument } & EvidenceBytes {
  const document: CompletionDocument = { ...input, kind: COMPLETION_KIND };
  return { document, ...bytesOf(document) };
}

function parseJson(bytes: string, expectedSha256: string | null, what: string): unknown {
  if (expectedSha256 !== null && sha256Hex(bytes) !== expectedSha256)
    throw new EvidenceInvalidError('malformed', `${what}: SHA-256 differs from the recorded one`);
  try {
    return JSON.parse(bytes) as unknown;
  } catch {
    throw new EvidenceInvalidError('malformed', `${what}: not JSON`);
  }
}

function results(value: unknown, path: string): Array<{ name: string; result: ProbeResult }> {
  return list(value, path, (v, p) => {
    const r = record(v, p, ['name', 'result']);
    return { name: anyText(r.name, join(p, 'name'), 256), result: oneOf(r.result, join(p, 'result'), PROBE_RESULTS) };
  });
}

/** The sorting key as system.tables prints it ('' when the engine has none). */
function sortingKeyOf(value: unknown): string {
  if (typeof value !== 'string' || value.length > 65_536)
    throw malformed('prepared.inventory.sortingKey', 'expected a string');
  return value;
}

function digestsOf(value: unknown): CapsuleDigests {
  const d = record(value, 'prepared.digests', ['policy', 'admission', 'inventory', 'probes', 'authorityBinding']);
  const at = (k: keyof CapsuleDigests) => hex64(d[k], `prepared.digests.${k}`);
  return {
    policy: at('policy'),
    admission: at('admission'),
    inventory: at('inventory'),
    probes: at('probes'),
    authorityBinding: at('authorityBinding'),
  };
}

function probe(value: unknown, path: string): OriginalProbe {
  const f = record(value, path, ['name', 'kind', 'sql', 'expect', 'required', 'columns']);
  const expect = f.expect;
  if (typeof expect !== 'number' || !Number.isSafeInteger(expect))
    throw malformed(join(path, 'expect'), 'expected an integer');
  return {
    name: anyText(f.name, join(path, 'name'), 256),
    kind: oneOf(f.kind, join(path, 'kind'), PROBE_KINDS),
    sql: anyText(f.sql, join(path, 'sql')),
    expect,
    required: exactly(f.required, join(path, 'required'), true),
    columns: list(f.columns, join(path, 'columns'), (c, p) => anyText(c, p, 256)),
  };
}

/**
 * A verified prepared.json: SHA, shape, and every digest recomputed from its own inputs
 * (any difference: malformed). `sealedCoreDigest` is the capsule's: a valid document for
 * another core is `quality.core_digest_mismatch`.
 */
export function readPreparedDocument(
  bytes: string,
  expectedSha256: string,
  sealedCoreDigest: string,
): PreparedDocument {
  const f = record(parseJson(bytes, expectedSha256, 'prepared.json'), 'prepared', [
    'kind',
    'invocationId',
    'route',
    'targetId',
    'candidateUuid',
    'sealDigest',
    'qualityBlock',
    'plan',
    'inventory',
    'authorityBinding',
    'coreDigest',
    'digests',
    'stagedResults',
    'runs',
  ]);
  const pl = record(f.plan, 'prepared.plan', [
    'probes',
    'observeDeadlineSeconds',
    'reapBoundMs',
    'retry',
    'replayWindowDays',
  ]);
  const inv = record(f.inventory, 'prepared.inventory', [
    'columns',
    'engine',
    'sortingKey',
    'loadReceiptsDigest',
    'totalRows',
  ]);
  const ab = record(f.authorityBinding, 'prepared.authorityBinding', ['tableArn', 'tableId', 'creationDateTime']);
  const runs = record(f.runs, 'prepared.runs', ['originalRunId', 'originalLoadId']);
  const retry = record(pl.retry, 'prepared.plan.retry', ['kind'], ['maxAttempts', 'maxElapsedMs']);
  const doc: PreparedDocument = {
    kind: exactly(f.kind, 'prepared.kind', PREPARED_KIND),
    invocationId: text(f.invocationId, 'prepared.invocationId'),
    route: text(f.route, 'prepared.route'),
    targetId: text(f.targetId, 'prepared.targetId'),
    candidateUuid: uuid(f.candidateUuid, 'prepared.candidateUuid'),
    sealDigest: hex64(f.sealDigest, 'prepared.sealDigest'),
    qualityBlock: f.qualityBlock,
    plan: {
      probes: list(pl.probes, 'prepared.plan.probes', probe),
      observeDeadlineSeconds: positiveInt(pl.observeDeadlineSeconds, 'prepared.plan.observeDeadlineSeconds'),
      reapBoundMs: positiveInt(pl.reapBoundMs, 'prepared.plan.reapBoundMs'),
      retry:
        oneOf(retry.kind, 'prepared.plan.retry.kind', ['off', 'keeper_no_node']) === 'off'
          ? { kind: 'off' }
          : {
              kind: 'keeper_no_node',
              maxAttempts: positiveInt(retry.maxAttempts, 'prepared.plan.retry.maxAttempts'),
              maxElapsedMs: positiveInt(retry.maxElapsedMs, 'prepared.plan.retry.maxElapsedMs'),
            },
      replayWindowDays: positiveInt(pl.replayWindowDays, 'prepared.plan.replayWindowDays'),
    },
    inventory: {
      columns: list(inv.columns, 'prepared.inventory.columns', (v, p) => {
        const c = record(v, p, ['name', 'type', 'position']);
        return {
          name: anyText(c.name, join(p, 'name'), 256),
          type: anyText(c.type, join(p, 'type'), 1024),
          position: positiveInt(c.position, join(p, 'position')),
        };
      }),
      engine: anyText(inv.engine, 'prepared.inventory.engine', 1024),
      sortingKey: sortingKeyOf(inv.sortingKey),
      loadReceiptsDigest: hex64(inv.loadReceiptsDigest, 'prepared.inventory.loadReceiptsDigest'),
      totalRows: nonNegativeInt(inv.totalRows, 'prepared.inventory.totalRows'),
    },
    authorityBinding: {
      tableArn: text(ab.tableArn, 'prepared.authorityBinding.tableArn'),
      tableId: ab.tableId === null ? null : text(ab.tableId, 'prepared.authorityBinding.tableId'),
      creationDateTime: instant(ab.creationDateTime, 'prepared.authorityBinding.creationDateTime'),
    },
    coreDigest: hex64(f.coreDigest, 'prepared.coreDigest'),
    digests: digestsOf(f.digests),
    stagedResults: results(f.stagedResults, 'prepared.stagedResults'),
    runs: {
      originalRunId: text(runs.originalRunId, 'prepared.runs.originalRunId'),
      originalLoadId: text(runs.originalLoadId, 'prepared.runs.originalLoadId'),
    },
  };
  let recomputed: ReturnType<typeof sealCore>;
  try {
    recomputed = sealCore(doc);
  } catch {
    throw malformed('prepared', 'its inputs do not seal');
  }
  if (canonicalJson(recomputed) !== canonicalJson({ coreDigest: doc.coreDigest, digests: doc.digests }))
    throw malformed('prepared', 'digests do not recompute');
  if (doc.coreDigest !== sealedCoreDigest) throw new CoreDigestMismatchError();
  return doc;
}

/**
 * A verified completion.json for this core (SHA and shape); any other core is malformed
 * evidence. `expectedSha256` null: a document found under the operation's deterministic key
 * that the capsule does not record (a capsule restored to before its completion, or the crash
 * between quality.completion.put and .record) — its shape and core are still checked.
 */
export function readCompletionDocument(
  bytes: string,
  expectedSha256: string | null,
  sealedCoreDigest: string,
): CompletionDocument {
  const f = record(parseJson(bytes, expectedSha256, 'completion.json'), 'completion', [
    'kind',
    'invocationId',
    'coreDigest',
    'candidateUuid',
    'version',
    'at',
    'runId',
    'results',
  ]);
  const doc: CompletionDocument = {
    kind: exactly(f.kind, 'completion.kind', COMPLETION_KIND),
    invocationId: text(f.invocationId, 'completion.invocationId'),
    coreDigest: hex64(f.coreDigest, 'completion.coreDigest'),
    candidateUuid: uuid(f.candidateUuid, 'completion.candidateUuid'),
    version: positiveInt(f.version, 'completion.version'),
    at: instant(f.at, 'completion.at'),
    runId: text(f.runId, 'completion.runId'),
    results: results(f.results, 'completion.results'),
  };
  if (doc.coreDigest !== sealedCoreDigest) throw malformed('completion.coreDigest', 'names another immutable core');
  return doc;
}

/** What reading an evidence object gave, before interpretation (the object-store port's outcome). */
export type EvidenceRead = { status: 'found'; bytes: string } | { status: 'absent' } | { status: 'unreadable' };

/**
 * The completion witness for the continuity rule (docs/rules.md#version-continuity): valid with
 * v_c, or the class of why not.
 */
export function completionWitnessOf(
  read: EvidenceRead,
  expectedSha256: string | null,
  sealedCoreDigest: string,
): CompletionWitness {
  if (read.status === 'absent') return { evidence: 'missing' };
  if (read.status === 'unreadable') return { evidence: 'unreadable' };
  try {
    return { evidence: 'valid', version: readCompletionDocument(read.bytes, expectedSha256, sealedCoreDigest).version };
  } catch (error) {
    if (error instanceof EvidenceInvalidError) return { evidence: error.classification as InvalidEvidenceClass };
    throw error;
  }
}
