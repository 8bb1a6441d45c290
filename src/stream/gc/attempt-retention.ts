import { attemptSettledByWindow, attemptWindowOf } from '../../domain/attempt-time.js';
import { laneKeys, WAL_ROOT, walPrefixOf, type LaneRef } from '../../domain/stream.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { loadHead } from '../lane-store.js';
import { retireExact } from './retention.js';
import { eachOfPage, PAGE } from './state.js';

/**
 * The attempt evidence GC may forget (docs/stream-log.md "The stream log", GC retention): the collected
 * record (`collected#<attempt>`, gc/attempt-record.ts) and the spent marker
 * (`spent#<attempt>`, spend-attempt.ts) of a TIME-MARKED attempt, once
 * - its mark is older than `now − window − margin` (src/domain/attempt-time.ts): every
 *   append path — a re-run through the flow, appendBatch, a LaneWriter, `stream append` —
 *   and every clock within the margin refuses the attempt for good (Stream.AttemptExpired),
 *   so no re-run can take the missing evidence for a fresh attempt and append its batch
 *   again, and `stream resolve` of it never spends it (resolve-expired.ts);
 * - nothing is left under its WAL prefix: no GC judgement (a spent marker makes a WAL object
 *   DEAD, liveness.ts) or collection (a collected record is written before a WAL object's
 *   DELETE) can still need the record;
 * each by a conditional delete at the exact version read (retireExact, cut point
 * stream.gc.retire). An unmarked attempt's evidence is kept for good. The other readers of
 * these items are the append paths and resolve (attempt-evidence.ts), which refuse or never
 * spend the attempt past its window.
 */
export const ATTEMPT_RECORD_PREFIXES = ['collected#', 'spent#'] as const;

/** Keys one page's range listing reads before the attempts it did not reach get a LIST each. */
const RANGE_KEYS = 10 * PAGE;

/**
 * One page of the lane's attempt evidence after `after` (the sweep's attempt phase): the
 * collected records first, then the spent markers; a page that is not full goes on to the
 * next prefix in the same call. `next` is where the sweep continues; none when it is done.
 */
export async function sweepAttemptPage(
  ports: Ports,
  lane: LaneRef,
  after: string | undefined,
): Promise<{ retired: number; next?: string }> {
  const window = attemptWindowOf(await loadHead(ports, lane));
  const now = ports.clock.now();
  let retired = 0;
  const first = Math.max(
    0,
    ATTEMPT_RECORD_PREFIXES.findIndex((prefix) => after?.startsWith(prefix)),
  );
  for (let i = first; i < ATTEMPT_RECORD_PREFIXES.length; i++) {
    const prefix = ATTEMPT_RECORD_PREFIXES[i]!;
    const startAfterSk = i === first ? after : undefined;
    const items = await ports.authority.query(laneKeys.pk(lane), prefix, {
      limit: PAGE,
      ...(startAfterSk ? { startAfterSk } : {}),
    });
    retired += await retireSettled(ports, lane, items, prefix, (attemptId) =>
      attemptSettledByWindow(attemptId, window, now),
    );
    if (items.length === PAGE) return { retired, next: items.at(-1)!.sk };
  }
  return { retired };
}

/** Retires the page's records of attempts settled by the window whose WAL prefix is empty; how many are gone. */
async function retireSettled(
  ports: Ports,
  lane: LaneRef,
  items: AuthorityItem[],
  prefix: string,
  settled: (attemptId: string) => boolean,
): Promise<number> {
  const candidates = items.filter((item) => settled(item.sk.slice(prefix.length)));
  const withObjects = await attemptsWithObjects(
    ports,
    lane,
    candidates.map((item) => item.sk.slice(prefix.length)),
  );
  let retired = 0;
  await eachOfPage(
    candidates.filter((item) => !withObjects.has(item.sk.slice(prefix.length))),
    async (item) => void ((await retireExact(ports, { pk: item.pk, sk: item.sk }, item.version)) && retired++),
  );
  return retired;
}

/**
 * Which of `attemptIds` still have an object under their WAL prefix
 * (`wal/<stream>/<partition>/<attempt>/`). One bounded listing of the lane's WAL keys across
 * the page's range of prefixes answers for every attempt it passes (a page of an old
 * writer's attempts is mostly one stretch of keys); an attempt it did not reach gets a LIST
 * of its own. Without paged listing, a LIST each.
 */
export async function attemptsWithObjects(
  ports: Ports,
  lane: LaneRef,
  attemptIds: string[],
  rangeKeys = RANGE_KEYS,
): Promise<Set<string>> {
  const root = `${WAL_ROOT}${lane.stream}/${lane.partition}/`;
  const held = new Set<string>();
  if (attemptIds.length === 0) return held;
  const prefixes = attemptIds.map((id) => walPrefixOf(lane, id)).sort();
  let unreached = prefixes;
  if (ports.objects.listPage) {
    const last = prefixes.at(-1)!;
    // Before every key under the first prefix (and no key of the lane equals a prefix without its slash).
    let startAfter = prefixes[0]!.slice(0, -1);
    let read = 0;
    let lastKey: string | undefined;
    let passed = false;
    while (!passed && read < rangeKeys) {
      const page = await ports.objects.listPage(root, { startAfter, limit: PAGE });
      for (const { key } of page.objects) held.add(key.slice(root.length, key.indexOf('/', root.length)));
      read += page.objects.length;
      lastKey = page.objects.at(-1)?.key ?? lastKey;
      passed = !page.more || !lastKey || beyond(lastKey, last);
      if (lastKey) startAfter = lastKey;
    }
    // Every key under a prefix sorts between it and the first key beyond it.
    unreached = passed ? [] : prefixes.filter((p) => !beyond(lastKey!, p));
  }
  const asked = new Set(attemptIds);
  await eachOfPage(
    unreached.map((p) => p.slice(root.length, -1)).filter((id) => !held.has(id)),
    async (id) => void ((await ports.objects.list(walPrefixOf(lane, id))).length > 0 && held.add(id)),
  );
  for (const id of held) if (!asked.has(id)) held.delete(id);
  return held;
}

/** `key` sorts after every key under `prefix`. */
function beyond(key: string, prefix: string): boolean {
  return key > prefix && !key.startsWith(prefix);
}
