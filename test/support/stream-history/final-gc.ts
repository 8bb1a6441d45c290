import { laneKeys, type CommitRecord, type LaneHead } from '../../../src/domain/stream.js';
import { gcKeys, type LifecycleRoot } from '../../../src/stream/gc/model.js';
import { LEASE_TTL_MS } from '../../../src/stream/gc/leases.js';
import { listAll } from '../../faults/stream-gc-world.js';
import { readBackAll } from './checks.js';
import { compact, compactionsOf, gc, gen0PrefixOf, materialize } from './lifecycle.js';
import type { History } from './model.js';

/**
 * The end of a stream history's lifecycle, after every attempt settled: generation 0 and
 * compaction finish what faults left mid-way; then GC runs until everything is past its
 * grace (a first run sees the newest objects, the clock moves past the grace and every
 * lease, a second run collects, a third finds nothing more), and the bucket is checked
 * object by object against the authority:
 * - no live byte deleted: every WAL object of a committed range above the trim that no
 *   live compaction supersedes is there, so is every compaction reaching above the trim,
 *   and the lane reads back exactly as the history committed it;
 * - no deleted byte readable: reads below the trim are refused (checked by every read);
 * - every collectible object collected: nothing else is left in the lane's prefixes
 *   (orphans of attempts proven not committed, trimmed and superseded copies, compactions
 *   below the trim), and no key was deleted more often than it had lives (root epochs).
 */
export async function settleLifecycle(h: History): Promise<void> {
  h.actors.reader.faults.disarm();
  h.operator.faults.disarm();
  h.step++;
  h.note('— settle the lifecycle: generation 0, compaction, then GC past every grace');
  await materialize(h);
  await compact(h);
  await gc(h);
  const past = h.actors.graceSeconds + LEASE_TTL_MS / 1000 + 1;
  await gc(h, { advanceSeconds: past });
  const deleted = total(h.actors.deletes);
  await gc(h, { advanceSeconds: past });
  h.check(
    total(h.actors.deletes) === deleted,
    `a third GC run deleted ${total(h.actors.deletes) - deleted} more objects`,
  );
  await checkInventory(h);
  await readBackAll(h);
}

const total = (deletes: Map<string, number>) => [...deletes.values()].reduce((a, b) => a + b, 0);

async function checkInventory(h: History): Promise<void> {
  const { present, needed, gen0Allowed } = await checkLiveKept(h);
  for (const key of present) {
    h.check(
      needed.has(key) || gen0Allowed.some((p) => key.startsWith(p)),
      `${key} outlived GC past every grace (root ${JSON.stringify(await rootState(h, key))})`,
    );
  }
  h.note(
    `inventory: ${present.size} objects left, ${needed.size} needed, ${total(h.actors.deletes)} deleted; ${h.compactions} compactions, ${h.gcRuns} GC runs`,
  );
}

/**
 * What GC may never have done, at any point of a history: delete a live byte (a WAL object
 * of a committed range above the trim that no live compaction supersedes, or a compaction
 * reaching above the trim), or delete a key more often than it had lives (root epochs,
 * those of retired roots included).
 * Returns the lane's objects and what of them is needed, for the full inventory.
 */
export async function checkLiveKept(
  h: History,
): Promise<{ present: Set<string>; needed: Set<string>; gen0Allowed: string[] }> {
  const ports = h.operator.ports;
  const head = (await ports.authority.get(laneKeys.head(h.lane))) as unknown as LaneHead;
  const commits = (await ports.authority.query(laneKeys.pk(h.lane), 'commit#')) as unknown as CommitRecord[];
  const live = (await compactionsOf(h)).filter((c) => c.end > head.trimOffset);
  const needed = new Set(live.map((c) => c.objectKey));
  const gen0Allowed: string[] = [];
  for (const c of commits) {
    if (c.end <= head.trimOffset) continue;
    if (live.some((k) => k.start <= c.start && c.end <= k.end)) continue; // superseded: collected after grace
    needed.add(c.walKey);
    gen0Allowed.push(gen0PrefixOf(h, c.start));
  }
  const present = new Set(await listAll(ports, h.lane));
  for (const key of needed)
    h.check(present.has(key), `live object ${key} is gone (deleted ${h.actors.deletes.get(key) ?? 0} times)`);
  for (const [key, n] of h.actors.deletes) {
    // Its lives: the epochs of the roots GC retired, and of the root it has now.
    const root = (await ports.authority.get(gcKeys.root(h.lane, key))) as unknown as LifecycleRoot | undefined;
    const lives = (h.actors.retiredLives.get(key) ?? 0) + (root?.epoch ?? 0);
    h.check(n <= lives, `${key} deleted ${n} times in ${lives} lives`);
  }
  return { present, needed, gen0Allowed };
}

async function rootState(h: History, key: string): Promise<Partial<LifecycleRoot> | undefined> {
  const root = (await h.operator.ports.authority.get(gcKeys.root(h.lane, key))) as unknown as LifecycleRoot | undefined;
  return (
    root && {
      state: root.state,
      fate: root.fate,
      epoch: root.epoch,
      ...(root.graceDeadline ? { graceDeadline: root.graceDeadline } : {}),
    }
  );
}
