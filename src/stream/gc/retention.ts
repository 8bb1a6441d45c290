import { OutcomeUnknownError } from '../../domain/errors.js';
import type { ItemKey } from '../../ports/authority.js';
import type { LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { GC_CUT_POINTS } from './cut-points.js';
import { gcKeys, graceDeadlineOf, type Lease, type LifecycleRoot } from './model.js';
import { eachOfPage, PAGE } from './state.js';

/**
 * GC's own records do not grow without bound (docs/stream-log.md "The stream log", GC: retention).
 * GC writes one lifecycle root per object key (its sealed delete journal inside it) and
 * readers write one lease per pinned copy; GC itself removes them once they can no longer
 * protect anything, each by a conditional delete at the exact version it judged (cut point
 * stream.gc.retire), a lost answer resolved by reloading the exact item:
 * - a DELETED root, one grace after its delete (`deletedAt` + grace): its journal's work is
 *   done, and a late object under the key afterwards gets a new root with a fresh grace
 *   from the scanner — the same protection a renewed epoch gives; a zombie still holding
 *   the old journal finds no root with its delete id and does nothing;
 * - an expired lease (a reader that crashed or never released): it holds nothing off any
 *   more, and a reader that outlived it fails its read (leases.ts, Stream.LeaseExpired).
 * A root that is not DELETED, and an unexpired lease, are never retired.
 */
export function retirable(root: LifecycleRoot, now: Date, graceSeconds: number): boolean {
  return (
    root.state === 'DELETED' &&
    typeof root.deletedAt === 'string' &&
    graceDeadlineOf(root.deletedAt, graceSeconds).getTime() <= now.getTime()
  );
}

/**
 * Deletes exactly the version judged; true when it is gone now (this call or a racing one),
 * false when it moved meanwhile. A lost request (the reload shows the same version) is sent
 * once more; one that does not settle fails the step (Cutpoint.OutcomeUnknown), whose retry
 * judges again.
 */
export async function retireExact(ports: Ports, key: ItemKey, version: number): Promise<boolean> {
  for (let round = 0; round < 2; round++) {
    const outcome = await ports.authority.delete(GC_CUT_POINTS.retention, key, { version });
    if (outcome.status === 'APPLIED') return true;
    if (outcome.status === 'CONFLICT') return outcome.current === undefined;
    const now = await ports.authority.get(key);
    if (!now) return true;
    if (now.version !== version) return false; // moved meanwhile (a renewed root): no longer the item judged
  }
  throw new OutcomeUnknownError(
    GC_CUT_POINTS.retention,
    `${GC_CUT_POINTS.retention}: retiring ${key.sk} did not settle`,
  );
}

export interface LeaseSweep {
  /** Unexpired leases on the key; a page full of them is counted as held (conservative). */
  active: number;
  swept: number;
}

/**
 * The leases a MARKED root waits on: the expired ones of the page are retired first, so a
 * pile of leases from crashed readers (more than a page of them) cannot hold the delete
 * off forever — each run sweeps a page, and only unexpired leases count.
 */
export async function drainLeasesOn(ports: Ports, lane: LaneRef, objectKey: string, now: Date): Promise<LeaseSweep> {
  const items = (await ports.authority.query(gcKeys.pk(lane), `lease#${objectKey}#`, {
    limit: PAGE,
  })) as unknown as Lease[];
  const swept = await sweepExpired(ports, items, now);
  // A lease not retired counts as held: unexpired, or moved since it was read (a conditional
  // delete refused at another version). A full page may hide more leases behind it: held
  // until a later run has swept past them.
  const held = items.length - swept;
  return { active: items.length === PAGE ? Math.max(held, 1) : held, swept };
}

/** One page of the lane's leases after `after` (the sweep's lease phase): expired ones retired. */
export async function sweepLeasePage(
  ports: Ports,
  lane: LaneRef,
  after: string | undefined,
): Promise<{ swept: number; last?: string; more: boolean }> {
  const items = (await ports.authority.query(gcKeys.pk(lane), 'lease#', {
    limit: PAGE,
    ...(after ? { startAfterSk: after } : {}),
  })) as unknown as Lease[];
  const swept = await sweepExpired(ports, items, ports.clock.now());
  const last = items.at(-1)?.sk;
  return { swept, ...(last ? { last } : {}), more: items.length === PAGE };
}

/** Retires the expired leases of a page; how many are gone. */
async function sweepExpired(ports: Ports, items: Lease[], now: Date): Promise<number> {
  let swept = 0;
  await eachOfPage(
    items.filter((l) => Date.parse(l.expiresAt) <= now.getTime()),
    async (l) => void ((await retireExact(ports, { pk: l.pk, sk: l.sk }, l.version)) && swept++),
  );
  return swept;
}
