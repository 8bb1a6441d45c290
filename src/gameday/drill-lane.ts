import { randomBytes } from 'node:crypto';
import { CutpointError } from '../domain/errors.js';
import type { Fence } from '../domain/fence.js';
import { laneKeys, type AppendOutcome, type CommitRecord, type LaneRef } from '../domain/stream.js';
import type { DrillRun } from '../ports/gameday-driver.js';
import { STREAM_CUT_POINTS } from '../stream/cut-points.js';
import { LEASE_TTL_MS, pinForRead } from '../stream/gc/leases.js';
import { indexEntryOf } from '../stream/lane-store.js';
import type { DrillWorld } from './drill-world.js';
import { answerOf } from './stream-invariants.js';
import { ownedLane } from './stream-drill.js';

/**
 * A lane of a maintenance drill's own, put into the state its flow acts on the way a lane
 * gets there: created as `stream create` does, taken over and appended to through the flows,
 * an attempt proven not committed (its WAL bytes an orphan), the lane's own maintenance
 * flows run, a reader that crashed holding a lease, a copy gone bad as bit rot would. Every
 * flow it runs goes to the drill's trail; a setup step that does not end as it must stops
 * the drill (Gameday.SetupFailed), since a drill on another state would check nothing.
 */

/** One acknowledged batch: where it committed and what it holds. */
export interface AckedBatch {
  attemptId: string;
  start: number;
  end: number;
  records: string[];
}

export class SetupFailedError extends CutpointError {
  constructor(lane: LaneRef, what: string, run: DrillRun) {
    super(
      'Gameday.SetupFailed',
      'gameday.setup_failed',
      `the drill's lane ${lane.stream}: ${what} ended ${run.status}${run.error ? ` ${run.error}` : ''} → ${answerOf(run)}`,
    );
  }
}

export class DrillLane {
  readonly trail: string[] = [];
  readonly acked: AckedBatch[] = [];
  private runs = 0;
  private batches = 0;

  private constructor(
    readonly world: DrillWorld,
    readonly id: string,
    readonly ref: LaneRef,
    private readonly fence: Fence,
  ) {}

  /** A fresh lane with an owner session and `batches` acknowledged batches of two records each. */
  static async open(world: DrillWorld, batches: number): Promise<DrillLane> {
    const id = randomBytes(6).toString('hex');
    const ref: LaneRef = { stream: `gameday-${id}`, partition: 0 };
    const lane = new DrillLane(world, id, ref, await ownedLane(world.driver, world.ports, ref, id));
    for (let i = 0; i < batches; i++) await lane.appendBatch();
    return lane;
  }

  /** Runs one flow under an execution name of the drill's; its end goes to the trail. */
  async run(what: string, flow: string, input: unknown): Promise<DrillRun> {
    const result = await this.world.driver.runFlow(flow, `${flow}-${this.id}-${this.runs++}`, input);
    const outcome = result.status === 'SUCCEEDED' ? summaryOf(flow, result.output) : undefined;
    this.trail.push(
      `${what} ${result.status}${result.error ? ` ${result.error}` : ''}${outcome ? ` → ${outcome}` : ''}`,
    );
    this.world.progress(`  ${this.trail.at(-1)}`);
    return result;
  }

  /** A setup step: it must succeed. */
  async setup(what: string, flow: string, input: unknown): Promise<DrillRun> {
    const result = await this.run(what, flow, input);
    if (result.status !== 'SUCCEEDED') throw new SetupFailedError(this.ref, what, result);
    return result;
  }

  /** Appends the next batch (two records) under a fresh attempt; it must be acknowledged. */
  async appendBatch(): Promise<AckedBatch> {
    const attemptId = `b${this.batches++}`;
    const records = [0, 1].map((i) => `game day ${this.id} ${attemptId} record ${i}`);
    const run = await this.append(attemptId, records);
    const outcome = run.output as AppendOutcome | undefined;
    if (answerOf(run) !== 'KNOWN_COMMITTED' || outcome?.start === undefined || outcome.end === undefined)
      throw new SetupFailedError(this.ref, `append ${attemptId}`, run);
    const batch = { attemptId, start: outcome.start, end: outcome.end, records };
    this.acked.push(batch);
    return batch;
  }

  append(attemptId: string, records: readonly string[]): Promise<DrillRun> {
    const encoded = records.map((r) => Buffer.from(r).toString('base64'));
    return this.run(`append ${attemptId}`, 'stream-append', {
      ...this.ref,
      attemptId,
      session: this.fence,
      records: encoded,
    });
  }

  /**
   * WAL bytes of an attempt proven not committed: its head CAS refused (a definite failure
   * armed for it alone), the attempt spent (resolved when its answer left it open). GC
   * judges the bytes DEAD: an orphan, collected after the orphan grace.
   */
  async orphan(): Promise<void> {
    const attemptId = `o${this.batches}`;
    const refused = await this.world.driver.arm(`${STREAM_CUT_POINTS.headCas}:fail*`);
    let run: DrillRun;
    try {
      run = await this.append(attemptId, [`game day ${this.id} orphan`]);
    } finally {
      await refused.disarm();
    }
    if (answerOf(run) !== 'KNOWN_NOT_COMMITTED')
      run = await this.run(`resolve ${attemptId}`, 'stream-resolve-append', { ...this.ref, attemptId });
    if (answerOf(run) !== 'KNOWN_NOT_COMMITTED') throw new SetupFailedError(this.ref, `orphan ${attemptId}`, run);
  }

  /**
   * A reader that pinned the lane's last range long ago and crashed: its lease, taken through
   * the read path's own pin on a clock that ran one lease and a minute back, expired long
   * since. It holds nothing off; GC retires it (stream.gc.retire).
   */
  async crashedReader(): Promise<void> {
    const { ports } = this.world;
    const longAgo = { ...ports, clock: { now: () => new Date(Date.now() - LEASE_TTL_MS - 60_000) } };
    const last = await this.commitOf(this.acked.at(-1)!);
    const pin = await pinForRead(longAgo, this.ref, indexEntryOf(last), last.start);
    this.trail.push(
      `a reader pinned [${last.start}, ${last.end}) and crashed: ${pin.leases.length} lease(s) left to expire`,
    );
    if (pin.leases.length === 0)
      throw new SetupFailedError(this.ref, 'the crashed reader', { status: 'NO_LEASE', output: pin });
  }

  /**
   * The WAL object of `batch` gone bad, as bit rot would (other bytes under the key, its
   * metadata unchanged); `restore` puts the exact bytes back, as restoring the object's
   * earlier version does (docs/runbook/stream/QUARANTINED.md).
   */
  async rot(batch: AckedBatch): Promise<{ key: string; restore: () => Promise<void> }> {
    const { objects } = this.world.ports;
    const key = (await this.commitOf(batch)).walKey;
    const good = await objects.get(key);
    if (!good) throw new SetupFailedError(this.ref, `the WAL object ${key}`, { status: 'MISSING' });
    await objects.delete('gameday.wal.rot', key);
    await objects.put('gameday.wal.rot', key, new TextEncoder().encode('rot'), good.metadata);
    this.trail.push(`the WAL object of [${batch.start}, ${batch.end}) went bad`);
    return {
      key,
      restore: async () => {
        await objects.delete('gameday.wal.restore', key);
        await objects.put('gameday.wal.restore', key, good.bytes, good.metadata);
        this.trail.push(`its exact bytes restored under ${key}`);
      },
    };
  }

  async commitOf(batch: Pick<AckedBatch, 'end'>): Promise<CommitRecord> {
    const commit = await this.world.ports.authority.get(laneKeys.commit(this.ref, batch.end));
    if (!commit) throw new SetupFailedError(this.ref, `the commit record at ${batch.end}`, { status: 'MISSING' });
    return commit as unknown as CommitRecord;
  }
}

/** What a run's output says, in a few words for the trail. */
function summaryOf(flow: string, output: unknown): string | undefined {
  const o = (output ?? {}) as Record<string, unknown>;
  switch (flow) {
    case 'stream-append':
    case 'stream-resolve-append':
      return (o.status as string | undefined) ?? 'NO_OUTCOME';
    case 'stream-trim':
      return `trim ${String(o.trimOffset)}`;
    case 'stream-materialize':
      return `${(o.materialized as unknown[] | undefined)?.length ?? 0} range(s), mark ${String(o.next)}`;
    case 'stream-compact': {
      const c = o.compacted as { start: number; end: number } | undefined;
      return c ? `[${c.start}, ${c.end}) compacted` : `nothing to compact, mark ${String(o.next)}`;
    }
    case 'stream-gc': {
      const totals = (o.totals ?? {}) as Record<string, unknown>;
      return `${String(totals.deleted)} deleted${o.done === false ? ', to be continued' : ''}`;
    }
    case 'stream-maintain':
      return Array.isArray(output) ? output.map((l: { status?: string }) => l.status).join(', ') : undefined;
    default:
      return undefined;
  }
}
