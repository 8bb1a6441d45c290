import {
  recoveryIndexOf,
  recoveryProjectionOf,
  isInvocationId,
  type RecoveryIndex,
  type RecoveryIndexItem,
  type RecoveryProjection,
  type RecoverySummary,
} from '../../domain/delivery/identifiers.js';
import { targetProblems } from '../../domain/delivery/journal-invariants.js';
import { JournalUnavailableError } from '../../domain/delivery/journal-states.js';
import type { Ports } from '../../ports/index.js';
import { inconsistent } from './errors.js';
import { withRunbook } from './runbook.js';
import { INVOCATIONS_PK, deliveryKeys, isTargetId, validateTargetId } from './keys.js';
import {
  loadCustody,
  loadInvocation,
  MAX_READ_ROUNDS,
  parseInvocation,
  read,
  recordProblems,
  type InvocationRecord,
} from './records.js';

/** The journal across targets: listing, checked against every invariant, and the inspect documents. */

/**
 * One target's records, checked against its custody and their journals. The reads are not
 * one snapshot: when a problem shows, custody and records are read again, and a problem
 * seen while either moved (a begin, a transition, a release) is checked once more rather
 * than reported.
 */
async function targetListing(
  ports: Ports,
  targetId: string,
): Promise<{ records: InvocationRecord[]; ids: string[]; problems: string[] }> {
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
    return {
      custody,
      records,
      unreadable,
      ids,
      versions: JSON.stringify([custody?.version, ...items.map((i) => [i.sk, i.version])]),
    };
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
 * a retained_custody_count it cannot vouch for (docs/rules.md#journal-invariants: an inconsistent
 * journal exits 1, stdout empty). The healthy rest stays readable with `--target` and `inspect <id>`.
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
    facts: {
      ownedStagesRecorded: record.facts.ownedStagesRecorded,
      ...(record.facts.continuable ? { continuable: record.facts.continuable } : {}),
    },
    window: record.sealed.window,
  };
}

/**
 * A hold another subsystem keeps over an invocation's live actions, given by whoever
 * composes the two (the CLI gives quality's capsule continuity, src/quality/inspect.ts
 * capsuleActionGate): a diagnostic code means nothing is permitted, and the code is the
 * diagnostic; undefined leaves the journal's guide. Read-only.
 */
export type ActionGate = (record: InvocationRecord) => Promise<string | undefined>;

/** The record's guide with the gate's hold applied, and the runbook for what is left offered. */
async function gated<T extends RecoveryIndexItem>(
  record: InvocationRecord,
  item: T,
  gate: ActionGate | undefined,
): Promise<T> {
  const held = gate && (await gate(record));
  return withRunbook(held === undefined ? item : { ...item, diagnostic_code: held, permitted_actions: [] });
}

/** The `inspect` document, with its state's `runbook`. Read-only. */
export async function inspectInvocation(
  ports: Ports,
  invocationId: unknown,
  gate?: ActionGate,
): Promise<RecoveryProjection> {
  const record = await loadInvocation(ports, invocationId);
  return gated(record, recoveryProjectionOf(recoverySummaryOf(record)), gate);
}

/** The `inspect-all` document (`retained_custody_count` = records whose state holds custody), a `runbook` per item. Read-only. */
export async function inspectAll(
  ports: Ports,
  options: { targetId?: string } = {},
  gate?: ActionGate,
): Promise<RecoveryIndex> {
  const records = await listInvocations(ports, options);
  const index = recoveryIndexOf(records.map(recoverySummaryOf));
  const byId = new Map(records.map((r) => [r.invocationId, r]));
  const items: RecoveryIndexItem[] = [];
  for (const item of index.items) items.push(await gated(byId.get(item.invocation_id)!, item, gate));
  return { ...index, items };
}
