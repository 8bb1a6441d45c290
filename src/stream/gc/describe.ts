import type { LaneRef } from '../../domain/stream.js';
import type { Ports } from '../../ports/index.js';
import { gcKeys, type Fate, type LifecycleRoot, type RootState } from './model.js';

/** Roots read per lane by describe (bounded); `truncated` says when a lane has more. */
const DESCRIBE_ROOTS = 1000;
/** Orphans (and superseded copies) listed per lane, soonest deadline first. */
const DESCRIBE_ORPHANS = 20;

type Waiting = { key: string; epoch: number; firstSeen: string; graceDeadline?: string };

export interface LifecycleDescription {
  /** Lifecycle roots by state (of the first DESCRIBE_ROOTS). */
  roots: Record<RootState, number>;
  /** ACTIVE roots by the fate the last GC scan found (LIVE, MAY_COMMIT, TRIMMED, DEAD, SUPERSEDED). */
  fates: Record<Fate, number>;
  /** Unreferenced objects the last GC scan found (DEAD), with the grace deadline it computed. */
  orphans: Waiting[];
  /** Copies a committed compaction superseded, with their grace deadline (from the compaction's commit). */
  superseded: Waiting[];
  truncated: boolean;
}

/** The lane's GC state for `cutpoint stream describe`: absent when GC never ran on the lane. */
export async function describeLifecycle(ports: Ports, lane: LaneRef): Promise<LifecycleDescription | undefined> {
  const items = (await ports.authority.query(gcKeys.pk(lane), 'root#', {
    limit: DESCRIBE_ROOTS,
  })) as unknown as LifecycleRoot[];
  if (items.length === 0) return undefined;
  const roots: Record<RootState, number> = { ACTIVE: 0, MARKED: 0, DELETING: 0, DELETED: 0 };
  const fates: Record<Fate, number> = { LIVE: 0, MAY_COMMIT: 0, TRIMMED: 0, DEAD: 0, SUPERSEDED: 0 };
  for (const root of items) {
    roots[root.state]++;
    if (root.state === 'ACTIVE' && root.fate) fates[root.fate]++;
  }
  return {
    roots,
    fates,
    orphans: waiting(items, 'DEAD'),
    superseded: waiting(items, 'SUPERSEDED'),
    truncated: items.length === DESCRIBE_ROOTS,
  };
}

function waiting(items: LifecycleRoot[], fate: Fate): Waiting[] {
  return items
    .filter((r) => r.state === 'ACTIVE' && r.fate === fate)
    .sort((a, b) => (a.graceDeadline ?? '').localeCompare(b.graceDeadline ?? ''))
    .slice(0, DESCRIBE_ORPHANS)
    .map((r) => ({
      key: r.objectKey,
      epoch: r.epoch,
      firstSeen: r.firstSeen,
      ...(r.graceDeadline ? { graceDeadline: r.graceDeadline } : {}),
    }));
}
