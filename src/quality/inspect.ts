import { listInvocations, type ActionGate } from '../delivery/journal/listing.js';
import { deliveryKeys } from '../delivery/journal/keys.js';
import { loadInvocation, MAX_READ_ROUNDS, type InvocationRecord } from '../delivery/journal/records.js';
import { holdsCustody, JournalUnavailableError } from '../domain/delivery/journal-states.js';
import { CutpointError } from '../domain/errors.js';
import { authorityBreakCode, type AuthorityBreak, type EvidenceView } from '../domain/quality/actions.js';
import type { CapsuleV2 } from '../domain/quality/capsule.js';
import { parseCapsule } from '../domain/quality/capsule-parse.js';
import {
  CapsuleVersionUnsupportedError,
  CoreDigestMismatchError,
  EvidenceInvalidError,
} from '../domain/quality/errors.js';
import type { CompletionWitness } from '../domain/quality/continuity.js';
import type { AuthorityBinding } from '../domain/quality/core.js';
import { readPreparedDocument, type EvidenceRead } from '../domain/quality/evidence.js';
import type { CapsuleRead } from '../domain/quality/outcome.js';
import {
  indexProjection,
  inspectProjection,
  type IndexProjection,
  type InspectProjection,
} from '../domain/quality/projection.js';
import type { AuthorityItem } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { authorityBreakOf } from './capsule-continuity.js';
import { qualityKeys } from './capsule-store.js';
import { indexWithRunbook, inspectWithRunbook } from './runbook.js';

/**
 * `cutpoint quality inspect <id>` and `inspect-all` (docs/rules.md#quality-commands): read-only. The journal
 * record comes from the delivery journal readers (the same checked load and listing as
 * `cutpoint delivery inspect`), the capsule from readCapsule, and the capsule's evidence
 * is classified (docs/rules.md#quality-evidence) by reading the exact objects the capsule
 * records. Everything runs on a read-only view of the ports: no write path is reachable from
 * here.
 */

/** A write reached through the read-only view: a bug in a read-only command, never performed. */
export class ReadOnlyViolationError extends CutpointError {
  constructor(what: string) {
    super(
      'Quality.ReadOnlyViolation',
      'quality.read_only_violation',
      `a read-only quality command attempted ${what}; nothing was written`,
    );
  }
}

/**
 * The ports with every write method replaced by a refusal: the authority answers get, getTogether,
 * query and describeBinding, the object store head, get and list, and nothing else.
 */
export function readOnlyPorts(ports: Ports): Ports {
  const { authority, objects } = ports;
  const refuse = (what: string) => () => Promise.reject(new ReadOnlyViolationError(what));
  return {
    clock: ports.clock,
    authority: {
      describeBinding: () => authority.describeBinding(),
      get: (key) => authority.get(key),
      getTogether: (keys) => authority.getTogether(keys),
      query: (pk, skPrefix, options) => authority.query(pk, skPrefix, options),
      put: refuse('an authority put'),
      update: refuse('an authority update'),
      delete: refuse('an authority delete'),
      transact: refuse('an authority transaction'),
    },
    objects: {
      location: objects.location,
      head: (key) => objects.head(key),
      get: (key) => objects.get(key),
      list: (prefix) => objects.list(prefix),
      put: refuse('an object put'),
      copy: refuse('an object copy'),
      delete: refuse('an object delete'),
      deleteMany: refuse('an object delete'),
    },
  };
}

/** The invocation is not (yet) under quality governance: no capsule and no exchange fact. */
export class NotGovernedError extends CutpointError {
  constructor(invocationId: string) {
    super(
      'Quality.NotGoverned',
      'quality.not_governed',
      `invocation ${invocationId} has no quality capsule and no ClickHouse exchange fact (yet); cutpoint delivery inspect ${invocationId} shows its journal state`,
    );
  }
}

/** An operation the quality surface speaks about: its capsule exists (or cannot be read), or the journal records an exchange publication. */
function isGoverned(record: InvocationRecord, capsule: CapsuleRead): boolean {
  if (capsule !== 'absent') return true;
  const f = record.facts;
  return f.candidate !== undefined || f.dispatch !== undefined || f.publication?.mode === 'exchange';
}

/**
 * The capsule as of the checked record, never a default: read in one snapshot with the
 * record and kept only if the record is still the version that was checked ('moved'
 * otherwise). A journaled write moves the record and the capsule together (the cleanup's
 * release retires the capsule with it): a capsule read after the check could be newer than
 * the record, a pair no writer produces (`quality.state_inconsistent`, no permitted action).
 * A failed read is unreadable, a bad item malformed.
 */
async function capsuleOf(ports: Ports, record: InvocationRecord): Promise<CapsuleRead | 'moved'> {
  const { targetId, invocationId } = record;
  let current: AuthorityItem | undefined;
  let item: AuthorityItem | undefined;
  try {
    [current, item] = await ports.authority.getTogether([
      deliveryKeys.invocation(targetId, invocationId),
      qualityKeys.capsule(targetId, invocationId),
    ]);
  } catch {
    return 'unreadable';
  }
  if (current?.version !== record.version) return 'moved';
  if (item === undefined) return 'absent';
  try {
    return parseCapsule(item);
  } catch (error) {
    if (error instanceof EvidenceInvalidError || error instanceof CapsuleVersionUnsupportedError) return 'malformed';
    return 'unreadable';
  }
}

/** The checked record and its capsule as of one moment: a record that moved meanwhile is loaded and checked again. */
async function withCapsule(
  ports: Ports,
  checked: InvocationRecord,
): Promise<{ record: InvocationRecord; capsule: CapsuleRead }> {
  let record = checked;
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const capsule = await capsuleOf(ports, record);
    if (capsule !== 'moved') return { record, capsule };
    record = await loadInvocation(ports, record.invocationId);
  }
  throw new JournalUnavailableError(
    'delivery.recovery_journal_unavailable',
    `invocation ${record.invocationId} kept moving while it was read; inspect it again`,
  );
}

/** One evidence object as the store answered (bytes as text), before interpretation. */
async function objectOf(ports: Ports, key: string): Promise<EvidenceRead> {
  try {
    const stored = await ports.objects.get(key);
    return stored === undefined
      ? { status: 'absent' }
      : { status: 'found', bytes: Buffer.from(stored.bytes).toString('utf8') };
  } catch {
    return { status: 'unreadable' };
  }
}

interface EvidenceFinding {
  view: EvidenceView;
  /** The sealed replay_window_days, when prepared.json is valid. */
  replayWindowDays?: number;
  /** Set when the capsule is not continuous with its evidence or the authority table is another one (capsule-continuity.ts). */
  authority?: AuthorityBreak;
}

/**
 * docs/rules.md#quality-evidence for one v2 capsule: prepared.json first (exact key, recorded
 * SHA-256, shape, every digest recomputed, the capsule's core), then — for COMPLETE —
 * completion.json when its evidence is recorded (same checks, and the version it witnesses must
 * be the capsule's completion version). COMPLETE without the recorded completion evidence is
 * `pending` (cut point quality.completion.put / .record, repaired by resume). Whatever the
 * state, the continuity rule and the authority binding (capsule-continuity.ts): a rolled-back
 * capsule or a replaced table is shown with no permitted action.
 */
async function evidenceOf(
  ports: Ports,
  record: InvocationRecord,
  capsule: CapsuleV2,
  binding: () => Promise<AuthorityBinding>,
): Promise<EvidenceFinding> {
  const { witness, authority } = await authorityBreakOf(ports, record, capsule, binding);
  const finding = await documentsOf(ports, capsule, witness);
  return authority === undefined ? finding : { ...finding, authority };
}

async function documentsOf(ports: Ports, capsule: CapsuleV2, witness: CompletionWitness): Promise<EvidenceFinding> {
  const prepared = await objectOf(ports, capsule.prepared.key);
  if (prepared.status === 'absent') return { view: 'missing' };
  if (prepared.status === 'unreadable') return { view: 'unreadable' };
  let replayWindowDays: number;
  try {
    replayWindowDays = readPreparedDocument(prepared.bytes, capsule.prepared.sha256, capsule.coreDigest).plan
      .replayWindowDays;
  } catch (error) {
    if (error instanceof EvidenceInvalidError) return { view: error.classification };
    if (error instanceof CoreDigestMismatchError) return { view: 'malformed' };
    throw error;
  }
  const completion = capsule.completion;
  if (capsule.state !== 'COMPLETE' || completion === undefined) return { view: 'valid', replayWindowDays };
  if (completion.evidence === undefined) return { view: 'pending', replayWindowDays };
  if (witness.evidence !== 'valid') return { view: witness.evidence, replayWindowDays };
  return { view: witness.version === completion.version ? 'valid' : 'malformed', replayWindowDays };
}

async function projectionOf(
  ports: Ports,
  record: InvocationRecord,
  capsule: CapsuleRead,
  binding: () => Promise<AuthorityBinding>,
): Promise<InspectProjection> {
  const v2 = typeof capsule === 'object' && capsule.schema === 2 ? capsule : undefined;
  // A v1 capsule is read-only and its guide reads no evidence; an absent or unusable one has none to read.
  const finding: EvidenceFinding = v2 ? await evidenceOf(ports, record, v2, binding) : { view: 'unknown' };
  return inspectProjection({
    invocationId: record.invocationId,
    route: record.route,
    targetId: record.targetId,
    window: { start: record.sealed.window.start, end: record.sealed.window.end },
    journal: {
      state: record.state,
      hasPublicationFact: record.facts.publication !== undefined,
      dispatchCount: record.facts.dispatch?.count ?? 0,
      ownedStagesRecorded: record.facts.ownedStagesRecorded,
      ...(record.facts.continuable ? { continuable: record.facts.continuable } : {}),
    },
    capsule,
    evidence: finding.view,
    now: ports.clock.now().toISOString(),
    ...(finding.replayWindowDays === undefined ? {} : { replayWindowDays: finding.replayWindowDays }),
    ...(finding.authority === undefined ? {} : { authority: finding.authority }),
  });
}

/** DescribeTable of the authority table, once per command however many capsules it checks. */
function bindingOnce(ports: Ports): () => Promise<AuthorityBinding> {
  let described: Promise<AuthorityBinding> | undefined;
  return () => (described ??= ports.authority.describeBinding());
}

/** `quality inspect <id>`: one operation's projection (`cutpoint.quality-governance.v1`). */
export async function inspectQuality(ports: Ports, invocationId: unknown): Promise<InspectProjection> {
  const reader = readOnlyPorts(ports);
  const { record, capsule } = await withCapsule(reader, await loadInvocation(reader, invocationId));
  if (!isGoverned(record, capsule)) throw new NotGovernedError(record.invocationId);
  return inspectWithRunbook(await projectionOf(reader, record, capsule, bindingOnce(reader)));
}

/**
 * `quality inspect-all`: every governed operation of the delivery journal (the listing
 * checked against every journal invariant, as `delivery inspect-all`), and the two
 * retention counts. `retained_custody_count` means what it means in the delivery index:
 * every journal record that holds custody, governed or not, so both documents agree and
 * an uninstall needs both counts at 0 (docs/rules.md#capsule-versions).
 * `retained_governance_count`: non-COMPLETE v2 capsules, held guards, and capsules that cannot
 * be read.
 */
export async function inspectAllQuality(ports: Ports): Promise<IndexProjection> {
  const reader = readOnlyPorts(ports);
  const records = await listInvocations(reader);
  const governed: InspectProjection[] = [];
  const binding = bindingOnce(reader);
  for (const listed of records) {
    const { record, capsule } = await withCapsule(reader, listed);
    if (isGoverned(record, capsule)) governed.push(await projectionOf(reader, record, capsule, binding));
  }
  const index = indexWithRunbook(indexProjection(governed));
  return { ...index, retained_custody_count: records.filter((r) => holdsCustody(r.state)).length };
}

/**
 * What quality governance withholds from `delivery inspect` and `inspect-all` (the CLI
 * composes it into the delivery listing: src/delivery does not reach into quality): an
 * operation whose v2 capsule breaks with its evidence or its authority table
 * (authorityBreakOf, the check quality inspect shows) permits no delivery action either,
 * and its diagnostic is the break's (quality.authority_version_rollback or
 * quality.authority_replaced). Any other capsule leaves the delivery guide as it is: each
 * live action checks the capsule again before it writes.
 */
export function capsuleActionGate(ports: Ports): ActionGate {
  const reader = readOnlyPorts(ports);
  const binding = bindingOnce(reader);
  return async (checked) => {
    const { record, capsule } = await withCapsule(reader, checked);
    if (typeof capsule !== 'object' || capsule.schema !== 2) return undefined;
    const { authority } = await authorityBreakOf(reader, record, capsule, binding);
    return authority === undefined ? undefined : authorityBreakCode(authority);
  };
}
