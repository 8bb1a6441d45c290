import { setTimeout } from 'node:timers/promises';
import { expect } from 'vitest';
import { activeSession } from '../../src/cli/session-store.js';
import { generationKeys } from '../../src/domain/generation.js';
import { laneKeys, type CommitRecord, type IndexEntry, type LaneRef } from '../../src/domain/stream.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { compactLane, type CompactLaneResult } from '../../src/stream/compaction/compact-lane.js';
import { compactionRootOf } from '../../src/stream/compaction/model.js';
import { LEASE_TTL_MS, pinForRead } from '../../src/stream/gc/leases.js';
import { indexEntryOf } from '../../src/stream/lane-store.js';
import type { CliRun, CliRuntime, RuntimeCli } from './cli-runtime.js';
import { interceptPorts } from './intercept-ports.js';
import { replaceObject } from './replace-object.js';

/** One lane (partition 0 of a stream of its own) and its CLI arguments: `stream <verb> <stream> --partition 0 …`. */
export interface Lane {
  stream: string;
  ref: LaneRef;
  args(verb: string, ...extra: string[]): string[];
}

/**
 * Lanes in the states stream commands act on, each on a stream of its own, built the way
 * they happen: through the CLI (`runtime`'s in-process `cli`), faults armed where a state
 * needs one; a copy gone bad by replacing its bytes, as bit rot would.
 */
export class StreamLanes {
  private count = 0;

  constructor(
    private readonly runtime: () => CliRuntime,
    private readonly cli: RuntimeCli,
  ) {}

  /** A setup command, run without faults: it must succeed. */
  async ok(argv: string[], stdin = ''): Promise<CliRun> {
    const r = await this.cli(argv, '', stdin);
    expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
    return r;
  }

  /** A fresh stream name. */
  name(): string {
    return `l${++this.count}`;
  }

  /** A created lane, not taken over. */
  async created(): Promise<Lane> {
    const stream = this.name();
    await this.ok(['stream', 'create', stream, '--partitions', '1']);
    return {
      stream,
      ref: { stream, partition: 0 },
      args: (verb, ...extra) => ['stream', verb, stream, '--partition', '0', ...extra],
    };
  }

  /** A lane this CLI owns, with `batches` committed batches of two records each (attempts b0, b1, …). */
  async owned(batches = 0): Promise<Lane> {
    const lane = await this.created();
    await this.ok(lane.args('takeover'));
    for (let i = 0; i < batches; i++) await this.ok(lane.args('append', '--attempt', `b${i}`), `r${i}a\nr${i}b\n`);
    return lane;
  }

  /** A lane of one batch, suspended by attempt `a1`, whose head CAS outcome stayed unknown (MAY_HAVE_COMMITTED). */
  async suspended(): Promise<Lane> {
    const lane = await this.owned(1);
    const r = await this.cli(lane.args('append', '--attempt', 'a1'), 'stream.append.head-cas:lose-request*', 'x\n');
    expect(r.stderr).toMatch(/^stream\.may_have_committed: /m);
    return lane;
  }

  /** A lane ready for GC and compaction: four batches, trimmed below the second, and an orphan (an attempt proven not committed). */
  async collectable(): Promise<Lane> {
    const lane = await this.owned(4);
    const failed = await this.cli(lane.args('append', '--attempt', 'o1'), 'stream.append.head-cas:fail*', 'o\n');
    expect(failed.code, failed.stderr).toBe(1);
    await this.ok(lane.args('resolve', '--attempt', 'o1'));
    await this.ok(lane.args('trim', '--to', '2'));
    await this.crashedReader(lane);
    return lane;
  }

  /** A reader that pinned the lane's last range long ago and crashed: its lease expired long since (GC retires it). */
  async crashedReader(lane: Lane): Promise<void> {
    const ports = this.runtime().ports;
    const longAgo = { ...ports, clock: { now: () => new Date(Date.now() - LEASE_TTL_MS - 60_000) } };
    const last = ((await ports.authority.query(laneKeys.pk(lane.ref), 'commit#')) as unknown as CommitRecord[]).at(-1)!;
    expect((await pinForRead(longAgo, lane.ref, indexEntryOf(last), last.start)).leases.length).toBeGreaterThan(0);
  }

  /** A lane of one batch whose WAL object went bad. */
  async badWal(): Promise<Lane> {
    const lane = await this.owned(1);
    await this.corrupt((await this.commitAt(lane, 2)).walKey);
    return lane;
  }

  /** A lane of two batches, materialized, whose first range's generation 0 copy went bad; `restore` puts its bytes back. */
  async badGen0(): Promise<{ lane: Lane; key: string; restore(): Promise<void> }> {
    const lane = await this.owned(2);
    await this.ok(lane.args('materialize'));
    const { objects, authority } = this.runtime().ports;
    const key = ((await authority.get(laneKeys.index(lane.ref, 2))) as unknown as IndexEntry).gen0Key!;
    const good = (await objects.get(key))!;
    await this.corrupt(key);
    return { lane, key, restore: async () => void (await replaceObject(objects, key, good.bytes, good.metadata)) };
  }

  /** The stream-append flow's input for one batch, under the session this CLI holds for the lane. */
  async appendInput(lane: Lane, attemptId: string, records: string[]): Promise<unknown> {
    return {
      ...lane.ref,
      attemptId,
      session: await activeSession(lane.ref, 'local'),
      records: records.map((r) => Buffer.from(r).toString('base64')),
    };
  }

  /**
   * Another compaction of the lane's first two ranges (the scheduled maintenance's, say),
   * through the library: `planned` once it has planned its run and is about to register its
   * task, which it does only once a compaction started after it has registered its own — so
   * both planned with no task there, and generation 0 goes to whichever prepares first.
   */
  racingCompaction(lane: Lane): { planned: Promise<void>; done: Promise<CompactLaneResult> } {
    const ports = this.runtime().ports;
    let planned!: () => void;
    let held = false;
    const racing = interceptPorts(ports, {
      authority: {
        put: async (cut, item, expect) => {
          if (cut === GENERATION_CUT_POINTS.taskPut && !held) {
            held = true;
            planned();
            for (let i = 0; (await this.compactionTasks(lane)).length === 0; i++) {
              if (i > 600) throw new Error('test bug: the other compaction never registered its task');
              await setTimeout(25);
            }
          }
          return ports.authority.put(cut, item, expect);
        },
      },
    });
    return {
      planned: new Promise((resolve) => (planned = resolve)),
      done: compactLane({ ...lane.ref, maxRanges: 2 }, racing),
    };
  }

  /** The generation tasks of the lane's compactions from offset 0. */
  async compactionTasks(lane: Lane): Promise<Array<Record<string, unknown>>> {
    return this.runtime().ports.authority.query(generationKeys.task(compactionRootOf(lane.ref, 0), '').pk, 'task#');
  }

  private async commitAt(lane: Lane, end: number): Promise<CommitRecord> {
    return (await this.runtime().ports.authority.get(laneKeys.commit(lane.ref, end))) as unknown as CommitRecord;
  }

  /** Replaces a stored copy's bytes (bit rot): its key, SHA-256 and metadata unchanged. */
  private async corrupt(key: string): Promise<void> {
    const { objects } = this.runtime().ports;
    const good = (await objects.get(key))!;
    expect(await replaceObject(objects, key, new TextEncoder().encode('rot'), good.metadata)).toBe('APPLIED');
  }
}
