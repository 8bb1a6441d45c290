import {
  CAPSULE_STATES,
  CAPSULE_V1_STATES,
  OBSERVATION_OUTCOMES,
  REMOTE_TERMINATIONS,
  WINDOW_CLOSE_REASONS,
  type CapsuleV1,
  type CapsuleV2,
  type EvidenceRef,
  type ReaderGuard,
  type StoredCapsule,
} from './capsule.js';
import { CapsuleVersionUnsupportedError } from './errors.js';
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
  optional,
  positiveInt,
  record,
  text,
  uuid,
  type Fields,
} from './shape.js';

/**
 * Strict reading of a stored capsule item (docs/rules.md#quality-capsule). The authority
 * envelope (`pk`, `sk`, the item `fence`, `expireAt`) is allowed and dropped; every other
 * unknown or missing field, wrong type or inconsistent combination is
 * `quality.evidence_malformed` — never a default. A schema other than 1 or 2 is
 * `quality.capsule_version_unsupported`.
 */

const ENVELOPE = ['pk', 'sk', 'fence', 'expireAt'] as const;

/** lastObservation.generation: the UUIDs the reader read before and after its probes (null: no table under the name). */
function observedGeneration(value: unknown, path: string): { before: string | null; after: string | null } {
  const g = record(value, path, ['before', 'after']);
  const at = (key: 'before' | 'after') => (g[key] === null ? null : uuid(g[key], join(path, key)));
  return { before: at('before'), after: at('after') };
}

const V2_REQUIRED = [
  'schema',
  'version',
  'state',
  'coreDigest',
  'digests',
  'generation',
  'prepared',
  'staged',
  'runs',
  'replay',
] as const;
const V2_OPTIONAL = [
  'reader',
  'lastObservation',
  'completion',
  'failure',
  'retiredAt',
  'journalSeq',
  ...ENVELOPE,
] as const;
const V1_REQUIRED = ['schema', 'version', 'state', 'coreDigest', 'digests', 'staged'] as const;

export function parseCapsule(item: unknown): StoredCapsule {
  if (item === null || typeof item !== 'object' || Array.isArray(item))
    throw malformed('capsule', 'expected an object');
  const schema = (item as Fields).schema;
  if (schema === 2) return parseV2(item);
  if (schema === 1) return parseV1(item);
  if (typeof schema === 'number' && Number.isSafeInteger(schema)) {
    throw new CapsuleVersionUnsupportedError(
      `capsule schema ${schema} is not supported by this reader (supported: 1, 2)`,
    );
  }
  throw malformed('capsule.schema', 'expected 1 or 2');
}

function evidenceRef(value: unknown, path: string): EvidenceRef {
  const f = record(value, path, ['key', 'sha256']);
  return { key: text(f.key, join(path, 'key')), sha256: hex64(f.sha256, join(path, 'sha256')) };
}

function readerGuard(value: unknown, path: string): ReaderGuard {
  const f = record(value, path, ['token', 'session', 'runId', 'fence', 'acquiredAt', 'deadlineAt']);
  const fence = record(f.fence, join(path, 'fence'), ['owner', 'session', 'epoch']);
  return {
    token: text(f.token, join(path, 'token')),
    session: text(f.session, join(path, 'session')),
    runId: text(f.runId, join(path, 'runId')),
    fence: {
      owner: text(fence.owner, join(path, 'fence.owner')),
      session: text(fence.session, join(path, 'fence.session')),
      epoch: nonNegativeInt(fence.epoch, join(path, 'fence.epoch')),
    },
    acquiredAt: instant(f.acquiredAt, join(path, 'acquiredAt')),
    deadlineAt: instant(f.deadlineAt, join(path, 'deadlineAt')),
  };
}

function parseV2(item: object): CapsuleV2 {
  const p = 'capsule';
  const f = record(item, p, V2_REQUIRED, V2_OPTIONAL);
  const d = record(f.digests, 'capsule.digests', ['policy', 'admission', 'inventory', 'probes', 'authorityBinding']);
  const g = record(f.generation, 'capsule.generation', ['candidateUuid']);
  const s = record(f.staged, 'capsule.staged', ['passed', 'resultsDigest']);
  const r = record(f.runs, 'capsule.runs', ['originalRunId', 'originalLoadId']);
  const rp = record(f.replay, 'capsule.replay', [], ['windowEndsAt', 'closedAt', 'closedBy', 'reason']);
  const capsule: CapsuleV2 = {
    schema: 2,
    version: positiveInt(f.version, 'capsule.version'),
    state: oneOf(f.state, 'capsule.state', CAPSULE_STATES),
    coreDigest: hex64(f.coreDigest, 'capsule.coreDigest'),
    digests: {
      policy: hex64(d.policy, 'capsule.digests.policy'),
      admission: hex64(d.admission, 'capsule.digests.admission'),
      inventory: hex64(d.inventory, 'capsule.digests.inventory'),
      probes: hex64(d.probes, 'capsule.digests.probes'),
      authorityBinding: hex64(d.authorityBinding, 'capsule.digests.authorityBinding'),
    },
    generation: { candidateUuid: uuid(g.candidateUuid, 'capsule.generation.candidateUuid') },
    prepared: evidenceRef(f.prepared, 'capsule.prepared'),
    staged: {
      passed: exactly(s.passed, 'capsule.staged.passed', true),
      resultsDigest: hex64(s.resultsDigest, 'capsule.staged.resultsDigest'),
    },
    runs: {
      originalRunId: text(r.originalRunId, 'capsule.runs.originalRunId'),
      originalLoadId: text(r.originalLoadId, 'capsule.runs.originalLoadId'),
    },
    replay: {},
  };
  const reader = optional(f, 'reader', p, readerGuard);
  if (reader) capsule.reader = reader;
  const last = optional(f, 'lastObservation', p, (v, path) => {
    const o = record(
      v,
      path,
      ['runId', 'outcome', 'at', 'remoteTermination'],
      ['errorClass', 'code', 'capsuleVersion', 'generation'],
    );
    return {
      runId: text(o.runId, join(path, 'runId')),
      outcome: oneOf(o.outcome, join(path, 'outcome'), OBSERVATION_OUTCOMES),
      at: instant(o.at, join(path, 'at')),
      remoteTermination: oneOf(o.remoteTermination, join(path, 'remoteTermination'), REMOTE_TERMINATIONS),
      ...(o.errorClass === undefined ? {} : { errorClass: text(o.errorClass, join(path, 'errorClass')) }),
      ...(o.code === undefined ? {} : { code: text(o.code, join(path, 'code')) }),
      ...(o.capsuleVersion === undefined
        ? {}
        : { capsuleVersion: positiveInt(o.capsuleVersion, join(path, 'capsuleVersion')) }),
      ...(o.generation === undefined ? {} : { generation: observedGeneration(o.generation, join(path, 'generation')) }),
    };
  });
  if (last) capsule.lastObservation = last;
  const completion = optional(f, 'completion', p, (v, path) => {
    const c = record(v, path, ['version', 'at', 'runId'], ['evidence']);
    return {
      version: positiveInt(c.version, join(path, 'version')),
      at: instant(c.at, join(path, 'at')),
      runId: text(c.runId, join(path, 'runId')),
      ...(c.evidence === undefined ? {} : { evidence: evidenceRef(c.evidence, join(path, 'evidence')) }),
    };
  });
  if (completion) capsule.completion = completion;
  const failure = optional(f, 'failure', p, (v, path) => {
    const x = record(v, path, ['probes', 'at', 'runId']);
    const probes = list(x.probes, join(path, 'probes'), (n, np) => anyText(n, np, 256));
    if (probes.length === 0) throw malformed(join(path, 'probes'), 'a failure names at least one probe');
    return { probes, at: instant(x.at, join(path, 'at')), runId: text(x.runId, join(path, 'runId')) };
  });
  if (failure) capsule.failure = failure;
  const retiredAt = optional(f, 'retiredAt', p, instant);
  if (retiredAt) capsule.retiredAt = retiredAt;
  const journalSeq = optional(f, 'journalSeq', p, nonNegativeInt);
  if (journalSeq !== undefined) capsule.journalSeq = journalSeq;
  const windowEndsAt = optional(rp, 'windowEndsAt', 'capsule.replay', instant);
  const closedAt = optional(rp, 'closedAt', 'capsule.replay', instant);
  const closedBy = optional(rp, 'closedBy', 'capsule.replay', text);
  const reason = optional(rp, 'reason', 'capsule.replay', (v, path) => oneOf(v, path, WINDOW_CLOSE_REASONS));
  capsule.replay = {
    ...(windowEndsAt ? { windowEndsAt } : {}),
    ...(closedAt ? { closedAt } : {}),
    ...(closedBy ? { closedBy } : {}),
    ...(reason ? { reason } : {}),
  };
  assertConsistent(capsule);
  return capsule;
}

/**
 * Combinations no writer produces. Deliberately NOT checked here: `completion.version` vs
 * `version` (a restored item with a lower version is the rollback the continuity rule
 * reports as `quality.authority_version_rollback`, not a malformed item).
 */
function assertConsistent(c: CapsuleV2): void {
  if ((c.state === 'COMPLETE') !== (c.completion !== undefined))
    throw malformed('capsule.completion', 'present exactly when state is COMPLETE');
  if ((c.state === 'FAILED') !== (c.failure !== undefined))
    throw malformed('capsule.failure', 'present exactly when state is FAILED');
  if (c.state === 'TARGET_PENDING' && c.lastObservation === undefined)
    throw malformed('capsule.lastObservation', 'missing for TARGET_PENDING');
  if (c.lastObservation && c.state !== 'PREPARED' && c.lastObservation.outcome !== c.state) {
    throw malformed('capsule.lastObservation.outcome', 'differs from the capsule state');
  }
  if (c.retiredAt !== undefined && c.state !== 'COMPLETE')
    throw malformed('capsule.retiredAt', 'only a COMPLETE capsule is retired');
  if (c.retiredAt !== undefined && c.replay.windowEndsAt === undefined)
    throw malformed('capsule.replay.windowEndsAt', 'missing on a retired capsule');
  if (c.replay.windowEndsAt !== undefined && c.retiredAt === undefined)
    throw malformed('capsule.replay.windowEndsAt', 'set before retirement');
  const closure = [c.replay.closedAt, c.replay.reason].filter((v) => v !== undefined).length;
  if (closure === 1) throw malformed('capsule.replay', 'closedAt and reason are set together');
  if (c.replay.closedAt !== undefined && c.retiredAt === undefined)
    throw malformed('capsule.replay.closedAt', 'set before retirement');
  if ((c.replay.reason === 'successor') !== (c.replay.closedBy !== undefined)) {
    throw malformed('capsule.replay.closedBy', 'present exactly when the window was closed by a successor');
  }
  if (c.reader !== undefined && c.state !== 'PREPARED' && c.state !== 'TARGET_PENDING') {
    throw malformed('capsule.reader', 'a guard is held only in PREPARED or TARGET_PENDING');
  }
}

function parseV1(item: object): CapsuleV1 {
  const f = record(item, 'capsule', V1_REQUIRED, ENVELOPE);
  const d = record(f.digests, 'capsule.digests', ['policy', 'admission', 'inventory']);
  const s = record(f.staged, 'capsule.staged', ['passed'], ['resultsDigest']);
  const passed = s.passed;
  if (typeof passed !== 'boolean') throw malformed('capsule.staged.passed', 'expected a boolean');
  return {
    schema: 1,
    version: positiveInt(f.version, 'capsule.version'),
    state: oneOf(f.state, 'capsule.state', CAPSULE_V1_STATES),
    coreDigest: hex64(f.coreDigest, 'capsule.coreDigest'),
    digests: {
      policy: hex64(d.policy, 'capsule.digests.policy'),
      admission: hex64(d.admission, 'capsule.digests.admission'),
      inventory: hex64(d.inventory, 'capsule.digests.inventory'),
    },
    staged: {
      passed,
      ...(s.resultsDigest === undefined
        ? {}
        : { resultsDigest: hex64(s.resultsDigest, 'capsule.staged.resultsDigest') }),
    },
  };
}
