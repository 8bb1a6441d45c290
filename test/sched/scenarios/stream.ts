import { ArmedFaultInjector, FaultSwitch } from '../../../src/adapters/fault-injector.js';
import type { Ports } from '../../../src/ports/index.js';
import { appendBatch } from '../../../src/stream/append-batch.js';
import { materializeGen0Batch } from '../../../src/stream/append/gen0-batch.js';
import { createStream } from '../../../src/stream/create-stream.js';
import { STREAM_CUT_POINTS } from '../../../src/stream/cut-points.js';
import { takeoverLane } from '../../../src/stream/takeover.js';
import { countingPorts } from '../../faults/stream-gc-world.js';
import { OpHistory } from '../../support/sched/op-history.js';
import { leaseGuarded } from '../../support/stream-history/lease-guard.js';
import type { Scenario } from '../../support/sched/scenario.js';
import { openStores, type SchedStores } from '../../support/sched/stores.js';
import { encode, History, settle } from '../../support/stream-history/model.js';
import {
  appendBatchActor,
  completed,
  appendFlowActor,
  gcActor,
  operatorResolveActor,
  resolveFlowActor,
  takeoverActor,
  trimActor,
  trimThenGcActor,
  type StreamRun,
} from './stream-actors.js';
import { readerActor } from './stream-reader-actor.js';
import { checkStream, settleStream } from './stream-check.js';

/**
 * The stream log (docs/rules.md#append-outcomes) under the scheduler. Each schedule has
 * its own lane with one to three batches already committed by writer 0, then a seeded mix
 * of actors (stream-actors.ts):
 * - writer 0's append through the stream-append flow, its Task invocations zombies or
 *   duplicates (a zombie WAL PUT or head CAS landing after a takeover or after a resolve
 *   decided the attempt), sometimes a duplicate StartExecution of the same attempt and
 *   records, sometimes a second append of writer 0 through the library (appendBatch);
 * - an unknown outcome's automatic resolve flow, and an operator's resolve of the same
 *   attempt racing it (or the append itself);
 * - a takeover by writer 1 (fencing writer 0), then writer 1's own append;
 * - a trim into the committed prefix, the stream-gc flow after a clock move short of or
 *   past the grace, and a reader holding its leases across them; in a quarter of the
 *   schedules instead a reader whose first GET stalls, holding its pin on a prefix batch,
 *   while an operator trims past that batch and then runs GC: GC marks the trimmed copies
 *   at once (a trimmed copy has no grace), and when the pin came first its drain finds them
 *   leased and must leave them (the lease guard checks every delete: lease-guard.ts).
 * In a quarter of the schedules a partition loses the next three head CAS requests, so the
 * lane is suspended and the attempt resolved. Settle resolves every attempt still open (faults off); the checker (stream-check.ts)
 * then demands the final state: see there.
 */

const GRACE_SECONDS = 120;

interface World {
  stores: SchedStores;
}

export const streamScenario: Scenario<World> = {
  name: 'stream',
  actors: [
    'zombie',
    'duplicate-invocation',
    'duplicate-start',
    'operator-resolve',
    'operator-race',
    'partition',
    'takeover',
    'fenced-writer',
    'append-after-resolve',
    'reader-gc',
    'stalled-reader',
    'drain-meets-lease',
  ],
  async open(endpoints) {
    return { stores: await openStores(endpoints, 'stream') };
  },
  async close() {},
  async plan(world, s) {
    const { ports, config, clock } = world.stores;
    const lane = { stream: `sched-${s.seed}`, partition: 0 };
    const deletes = new Map<string, number>();
    const retiredLives = new Map<string, number>();
    const broken: string[] = [];
    // GC's deletes, each checked against the leases held on its object (readers' pins: lease-guard.ts).
    const gcPorts: Ports = leaseGuarded(countingPorts(ports, clock, deletes, retiredLives), lane, broken);
    const switchOf = (p: Ports) => ({ ports: p, faults: new FaultSwitch() });
    const h = new History(s.seed, lane, config, switchOf(gcPorts), 2, {
      clock,
      deletes,
      retiredLives,
      reader: switchOf(ports),
      graceSeconds: GRACE_SECONDS,
    });
    const run: StreamRun = {
      s,
      h,
      lane,
      ports,
      gcPorts,
      takeovers: [],
      graceSeconds: GRACE_SECONDS,
      operatorPending: false,
      finalGc: false,
      broken,
      ops: new OpHistory(),
      gcEnded: false,
    };

    // Before any actor runs (the scheduler is not live yet): the lane, writer 0, a committed prefix.
    await createStream({ stream: lane.stream, partitions: 1 }, ports);
    const owner = { ...lane, owner: 'writer-0', session: `sched-${s.seed}-writer-0-session` };
    const first = await takeoverLane(owner, ports);
    const w0 = { owner: owner.owner, session: owner.session, epoch: first.epoch };
    h.writers.push({ index: 0, fence: w0, ports, faults: new FaultSwitch() });
    h.owner = 0;
    run.takeovers.push({ epoch: first.epoch, committedEnd: 0 });
    const ends = [0]; // the prefix's batch boundaries
    for (let i = s.rng.int(1, 3); i > 0; i--) {
      const a = h.newAttempt(0);
      const op = run.ops.invoke('prefix', 'append', { attempt: a.id, records: a.records });
      const outcome = await appendBatch(
        { ...lane, attemptId: a.id, session: w0, records: a.records.map(encode) },
        ports,
      );
      completed(op, outcome);
      settle(h, a, outcome, 'prefix');
      if (h.log.size > ends.at(-1)!) ends.push(h.log.size);
    }
    const prefixEnd = h.log.size;
    h.head.committedEnd = prefixEnd;
    if (s.rng.chance(0.3)) await materializeGen0Batch({ ...lane }, ports);

    if (s.rng.chance(0.25)) {
      // A partition: the next head CAS requests are lost, as many as one CommitHead re-issues
      // before it gives up (MAY_HAVE_COMMITTED: the lane is suspended, the attempt resolved).
      const cutPoint = STREAM_CUT_POINTS.headCas;
      const partition = new ArmedFaultInjector([{ cutPoint, kind: 'lose-request', times: 3, fromHit: 1, delayMs: 0 }]);
      world.stores.use({
        at: (at, effect) => s.faults.at(at, at === cutPoint ? () => partition.at(at, effect) : effect),
      });
      s.count('partition', 'the next 3 head CAS requests are lost');
    }
    const a0 = h.newAttempt(0);
    appendFlowActor(run, a0, w0, `append:${a0.id}`);
    if (s.rng.chance(0.4)) {
      s.count('duplicate-start', `a duplicate StartExecution of ${a0.id}`);
      appendFlowActor(run, a0, w0, `append:${a0.id}:dup-start`);
    }
    if (s.rng.chance(0.35)) {
      const a1 = h.newAttempt(0);
      appendBatchActor(run, a1, w0, `append:${a1.id}`);
    }
    if (s.rng.chance(0.4)) {
      s.count('operator-resolve', `an operator resolves ${a0.id}, racing its append and its resolve flow`);
      operatorResolveActor(run, a0);
      // The client that timed out on its append starts the resolve flow itself.
      if (s.rng.chance(0.5)) resolveFlowActor(run, a0, `client-resolve:${a0.id}`);
    }
    if (s.rng.chance(0.5)) takeoverActor(run, 1, s.rng.chance(0.6) ? h.newAttempt(1) : undefined);
    trimGcAndReader(run, ends);
    run.finalGc = s.rng.chance(0.25);
    return { settle: () => settleStream(run), check: () => checkStream(run) };
  },
};

/**
 * A schedule's trim, GC and reader: each maybe, or (a quarter of the schedules) the stalled
 * reader, its pin on a prefix batch held while an operator trims past it and runs GC.
 */
function trimGcAndReader(run: StreamRun, ends: readonly number[]): void {
  const { s } = run;
  const prefixEnd = ends.at(-1)!;
  if (ends.length > 1 && s.rng.chance(0.25)) {
    // A reader stalled between its pin and its GET on a prefix batch (a slow store), an
    // operator's trim past that batch, then GC: its drain finds the marked copies leased.
    const batch = s.rng.int(0, ends.length - 2);
    run.trimTo = s.rng.int(ends[batch + 1]!, prefixEnd);
    s.count('stalled-reader', `a reader stalls holding its pin on batch ${batch} while a trim passes it and GC runs`);
    trimThenGcActor(run, run.trimTo, s.rng.pick([0, 20, 50]));
    readerActor(run, s.rng.int(ends[batch]!, ends[batch + 1]! - 1), s.rng.int(1, 12), true);
    return;
  }
  const trim = s.rng.chance(0.5);
  const gc = s.rng.chance(0.5);
  const reader = s.rng.chance(0.6);
  if (trim) {
    run.trimTo = s.rng.int(1, prefixEnd);
    trimActor(run, run.trimTo);
  }
  if (gc) {
    // A reader's lease (60 s) outlives a move short of it; without a reader the clock may pass the grace.
    const moves = reader ? [0, 20, 50] : [0, GRACE_SECONDS / 2, GRACE_SECONDS + 1, 2 * GRACE_SECONDS];
    gcActor(run, s.rng.pick(moves));
  }
  if (reader) {
    if (gc || trim) s.count('reader-gc', 'a reader holds its leases while trim/GC run');
    readerActor(run, s.rng.int(0, prefixEnd), s.rng.int(1, 12));
  }
}
