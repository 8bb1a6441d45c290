import { randomUUID } from 'node:crypto';
import { OutcomeUnknownError } from '../../domain/errors.js';
import type { IndexEntry, LaneRef } from '../../domain/stream.js';
import { OffsetTrimmedError } from '../../domain/stream-errors.js';
import type { TransactionLeg } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { GC_CUT_POINTS } from './cut-points.js';
import { gcKeys, LeaseExpiredError, ObjectReclaimedError, type Lease, type LifecycleRoot } from './model.js';

/** How long a reader's lease holds off deletion if the reader never releases it. */
export const LEASE_TTL_MS = 60_000;
const PIN_ROUNDS = 4;

export interface Pin {
  /** The entry to read: copies GC is collecting are dropped from it. */
  entry: IndexEntry;
  leases: Array<{ objectKey: string; leaseId: string }>;
  /** When every lease of the pin expires: past it GC may retire them and collect the copies. */
  expiresAt: string;
}

/**
 * Pins the copies of one range before reading them (docs/rules.md#reader-leases: a reader racing GC
 * pins and revalidates before reading). Per copy, one transaction: ConditionCheck that its
 * root is absent or ACTIVE at the version just seen, and Put a lease with an expiry. A
 * MARKED/DELETING/DELETED root accepts no new lease, so that copy is not read; a mark
 * landing between the two is caught by the version check (the transaction fails and the
 * root is reloaded). Leases taken before a mark drain before the root can be sealed.
 * If no copy can be pinned the read revalidates: a trim past `from` is Stream.OffsetTrimmed,
 * anything else Stream.ObjectReclaimed — never a skip, never a deleted byte.
 */
export async function pinForRead(ports: Ports, lane: LaneRef, entry: IndexEntry, from: number): Promise<Pin> {
  const leaseId = randomUUID();
  const expiresAt = new Date(ports.clock.now().getTime() + LEASE_TTL_MS).toISOString();
  const keys = [entry.gen0Key, entry.walKey].filter((k): k is string => typeof k === 'string' && k.length > 0);
  const expected = new Map<string, 'absent' | { version: number }>(keys.map((k) => [k, 'absent']));
  const refused = new Set<string>();
  for (let round = 0; round < PIN_ROUNDS; round++) {
    const wanted = keys.filter((k) => !refused.has(k));
    if (wanted.length === 0) break;
    const legs: TransactionLeg[] = wanted.flatMap((key): TransactionLeg[] => [
      { kind: 'check', key: gcKeys.root(lane, key), expect: expected.get(key)! },
      {
        kind: 'put',
        item: {
          ...gcKeys.lease(lane, key, leaseId),
          stream: lane.stream,
          partition: lane.partition,
          objectKey: key,
          leaseId,
          expiresAt,
        },
        expect: 'absent',
      },
    ]);
    const outcome = await ports.authority.transact(GC_CUT_POINTS.pin, legs);
    if (outcome.status === 'APPLIED') return pinned(lane, entry, wanted, refused, { leaseId, expiresAt }, from, ports);
    const current = outcome.status === 'CONFLICT' ? outcome.conflicts : await reloadRoots(ports, lane, wanted, leaseId);
    if (outcome.status === 'UNKNOWN' && (current as Array<{ applied?: boolean }>).every((c) => c.applied)) {
      return pinned(lane, entry, wanted, refused, { leaseId, expiresAt }, from, ports);
    }
    for (const conflict of current) {
      const key = wanted[Math.floor(conflict.leg / 2)];
      if (key === undefined || conflict.leg % 2 === 1) continue;
      const root = conflict.current as unknown as LifecycleRoot | undefined;
      if (!root) expected.set(key, 'absent');
      else if (root.state === 'ACTIVE') expected.set(key, { version: root.version });
      else refused.add(key);
    }
  }
  if (refused.size === keys.length) return pinned(lane, entry, [], refused, { leaseId, expiresAt }, from, ports);
  throw new OutcomeUnknownError(GC_CUT_POINTS.pin, `${GC_CUT_POINTS.pin}: pinning ${keys.join(', ')} did not settle`);
}

async function pinned(
  lane: LaneRef,
  entry: IndexEntry,
  keys: string[],
  refused: Set<string>,
  lease: { leaseId: string; expiresAt: string },
  from: number,
  ports: Ports,
): Promise<Pin> {
  const gen0Pinned = entry.gen0Key !== undefined && keys.includes(entry.gen0Key);
  if (!keys.includes(entry.walKey) && !gen0Pinned) {
    // Nothing of this range may be read: revalidate before answering.
    const head = await loadHead(ports, lane);
    if (head.trimOffset > from) throw new OffsetTrimmedError(from, head.trimOffset);
    throw new ObjectReclaimedError(lane, [...refused]);
  }
  // A generation GC is collecting is not offered to the reader. The WAL key stays in the
  // entry (it is the commit's identity); unpinned, it is only the fallback after a pinned gen0.
  const view: IndexEntry =
    entry.gen0Key !== undefined && refused.has(entry.gen0Key)
      ? { ...entry, gen0Key: undefined, gen0Sha256: undefined }
      : entry;
  return {
    entry: view,
    leases: keys.map((objectKey) => ({ objectKey, leaseId: lease.leaseId })),
    expiresAt: lease.expiresAt,
  };
}

/**
 * A live reader revalidates its lease before it trusts a bad verdict on a pinned copy
 * (missing, checksum, malformed): the lease must be unexpired by the clock and still in
 * the authority. GC retires only expired leases and seals only once none is active, so a
 * held lease means GC has not collected the copy and the verdict is the copy's own; a
 * lease past its expiry (a reader stalled in I/O) proves nothing, and the read fails with
 * Stream.LeaseExpired instead of quarantining a collected copy or skipping it. A copy the
 * pin did not lease (a generation found later in the commit evidence) is not checked.
 */
export async function assertLeaseHeld(ports: Ports, lane: LaneRef, pin: Pin, objectKey: string): Promise<void> {
  const lease = pin.leases.find((l) => l.objectKey === objectKey);
  if (!lease) return;
  const unexpired = Date.parse(pin.expiresAt) > ports.clock.now().getTime();
  if (!unexpired || !(await ports.authority.get(gcKeys.lease(lane, objectKey, lease.leaseId))))
    throw new LeaseExpiredError(lane, objectKey, pin.expiresAt);
}

/** After a lost transaction response: each key's root as it is now, and whether our lease landed. */
async function reloadRoots(ports: Ports, lane: LaneRef, keys: string[], leaseId: string) {
  const out: Array<{ leg: number; current: unknown; applied: boolean }> = [];
  for (const [i, key] of keys.entries()) {
    const [root, lease] = await Promise.all([
      ports.authority.get(gcKeys.root(lane, key)),
      ports.authority.get(gcKeys.lease(lane, key, leaseId)),
    ]);
    out.push({ leg: 2 * i, current: root, applied: lease !== undefined });
  }
  return out;
}

/**
 * Releases a read's leases (one transaction). A release that fails leaves the leases to
 * expire: deletion waits longer, nothing is unsafe, and the read's verified bytes stand;
 * GC retires them once expired (retention.ts).
 */
export async function releasePin(ports: Ports, lane: LaneRef, pin: Pin): Promise<void> {
  if (pin.leases.length === 0) return;
  const legs: TransactionLeg[] = pin.leases.map((l) => ({
    kind: 'delete',
    key: gcKeys.lease(lane, l.objectKey, l.leaseId),
    expect: { version: 1 },
  }));
  await ports.authority.transact(GC_CUT_POINTS.release, legs).catch(() => undefined);
}

/** Every lease of a lane, for `cutpoint stream leases`. */
export async function listLeases(
  ports: Ports,
  lane: LaneRef,
): Promise<Array<{ objectKey: string; expiresAt: string; expired: boolean }>> {
  const now = ports.clock.now().getTime();
  const items = (await ports.authority.query(gcKeys.pk(lane), 'lease#', { limit: 1000 })) as unknown as Lease[];
  return items.map((l) => ({
    objectKey: l.objectKey,
    expiresAt: l.expiresAt,
    expired: Date.parse(l.expiresAt) <= now,
  }));
}
