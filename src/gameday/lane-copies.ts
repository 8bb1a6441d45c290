import { generationKeys } from '../domain/generation.js';
import { decodeBatch } from '../domain/record-batch.js';
import {
  laneKeys,
  rangeRootOf,
  type CommitRecord,
  type IndexEntry,
  type LaneHead,
  type LaneRef,
} from '../domain/stream.js';
import { loadRecord, loadRootHead } from '../generation/load.js';
import { readVerified } from '../objects/exact-object.js';
import type { Ports } from '../ports/index.js';
import { gen0MarkKey } from '../stream/append/gen0-cleanup.js';
import { compactionKeys, type CompactionRecord } from '../stream/compaction/model.js';
import { loadHead } from '../stream/lane-store.js';
import type { AckedBatch } from './drill-lane.js';
import type { InvariantCheck } from './report.js';

/**
 * The copies a drill's lane has of its committed ranges — each range's WAL object, its
 * generation 0, the compactions covering it — read from the authority as the lane's
 * evidence states them (commit records, index entries, generation records, `compaction#`
 * records), and what must hold of them after a maintenance flow converged: a generation 0
 * COMMITTED by its range's own task with exactly the WAL object's bytes, linked into the
 * range's index entry, the mark past it; a compaction COMMITTED, its bytes exactly the
 * records of the ranges it covers (read back verified), no two covering one offset, the mark
 * past them; each one's task cleaned once its mark passed it.
 */

export interface LaneCopies {
  head: LaneHead;
  commits: CommitRecord[];
  index: Map<number, IndexEntry>;
  /** Every `compaction#` record, with whether its generation is COMMITTED as the record names it. */
  compactions: Array<CompactionRecord & { committed: boolean }>;
  gen0Mark: number;
  compactMark: number;
}

type Check = (name: string, held: boolean, detail: string) => void;

export async function laneCopies(ports: Ports, lane: LaneRef): Promise<LaneCopies> {
  const pk = laneKeys.pk(lane);
  const [head, commits, entries, records, gen0Mark, compactMark] = await Promise.all([
    loadHead(ports, lane),
    ports.authority.query(pk, 'commit#') as unknown as Promise<CommitRecord[]>,
    ports.authority.query(pk, 'index#') as unknown as Promise<IndexEntry[]>,
    ports.authority.query(pk, 'compaction#') as unknown as Promise<CompactionRecord[]>,
    ports.authority.get(gen0MarkKey(lane)),
    ports.authority.get(compactionKeys.mark(lane)),
  ]);
  const compactions = await Promise.all(
    records.map(async (k) => {
      const record = await loadRecord(ports, k.root, k.generation);
      const committed = record?.state === 'COMMITTED' && record.objectKey === k.objectKey && record.sha256 === k.sha256;
      return { ...k, committed };
    }),
  );
  return {
    head,
    commits,
    index: new Map(entries.map((e) => [e.end, e])),
    compactions,
    gen0Mark: Number(gen0Mark?.next ?? 0),
    compactMark: Number(compactMark?.next ?? 0),
  };
}

/** The committed compaction covering [start, end), if any. */
export function coveringCompaction(copies: LaneCopies, start: number, end: number) {
  return copies.compactions.find((k) => k.committed && k.start <= start && end <= k.end);
}

/** The acknowledged records by offset. */
export function recordsAt(acked: readonly AckedBatch[], start: number, end: number): string[] {
  return acked
    .flatMap((b) => b.records.map((r, i) => ({ r, at: b.start + i })))
    .filter((x) => x.at >= start && x.at < end)
    .map((x) => x.r);
}

/**
 * `gen0-exact`: a range above the trim that no committed compaction serves has generation 0
 * COMMITTED in slot 0 by its attempt's task with the WAL object's SHA-256, linked into its
 * index entry and read back verified; one a compaction serves has it so too, or ABORTED (GC
 * may have collected a superseded copy: its record is what is checked); one whose generation
 * 0 its task proved ABORTED (passed by materialize) has its WAL object read back exact; never a second
 * generation under the range's root. `gen0-mark`: the mark at the committed end.
 */
export async function checkGen0(ports: Ports, lane: LaneRef, copies: LaneCopies, check: Check): Promise<void> {
  const wrong: string[] = [];
  let exact = 0;
  let compacted = 0;
  let passed = 0;
  for (const c of copies.commits.filter((x) => x.end > copies.head.trimOffset)) {
    const root = rangeRootOf(lane, c.start);
    const [record, second] = await Promise.all([loadRecord(ports, root, 0), loadRecord(ports, root, 1)]);
    const at = `[${c.start}, ${c.end})`;
    const own = record?.taskId === c.attemptId && record.sha256 === c.walSha256;
    if (second) wrong.push(`${at} a second generation ${second.state}`);
    else if (coveringCompaction(copies, c.start, c.end)) {
      if (!record || (own && (record.state === 'COMMITTED' || record.state === 'ABORTED'))) compacted++;
      else wrong.push(`${at} compacted, its generation 0 ${record.state} by ${record.taskId}`);
    } else if (record?.state !== 'COMMITTED' && (await passedAborted(ports, root, c, record))) {
      // Passed by materialize: its WAL object, restored, is its one copy until a compaction covers it.
      const read = await readVerified(ports.objects, c.walKey, c.walSha256).then(
        () => 'exact',
        (error: Error) => error.name,
      );
      if (read === 'exact') passed++;
      else wrong.push(`${at} generation 0 ABORTED and its WAL object: ${read}`);
    } else if (record?.state !== 'COMMITTED' || !own)
      wrong.push(`${at} generation 0 ${record ? `${record.state} by ${record.taskId}` : 'absent'}`);
    else if (copies.index.get(c.end)?.gen0Key !== record.objectKey) wrong.push(`${at} not linked in its index entry`);
    else {
      const read = await readVerified(ports.objects, record.objectKey, c.walSha256).then(
        () => 'exact',
        (error: Error) => error.name,
      );
      if (read === 'exact') exact++;
      else wrong.push(`${at} its copy: ${read}`);
    }
  }
  check(
    'gen0-exact',
    wrong.length === 0,
    wrong.length
      ? wrong.join('; ')
      : `${exact} range(s) with generation 0 exact, ${compacted} compacted, ${passed} passed with generation 0 ABORTED`,
  );
  check(
    'gen0-mark',
    copies.gen0Mark === copies.head.committedEnd,
    `the generation-0 mark at ${copies.gen0Mark}, the committed end ${copies.head.committedEnd}`,
  );
}

/** Generation 0 of the range proven ABORTED by its attempt's task (no record, or that task's ABORTED one). */
async function passedAborted(
  ports: Ports,
  root: string,
  c: CommitRecord,
  record: Awaited<ReturnType<typeof loadRecord>>,
): Promise<boolean> {
  if (record && (record.state !== 'ABORTED' || record.taskId !== c.attemptId)) return false;
  const task = await ports.authority.get(generationKeys.task(root, c.attemptId));
  return task?.state === 'ABORTED';
}

/**
 * `compaction-exact`: every `compaction#` record's generation COMMITTED as named (the root's
 * head at it), its object one verified batch of exactly the acknowledged records of its
 * range, no offset covered twice; `compaction-mark`: the mark at the last one's end.
 */
export async function checkCompactions(
  ports: Ports,
  copies: LaneCopies,
  acked: readonly AckedBatch[],
  check: Check,
): Promise<void> {
  const wrong: string[] = [];
  const sorted = [...copies.compactions].sort((a, b) => a.start - b.start);
  for (const [i, k] of sorted.entries()) {
    const at = `[${k.start}, ${k.end})`;
    if (i > 0 && k.start < sorted[i - 1]!.end)
      wrong.push(`${at} overlaps [${sorted[i - 1]!.start}, ${sorted[i - 1]!.end})`);
    const head = await loadRootHead(ports, k.root);
    if (!k.committed || head?.generation !== k.generation || head.objectKey !== k.objectKey) {
      wrong.push(`${at} generation ${k.generation} not COMMITTED as named (head at ${head?.generation ?? 'none'})`);
      continue;
    }
    const texts = await readVerified(ports.objects, k.objectKey, k.sha256).then(
      (o) => decodeBatch(o.bytes).map((r) => Buffer.from(r).toString('utf8')),
      (error: Error) => error.name,
    );
    if (typeof texts === 'string') wrong.push(`${at} its object: ${texts}`);
    else if (JSON.stringify(texts) !== JSON.stringify(recordsAt(acked, k.start, k.end)))
      wrong.push(`${at} its object holds other records`);
  }
  check(
    'compaction-exact',
    sorted.length > 0 && wrong.length === 0,
    wrong.length
      ? wrong.join('; ')
      : sorted.length
        ? `${sorted.map((k) => `[${k.start}, ${k.end})`).join(', ')}: COMMITTED, bytes exactly their ranges'`
        : 'no compaction',
  );
  const last = Math.max(0, ...sorted.map((k) => k.end));
  check(
    'compaction-mark',
    copies.compactMark === last,
    `the compaction mark at ${copies.compactMark}, the last compaction's end ${last}`,
  );
}

/**
 * `tasks-cleaned`: the generation task of every range below the generation-0 mark and of
 * every compaction is gone (its task cleanup ran), or ABORTED (an abort is kept as evidence).
 */
export async function checkTasksCleaned(ports: Ports, lane: LaneRef, copies: LaneCopies, check: Check): Promise<void> {
  const tasks = [
    ...copies.commits
      .filter((c) => c.end <= copies.gen0Mark)
      .map((c) => ({
        at: `generation 0 of [${c.start}, ${c.end})`,
        key: generationKeys.task(rangeRootOf(lane, c.start), c.attemptId),
      })),
    ...copies.compactions.map((k) => ({
      at: `compaction [${k.start}, ${k.end})`,
      key: generationKeys.task(k.root, k.taskId),
    })),
  ];
  const left: string[] = [];
  for (const t of tasks) {
    const item = await ports.authority.get(t.key);
    if (item && item.state !== 'ABORTED') left.push(`${t.at}: ${String(item.state)}`);
  }
  check(
    'tasks-cleaned',
    left.length === 0,
    left.length ? `left: ${left.join('; ')}` : `${tasks.length} task(s) cleaned or aborted`,
  );
}

export type { InvariantCheck };
