import { laneKeys, WAL_ROOT, type AppendIntent, type CommitRecord, type LaneHead, type LaneRef } from '../../domain/stream.js';
import { loadRecord } from '../../generation/load.js';
import type { Ports } from '../../ports/index.js';
import { commitContaining, loadIntent } from '../lane-store.js';
import type { Fate } from './model.js';

/**
 * The fate of one physical object, from the AUTHORITY alone (commit records, intents,
 * generation records, head.trimOffset), never from index entries:
 * - LIVE: a commit record at/above the trim names it, or a committed generation of a range
 *   at/above the trim is it;
 * - TRIMMED: it is the WAL object or committed generation of a range wholly below the trim;
 * - DEAD: provably never committed — its attempt's intent is final (ABORTED, or names
 *   another key), its generation slot is ABORTED or committed by another task, or (helper
 *   B's metadata) it carries a fence epoch below the head's and no commit names it;
 * - MAY_COMMIT: anything uncertain (a PENDING intent, no intent yet, a PREPARED generation,
 *   a key this scanner does not understand). Uncertain is live.
 * This is the one function a swap to B's `walFate` replaces.
 */
export interface FateContext {
  ports: Ports;
  lane: LaneRef;
  /** Loaded at the start of the page: a stale head only makes the answer more conservative. */
  head: LaneHead;
  intents: Map<string, Promise<AppendIntent | undefined>>;
}

export function fateContext(ports: Ports, lane: LaneRef, head: LaneHead): FateContext {
  return { ports, lane, head, intents: new Map() };
}

export async function fateOf(ctx: FateContext, key: string): Promise<Fate> {
  const walPrefix = `${WAL_ROOT}${ctx.lane.stream}/${ctx.lane.partition}/`;
  const genPrefix = `generations/stream/${ctx.lane.stream}/p${ctx.lane.partition}/`;
  if (key.startsWith(walPrefix)) return walFate(ctx, key, key.slice(walPrefix.length));
  if (key.startsWith(genPrefix)) return generationFate(ctx, key, key.slice(genPrefix.length));
  return 'MAY_COMMIT';
}

async function walFate(ctx: FateContext, key: string, rest: string): Promise<Fate> {
  const match = /^([A-Za-z0-9][A-Za-z0-9._-]{0,127})\/([0-9a-f]{64})\.wal$/.exec(rest);
  if (!match) return 'MAY_COMMIT';
  const [, attemptId = '', sha256] = match;
  if (!ctx.intents.has(attemptId)) ctx.intents.set(attemptId, loadIntent(ctx.ports, ctx.lane, attemptId));
  const intent = await ctx.intents.get(attemptId);
  if (intent?.state === 'COMMITTED' && intent.walKey === key && intent.end !== undefined) {
    const commit = (await ctx.ports.authority.get(laneKeys.commit(ctx.lane, intent.end))) as unknown as CommitRecord | undefined;
    if (commit?.walKey === key && commit.walSha256 === sha256) return commit.end <= ctx.head.trimOffset ? 'TRIMMED' : 'LIVE';
    return 'MAY_COMMIT';
  }
  // A final intent names exactly one WAL key (its conditional create): any other key under
  // the attempt can never commit; an ABORTED intent's own key cannot either.
  if (intent && intent.state !== 'PENDING' && intent.walKey !== key) return 'DEAD';
  if (intent?.state === 'ABORTED') return 'DEAD';
  if (intent) return 'MAY_COMMIT';
  return fencedWithoutIntent(ctx, key);
}

/**
 * No intent (helper B's lean append records none): the commit record at the offset the
 * object's metadata binds it to (start + record-count) decides LIVE/TRIMMED when it names
 * it; otherwise DEAD only when its fence epoch is below the head's (a takeover fenced it).
 * Without that metadata: uncertain, live.
 */
async function fencedWithoutIntent(ctx: FateContext, key: string): Promise<Fate> {
  const epoch = ctx.head.fence?.epoch;
  if (epoch === undefined) return 'MAY_COMMIT';
  const head = await ctx.ports.objects.head(key);
  const fenceEpoch = Number(head?.metadata['fence-epoch']);
  const start = Number(head?.metadata.start);
  const count = Number(head?.metadata['record-count']);
  if (!head || !Number.isSafeInteger(fenceEpoch) || !Number.isSafeInteger(start) || !Number.isSafeInteger(count)) return 'MAY_COMMIT';
  const commit = (await ctx.ports.authority.get(laneKeys.commit(ctx.lane, start + count))) as unknown as CommitRecord | undefined;
  if (commit?.walKey === key) return commit.end <= ctx.head.trimOffset ? 'TRIMMED' : 'LIVE';
  return fenceEpoch < epoch ? 'DEAD' : 'MAY_COMMIT';
}

async function generationFate(ctx: FateContext, key: string, rest: string): Promise<Fate> {
  const match = /^r(\d{16})\/g(\d{10})\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.bin$/.exec(rest);
  if (!match) return 'MAY_COMMIT';
  const start = Number(match[1]);
  const root = `stream/${ctx.lane.stream}/p${ctx.lane.partition}/r${match[1]}`;
  const record = await loadRecord(ctx.ports, root, Number(match[2]));
  if (!record) return 'MAY_COMMIT';
  if (record.objectKey !== key) return record.state === 'COMMITTED' ? 'DEAD' : 'MAY_COMMIT';
  if (record.state === 'ABORTED') return 'DEAD';
  if (record.state !== 'COMMITTED') return 'MAY_COMMIT';
  const commit = await commitContaining(ctx.ports, ctx.lane, start);
  if (commit?.start !== start) return 'LIVE';
  return commit.end <= ctx.head.trimOffset ? 'TRIMMED' : 'LIVE';
}

/** What may be marked now: TRIMMED at once, DEAD once its grace has run out. */
export function eligible(fate: Fate, now: Date, graceDeadline: Date): boolean {
  return fate === 'TRIMMED' || (fate === 'DEAD' && now.getTime() >= graceDeadline.getTime());
}
