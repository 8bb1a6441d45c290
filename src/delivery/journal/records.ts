import { validateInvocationId, isInvocationId, isManifestName } from '../../domain/delivery/identifiers.js';
import { custodyProblems, factProblems, headProblems } from '../../domain/delivery/journal-invariants.js';
import { JournalUnavailableError, parseJournalState, type JournalState } from '../../domain/delivery/journal-states.js';
import { UnreachableError } from '../../domain/errors.js';
import { validateSealedAuthority, type SealedAuthority } from '../../domain/delivery/sealed-authority.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import type { Ports } from '../../ports/index.js';
import { inconsistent } from './errors.js';
import { isInstant, parseFacts, type DeliveryFacts } from './facts.js';
import { deliveryKeys, isTargetId, TRANSITION_ID, type InvocationRef } from './keys.js';

/**
 * One invocation's record and its target's custody: parsed and validated as read back,
 * and the checked load (`inspect <id>`: record ↔ custody ↔ journal records).
 */

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

/** Validates an invocation item read back from the authority. Messages never echo content. */
export function parseInvocation(
  item: AuthorityItem,
  expected: { invocationId: string; targetId?: string },
): InvocationRecord {
  if (item.invocationId !== expected.invocationId)
    throw inconsistent('journal record does not belong to the invocation it is filed under');
  if (!isTargetId(item.targetId) || (expected.targetId !== undefined && item.targetId !== expected.targetId)) {
    throw inconsistent('journal record names an invalid or different target');
  }
  if (!isManifestName(item.route)) throw inconsistent('journal record has an invalid route');
  const state = parseJournalState(item.state);
  const sealed = validateSealedAuthority(item.sealed);
  if (sealed.invocationId !== expected.invocationId)
    throw inconsistent('sealed authority belongs to another invocation');
  const facts = parseFacts(item.facts);
  for (const field of ['custodyEpoch', 'journalSeq', 'version'] as const) {
    if (!Number.isSafeInteger(item[field]) || (item[field] as number) < 1)
      throw inconsistent(`journal record has an invalid ${field}`);
  }
  if (typeof item.lastTransitionId !== 'string' || !TRANSITION_ID.test(item.lastTransitionId))
    throw inconsistent('journal record has an invalid last transition id');
  if (!isInstant(item.createdAt) || !isInstant(item.updatedAt))
    throw inconsistent('journal record has invalid timestamps');
  // State ↔ facts: a state without the proof its transition required is not a state.
  const [factProblem] = factProblems({
    invocationId: expected.invocationId,
    state,
    custodyEpoch: item.custodyEpoch as number,
    facts,
  });
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
  if (
    !Number.isSafeInteger(item.epoch) ||
    (item.epoch as number) < 1 ||
    !isInvocationId(item.invocationId) ||
    !isInstant(item.acquiredAt)
  )
    throw bad();
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
export async function read<T>(what: () => Promise<T>): Promise<T> {
  try {
    return await what();
  } catch (error) {
    // Unreachable: nothing was read at all, and the operator needs that cause, not a guess.
    if (error instanceof JournalUnavailableError || error instanceof UnreachableError) throw error;
    throw new JournalUnavailableError(
      'delivery.recovery_journal_unavailable',
      'the delivery journal could not be read from the authority store',
    );
  }
}

export async function loadCustody(ports: Ports, targetId: string): Promise<CustodyRecord | undefined> {
  const item = await read(() => ports.authority.get(deliveryKeys.custody(targetId)));
  return item ? parseCustody(item, targetId) : undefined;
}

/** The invocation record under an exact ref; missing is unavailable. */
export async function readInvocation(ports: Ports, ref: InvocationRef): Promise<InvocationRecord> {
  const item = await read(() => ports.authority.get(deliveryKeys.invocation(ref.targetId, ref.invocationId)));
  if (!item)
    throw new JournalUnavailableError(
      'delivery.recovery_journal_unavailable',
      'no journal exists for this invocation on this target',
    );
  return parseInvocation(item, ref);
}

/**
 * The invocation record and its target's custody as one snapshot read. A journaled write
 * moves both in one transaction (a release, a takeover): two separate reads could see the
 * record before it and the custody after it, a journal that seems to retain custody the
 * target has released.
 */
export async function readInvocationAndCustody(
  ports: Ports,
  ref: InvocationRef,
): Promise<{ invocation: InvocationRecord; custody: CustodyRecord | undefined }> {
  const [item, custody] = await read(() =>
    ports.authority.getTogether([
      deliveryKeys.invocation(ref.targetId, ref.invocationId),
      deliveryKeys.custody(ref.targetId),
    ]),
  );
  if (!item)
    throw new JournalUnavailableError(
      'delivery.recovery_journal_unavailable',
      'no journal exists for this invocation on this target',
    );
  return { invocation: parseInvocation(item, ref), custody: custody ? parseCustody(custody, ref.targetId) : undefined };
}

/**
 * `inspect <invocation-id>`: the record from the id alone. A malformed id is
 * `delivery.invocation_id_invalid`; an unknown one `delivery.recovery_journal_unavailable`;
 * a record (or pointer) that fails validation `delivery.recovery_journal_inconsistent`.
 * Read-only.
 */
export async function loadInvocation(ports: Ports, invocationId: unknown): Promise<InvocationRecord> {
  return (await loadInvocationAndCustody(ports, invocationId)).invocation;
}

/**
 * `loadInvocation`, with the target's custody as the check read it (a recovery action
 * plans its custody takeover on both: journaled-write.ts `Known`, no second read). Not one
 * snapshot: a write planned on them is conditioned on both versions.
 */
export async function loadInvocationAndCustody(
  ports: Ports,
  invocationId: unknown,
): Promise<{ invocation: InvocationRecord; custody: CustodyRecord | undefined }> {
  const id = validateInvocationId(invocationId);
  const pointer = await read(() => ports.authority.get(deliveryKeys.pointer(id)));
  if (!pointer)
    throw new JournalUnavailableError(
      'delivery.recovery_journal_unavailable',
      'no journal exists for this invocation',
      true,
    );
  if (!isTargetId(pointer.targetId)) throw inconsistent('invocation pointer names an invalid target');
  const targetId = pointer.targetId;
  const loadRecord = async () => {
    const item = await read(() => ports.authority.get(deliveryKeys.invocation(targetId, id)));
    if (!item) {
      const custody = await loadCustody(ports, targetId);
      const held =
        custody?.state === 'HELD' && custody.invocationId === id
          ? ' while the target is still in its custody (orphaned custody)'
          : '';
      throw inconsistent(`invocation ${id} has a pointer but no journal record${held}`);
    }
    return parseInvocation(item, { invocationId: id, targetId });
  };
  // The record and custody/journal reads are not one snapshot: a problem seen while the
  // record moved (a concurrent transition) is read again; one that stays is the journal's.
  for (let round = 0; ; round++) {
    const record = await loadRecord();
    const custody = await loadCustody(ports, targetId);
    const problems = await recordProblems(ports, record, custody);
    if (problems.length === 0) return { invocation: record, custody };
    if ((await loadRecord()).version === record.version || round >= MAX_READ_ROUNDS)
      throw inconsistent(problems.join('; '));
  }
}

export const MAX_READ_ROUNDS = 4;

/** A journal record of an invocation by seq, or undefined. */
async function journalRecordAt(ports: Ports, invocationId: string, seq: number): Promise<AuthorityItem | undefined> {
  return read(() => ports.authority.get(deliveryKeys.journalRecord(invocationId, seq)));
}

/**
 * The invariants of one record that need reads (custody ↔ record, head ↔ journal records;
 * state ↔ facts is checked by parseInvocation). `custody` is the target's custody item.
 */
export async function recordProblems(
  ports: Ports,
  record: InvocationRecord,
  custody: CustodyRecord | undefined,
): Promise<string[]> {
  const [first, head, next] = await Promise.all([
    journalRecordAt(ports, record.invocationId, 1),
    journalRecordAt(ports, record.invocationId, record.journalSeq),
    journalRecordAt(ports, record.invocationId, record.journalSeq + 1),
  ]);
  return [...custodyProblems(record, custody), ...headProblems(record, { first, head, next })];
}

/**
 * The session that began the invocation, from its first journal record (`begin`, seq 1,
 * `data.by.session`): a durable fact that every later session reads alike — what a
 * document written once under a create-only key may name (prepared.json's original run),
 * where the current fence's session would differ after a takeover. Missing or malformed
 * is an inconsistent journal (every invocation has its begin record).
 */
export async function beginSessionOf(ports: Ports, invocationId: string): Promise<string> {
  const first = await journalRecordAt(ports, invocationId, 1);
  const data = first?.data as { by?: { session?: unknown } } | undefined;
  const session = data?.by?.session;
  if (first?.type !== 'begin' || typeof session !== 'string' || session.length === 0)
    throw inconsistent(`invocation ${invocationId}'s first journal record does not name the session that began it`);
  return session;
}
