import {
  laneKeys,
  WAL_ROOT,
  walBindingOf,
  walFate,
  type CommitRecord,
  type LaneHead,
  type LaneRef,
  type SpentMarker,
} from '../../domain/stream.js';
import { loadRecord } from '../../generation/load.js';
import type { Ports } from '../../ports/index.js';
import { spentMarker } from '../append/attempt-evidence.js';
import { compactionCovering } from '../compaction/model.js';
import { verifiesNow, type CompactionCheck } from '../compaction/superseded.js';
import { commitContaining } from '../lane-store.js';
import { compactedFate, isCompactedKey } from './compacted.js';
import { graceDeadlineOf, STREAM_GENERATIONS_ROOT, type Fate } from './model.js';

/**
 * The fate of one physical object, from the AUTHORITY and the object's own binding
 * (commit records, spent markers, generation records, head.trimOffset), never from
 * index entries:
 * - LIVE: a commit record at/above the trim names it, or a committed generation of a range
 *   at/above the trim is it;
 * - TRIMMED: it is the WAL object or committed generation of a range wholly below the trim;
 * - DEAD: provably never committed — a WAL object fenced, passed by the committed end or
 *   spent (walObjectFate), a generation whose slot is ABORTED or committed by another task;
 * - SUPERSEDED: a LIVE range's WAL object or generation 0 wholly covered by a COMMITTED
 *   compaction whose object verifies (collected after the orphan grace, counted from the
 *   compaction's commit);
 * - a compaction's own output: see compacted.ts (LIVE, TRIMMED, DEAD or MAY_COMMIT);
 * - MAY_COMMIT: anything uncertain (an append that may still be in flight, a PREPARED
 *   generation, a key this scanner does not understand). Uncertain is live.
 */
export interface FateContext {
  ports: Ports;
  lane: LaneRef;
  /** Loaded at the start of the page: a stale head only makes the answer more conservative. */
  head: LaneHead;
  /**
   * What several objects of one page ask alike, read once per page: an attempt's spent
   * marker (all its WAL objects), a compaction's check (every copy it covers: reading and
   * verifying its object per copy was a whole-object GET per WAL object of the range).
   */
  shared: Map<string, Promise<unknown>>;
  /**
   * How a covering compaction is checked (superseded.ts): `bytes` reads and verifies its
   * object (the scan and the drain), `identity` checks its record, quarantine and the
   * object's HEAD (the re-check just before a DELETE: one per object, never a whole GET).
   */
  verify: CompactionCheck;
}

export function fateContext(
  ports: Ports,
  lane: LaneRef,
  head: LaneHead,
  verify: CompactionCheck = 'bytes',
): FateContext {
  return { ports, lane, head, shared: new Map(), verify };
}

/** `load()` once per page for `key`; a later object of the page gets the same answer (as fresh as the head the page loaded). */
function shared<T>(ctx: FateContext, key: string, load: () => Promise<T>): Promise<T> {
  if (!ctx.shared.has(key)) ctx.shared.set(key, load());
  return ctx.shared.get(key) as Promise<T>;
}

/** A fate, where its grace starts when that is not the root's first sighting, and whether the object is a compaction's output. */
export interface Verdict {
  fate: Fate;
  /** SUPERSEDED: the compaction's commit (`compaction#`.compactedAt); records without it fall back to first seen. */
  graceFrom?: string;
  compacted?: boolean;
}

export async function judge(ctx: FateContext, key: string): Promise<Verdict> {
  const walPrefix = `${WAL_ROOT}${ctx.lane.stream}/${ctx.lane.partition}/`;
  const genPrefix = `${STREAM_GENERATIONS_ROOT}${ctx.lane.stream}/p${ctx.lane.partition}/`;
  if (key.startsWith(walPrefix)) return walObjectFate(ctx, key, key.slice(walPrefix.length));
  if (!key.startsWith(genPrefix)) return { fate: 'MAY_COMMIT' };
  const rest = key.slice(genPrefix.length);
  if (isCompactedKey(rest)) return { fate: await compactedFate(ctx, key, rest), compacted: true };
  return generationFate(ctx, key, rest);
}

export async function fateOf(ctx: FateContext, key: string): Promise<Fate> {
  return (await judge(ctx, key)).fate;
}

/** When the orphan grace of an object with this verdict ends, its root first seen at `firstSeen`. */
export function graceDeadline(verdict: Verdict, firstSeen: string, graceSeconds: number): Date {
  const from =
    verdict.fate === 'SUPERSEDED' && verdict.graceFrom && Number.isFinite(Date.parse(verdict.graceFrom))
      ? verdict.graceFrom
      : firstSeen;
  return graceDeadlineOf(from, graceSeconds);
}

/**
 * A WAL object: its metadata binds it to (attempt, SHA-256, fence epoch, start); the commit
 * record at the end offset it is bound to, the head and the attempt's spent marker decide
 * (`walFate`, src/domain/stream-wal.ts): named by that commit record → LIVE or TRIMMED;
 * fenced, or bound to a start the committed end has passed → DEAD; spent (the marker's
 * head bump makes any in-flight CAS of the attempt fail, and every retry reads the
 * marker) → DEAD; anything else may still commit → MAY_COMMIT. An object under an
 * attempt's prefix whose metadata names another attempt, or none, is MAY_COMMIT: never
 * delete what cannot be judged.
 */
async function walObjectFate(ctx: FateContext, key: string, rest: string): Promise<Verdict> {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/([0-9a-f]{64})\.wal$/.exec(rest);
  if (!match) return { fate: 'MAY_COMMIT' };
  const [, attemptId = '', sha256] = match;
  const object = await ctx.ports.objects.head(key);
  const binding = object ? walBindingOf(object.metadata) : undefined;
  if (!object || !binding || binding.attemptId !== attemptId || binding.walSha256 !== sha256)
    return { fate: 'MAY_COMMIT' };
  const commit = (await ctx.ports.authority.get(
    laneKeys.commit(ctx.lane, binding.start + binding.recordCount),
  )) as unknown as CommitRecord | undefined;
  const fate = walFate(object.metadata, ctx.head, commit);
  if (fate === 'COMMITTED')
    return commit!.end <= ctx.head.trimOffset ? { fate: 'TRIMMED' } : liveOrSuperseded(ctx, commit!.start, commit!.end);
  if (fate === 'DEAD') return { fate: 'DEAD' };
  const marker = await shared<SpentMarker | undefined>(ctx, `spent#${attemptId}`, () =>
    spentMarker(ctx.ports, ctx.lane, attemptId),
  );
  return { fate: marker ? 'DEAD' : 'MAY_COMMIT' };
}

async function generationFate(ctx: FateContext, key: string, rest: string): Promise<Verdict> {
  const match = /^r(\d{16})\/g(\d{10})\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.bin$/.exec(rest);
  if (!match) return { fate: 'MAY_COMMIT' };
  const start = Number(match[1]);
  const root = `stream/${ctx.lane.stream}/p${ctx.lane.partition}/r${match[1]}`;
  const record = await loadRecord(ctx.ports, root, Number(match[2]));
  if (!record) return { fate: 'MAY_COMMIT' };
  if (record.objectKey !== key) return { fate: record.state === 'COMMITTED' ? 'DEAD' : 'MAY_COMMIT' };
  if (record.state === 'ABORTED') return { fate: 'DEAD' };
  if (record.state !== 'COMMITTED') return { fate: 'MAY_COMMIT' };
  const commit = await commitContaining(ctx.ports, ctx.lane, start);
  if (commit?.start !== start) return { fate: 'LIVE' };
  return commit.end <= ctx.head.trimOffset ? { fate: 'TRIMMED' } : liveOrSuperseded(ctx, commit.start, commit.end);
}

/**
 * A live range's copy wholly covered by a committed compaction that verifies is SUPERSEDED
 * (src/stream/compaction/superseded.ts); its grace runs from the compaction's commit.
 */
async function liveOrSuperseded(ctx: FateContext, start: number, end: number): Promise<Verdict> {
  const c = await compactionCovering((pk, p, o) => ctx.ports.authority.query(pk, p, o), ctx.lane, start, end);
  if (
    !c ||
    !(await shared(ctx, `compaction#${c.objectKey}#${c.sha256}`, () => verifiesNow(ctx.ports, ctx.lane, c, ctx.verify)))
  )
    return { fate: 'LIVE' };
  return typeof c.compactedAt === 'string' ? { fate: 'SUPERSEDED', graceFrom: c.compactedAt } : { fate: 'SUPERSEDED' };
}

/** What may be marked now: TRIMMED at once, DEAD and SUPERSEDED once the orphan grace has run out. */
export function eligible(fate: Fate, now: Date, graceDeadline: Date): boolean {
  return fate === 'TRIMMED' || ((fate === 'DEAD' || fate === 'SUPERSEDED') && now.getTime() >= graceDeadline.getTime());
}
