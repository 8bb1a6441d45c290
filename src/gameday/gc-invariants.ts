import type { LaneRef } from '../domain/stream.js';
import { readVerified } from '../objects/exact-object.js';
import type { Ports } from '../ports/index.js';
import { gcKeys, lanePrefixes, type LifecycleRoot } from '../stream/gc/model.js';
import { coveringCompaction, type LaneCopies } from './lane-copies.js';

/**
 * What GC must leave of a drill's lane, judged from the lane's own evidence, not from GC's
 * verdicts: `live-kept` — every copy a live range needs (above the trim: the committed
 * compaction covering it, else its WAL object and its generation 0) still there and read
 * back verified; `collected` — with grace 0, nothing else left under the lane's prefixes
 * (trimmed copies, orphans, superseded copies: everything GC may collect), and with a longer
 * grace at least every copy wholly below the trim (TRIMMED is collected at once; orphans and
 * superseded copies wait for their grace); `roots-settled` — no lifecycle root left MARKED or
 * DELETING (GC finished every delete it started).
 */

type Check = (name: string, held: boolean, detail: string) => void;

interface Copy {
  key: string;
  sha256: string;
  what: string;
}

export async function checkCollected(
  ports: Ports,
  lane: LaneRef,
  copies: LaneCopies,
  graceZero: boolean,
  check: Check,
): Promise<void> {
  const trim = copies.head.trimOffset;
  const needed: Copy[] = [];
  const trimmed = new Set<string>();
  for (const c of copies.commits) {
    const entry = copies.index.get(c.end);
    const own: Copy[] = [{ key: c.walKey, sha256: c.walSha256, what: `WAL of [${c.start}, ${c.end})` }];
    if (entry?.gen0Key && entry.gen0Sha256)
      own.push({ key: entry.gen0Key, sha256: entry.gen0Sha256, what: `generation 0 of [${c.start}, ${c.end})` });
    if (c.end <= trim) own.forEach((x) => trimmed.add(x.key));
    else if (!coveringCompaction(copies, c.start, c.end)) needed.push(...own);
  }
  for (const k of copies.compactions.filter((x) => x.committed)) {
    if (k.end <= trim) trimmed.add(k.objectKey);
    else needed.push({ key: k.objectKey, sha256: k.sha256, what: `compaction of [${k.start}, ${k.end})` });
  }

  const listed = new Set((await Promise.all(lanePrefixes(lane).map((p) => ports.objects.list(p)))).flat());
  const bad: string[] = [];
  for (const copy of needed) {
    const read = await readVerified(ports.objects, copy.key, copy.sha256).then(
      () => 'exact',
      (error: Error) => error.name,
    );
    if (read !== 'exact') bad.push(`${copy.what}: ${read}`);
  }
  check(
    'live-kept',
    bad.length === 0,
    bad.length ? bad.join('; ') : `${needed.length} live copies there, read back verified`,
  );

  const neededKeys = new Set(needed.map((x) => x.key));
  const left = [...listed].filter((key) => (graceZero ? !neededKeys.has(key) : trimmed.has(key)));
  const waiting = [...listed].filter((key) => !neededKeys.has(key) && !trimmed.has(key)).length;
  check(
    'collected',
    left.length === 0,
    left.length
      ? `left: ${left.join(', ')}`
      : graceZero
        ? `grace 0: only the ${neededKeys.size} live copies left`
        : `every trimmed copy collected; ${waiting} other(s) within the deployed grace`,
  );

  const roots = (await ports.authority.query(gcKeys.pk(lane), 'root#')) as unknown as LifecycleRoot[];
  const open = roots.filter((r) => r.state === 'MARKED' || r.state === 'DELETING');
  check(
    'roots-settled',
    open.length === 0,
    open.length
      ? `left ${open.map((r) => `${r.objectKey} ${r.state}`).join(', ')}`
      : `${roots.length} root(s), none MARKED or DELETING`,
  );
}
