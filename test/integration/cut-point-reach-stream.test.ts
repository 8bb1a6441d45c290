import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultsFromEnv } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { firedOf } from '../../src/cli/fault-report.js';
import { activeSession } from '../../src/cli/session-store.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import type { Ports } from '../../src/ports/index.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { useCliRuntime, type CliRun } from '../support/cli-runtime.js';
import {
  ARM_EVERY_CUT_POINT,
  expectReach,
  firedIn,
  isStreamPlace,
  LOG_SUBSYSTEMS,
  placesInLane,
  placesOfSubsystems,
  withRule,
  type ReachScenario,
} from '../support/cut-point-reach.js';
import { StreamLanes, type Lane } from '../support/stream-lanes.js';

/**
 * Every stream cut point `cutpoint faults list` names for a stream flow or command fires
 * when armed through it (test/support/cut-point-reach.ts), and so do the generation cut
 * points the lane's maintenance crosses (generation 0, compaction, resolve's repair): each
 * flow run by `flow run`, each command as an operator types it, on one local runtime, every
 * scenario on a lane of its own in the state the place acts on (test/support/stream-lanes.ts:
 * an append stopped by an armed fault, a trim, a consumer group, a copy gone bad).
 */

const { runtime, cli } = useCliRuntime('reach-stream');
const lanes = new StreamLanes(runtime, cli);

const flow = (name: string, input: unknown, faults: string): Promise<CliRun> =>
  cli(['flow', 'run', name, '--input', JSON.stringify(input)], faults);

type By = 'command' | 'flow';
/** A place acting on one lane, by its command (these arguments) or by its flow (`flow run` with this input). */
const on =
  (by: By, command: (lane: Lane) => string[], flowName: string, input: (lane: Lane) => unknown) =>
  (lane: Lane, faults: string): Promise<CliRun> =>
    by === 'command' ? cli(command(lane), faults) : flow(flowName, input(lane), faults);

/** An append: plain, with its head CAS outcome unknown (the lane suspended), or to a lane another attempt suspended (the attempt retired). */
function appendScenarios(by: By): ReachScenario[] {
  const append = async (lane: Lane, faults: string): Promise<CliRun> =>
    by === 'command'
      ? cli(lane.args('append', '--attempt', 'n1'), faults, 'p\nq\n')
      : flow('stream-append', await lanes.appendInput(lane, 'n1', ['p', 'q']), faults);
  return [
    { name: 'an append', run: async (faults) => append(await lanes.owned(1), faults) },
    {
      name: 'an append whose head CAS outcome stays unknown',
      run: async (faults) => append(await lanes.owned(1), withRule(faults, 'stream.append.head-cas', 'lose-request*')),
    },
    {
      name: 'an append to a lane another attempt suspended',
      run: async (faults) => append(await lanes.suspended(), faults),
    },
  ];
}

const producerAppend: ReachScenario = {
  name: 'a JSON Lines file through the group-commit producer',
  async run(faults) {
    const lane = await lanes.owned();
    const file = join(runtime().root, `${lane.stream}.jsonl`);
    await writeFile(file, '{"n":1}\n{"n":2}\n{"n":3}\n');
    return cli(lane.args('append', '--attempt', 'f1', '--from', file, '--max-records', '2'), faults);
  },
};

/** A LaneWriter on a lane this CLI owns, on ports whose injector CUTPOINT_FAULTS `faults` arms (none: a setup writer). */
async function laneWriter(
  faults = '',
  depth = 1,
): Promise<{ lane: Lane; writer: LaneWriter; ports: Ports; fired: () => string[] }> {
  const lane = await lanes.owned();
  const injector = faultsFromEnv({ CUTPOINT_FAULTS: faults });
  const ports = awsPorts(runtime().config, injector);
  const writer = new LaneWriter(ports, lane.ref, await activeSession(lane.ref, 'local'), { depth });
  return { lane, writer, ports, fired: () => firedOf(injector).map((f) => f.cutPoint) };
}

const records = (...texts: string[]) => texts.map((t) => new TextEncoder().encode(t));

/** Resolve of an attempt: never committed (its lane suspended), committed (its index and generation 0 repaired), committed with its WAL object gone bad; and of every attempt of a LaneWriter that died holding its lane. */
function resolveScenarios(by: By): ReachScenario[] {
  const resolve = (attempt: string) =>
    on(
      by,
      (l) => l.args('resolve', '--attempt', attempt),
      'stream-resolve-append',
      (l) => ({ ...l.ref, attemptId: attempt }),
    );
  return [
    {
      name: 'an attempt that never committed (its lane suspended)',
      run: async (faults) => resolve('a1')(await lanes.suspended(), faults),
    },
    { name: 'an attempt that committed', run: async (faults) => resolve('b0')(await lanes.owned(1), faults) },
    {
      name: 'an attempt that committed, its WAL object gone bad (generation 0 aborted)',
      run: async (faults) => resolve('b0')(await lanes.badWal(), faults),
    },
    {
      name: 'every attempt of a LaneWriter that died holding its lane (never closed)',
      async run(faults) {
        const { lane, writer } = await laneWriter();
        expect(await writer.append(records('w1'))).toMatchObject({ status: 'KNOWN_COMMITTED' });
        const id = writer.writerId;
        return on(
          by,
          (l) => l.args('resolve', '--writer', id),
          'stream-resolve-append',
          (l) => ({ ...l.ref, writerId: id }),
        )(lane, faults);
      },
    },
  ];
}

/**
 * The LaneWriter, which no command runs (producers embed it): run in-process on ports whose
 * injector CUTPOINT_FAULTS arms, like Lambda's (what fired is read from that injector).
 */
const writerScenarios: ReachScenario[] = [
  {
    name: 'two batches, then close',
    async run(faults) {
      const { writer, fired } = await laneWriter(faults);
      for (const text of ['a', 'b'])
        expect(await writer.append(records(text))).toMatchObject({ status: 'KNOWN_COMMITTED' });
      expect(await writer.close()).toEqual({ released: true, unsettled: [] });
      return { stderr: '', alsoFired: fired() };
    },
  },
  {
    name: "two batches in flight, the first one's head CAS outcome unknown for good (SuspendLane; the second spent), then close",
    async run(faults) {
      const { writer, fired } = await laneWriter(withRule(faults, 'stream.append.head-cas', 'lose-request*'), 2);
      const outcomes = await Promise.all([writer.append(records('c')), writer.append(records('d'))]);
      expect(outcomes.map((o) => o.status)).toEqual(['MAY_HAVE_COMMITTED', 'KNOWN_NOT_COMMITTED']);
      expect(await writer.close()).toEqual({ released: true, unsettled: [] });
      return { stderr: '', alsoFired: fired() };
    },
  },
];

const read = (lane: Lane, faults: string) => cli(lane.args('read', '--from', '0'), faults);
const readScenarios: ReachScenario[] = [
  {
    name: 'a first read of committed ranges (index entries rebuilt)',
    run: async (faults) => read(await lanes.owned(2), faults),
  },
  {
    name: 'a read of a range whose generation 0 copy went bad (quarantined)',
    run: async (faults) => read((await lanes.badGen0()).lane, faults),
  },
];

const release: ReachScenario = {
  name: 'the release of a quarantined copy once restored',
  async run(faults) {
    const { lane, key, restore } = await lanes.badGen0();
    await lanes.ok(lane.args('read', '--from', '0'));
    await restore();
    const r = await cli(lane.args('quarantine', '--release', key), faults);
    expect(r.code, r.stderr).toBe(0);
    return r;
  },
};

const gc = (by: By): ReachScenario => ({
  name: 'GC of a trimmed range and an orphan, grace 0s',
  run: async (faults) =>
    on(
      by,
      (l) => l.args('gc', '--grace', '0s'),
      'stream-gc',
      (l) => ({ ...l.ref, grace: '0s' }),
    )(await lanes.collectable(), faults),
});

/** Compaction of three committed ranges; and racing another one of the first two, which prepares generation 0 first (this one's aborted). */
function compactScenarios(by: By): ReachScenario[] {
  const compact = on(
    by,
    (l) => l.args('compact', '--max-ranges', '3'),
    'stream-compact',
    (l) => ({ ...l.ref, maxRanges: 3 }),
  );
  return [
    { name: 'compaction of three committed ranges', run: async (faults) => compact(await lanes.owned(3), faults) },
    {
      name: 'compaction racing another one, which prepares generation 0 first',
      async run(faults) {
        const lane = await lanes.owned(3);
        const other = lanes.racingCompaction(lane);
        await other.planned;
        // Held at its PREPARED record while the other run, planned before this one registered its task, takes the slot.
        const run = await compact(lane, withRule(faults, GENERATION_CUT_POINTS.recordPut, 'delay=2500'));
        expect(await other.done).toMatchObject({ compacted: { start: 0, end: 4 } });
        expect(
          (await lanes.compactionTasks(lane)).map((t) => t.state),
          run.stderr,
        ).toContain('ABORTED');
        return run;
      },
    },
  ];
}

/** Generation 0 of two committed ranges; and of a range whose WAL object went bad (its generation aborted). */
function materializeScenarios(by: By): ReachScenario[] {
  const materialize = on(
    by,
    (l) => l.args('materialize'),
    'stream-materialize',
    (l) => l.ref,
  );
  return [
    { name: 'generation 0 of two committed ranges', run: async (faults) => materialize(await lanes.owned(2), faults) },
    {
      name: 'generation 0 of a range whose WAL object went bad',
      run: async (faults) => materialize(await lanes.badWal(), faults),
    },
  ];
}

const maintain = (lane: Lane, faults: string) => flow('stream-maintain', { lanes: [lane.ref] }, faults);
const maintainScenarios: ReachScenario[] = [
  {
    name: 'a lane with a trimmed range, three more and an orphan',
    run: async (faults) => maintain(await lanes.collectable(), faults),
  },
  { name: 'a lane whose WAL object went bad', run: async (faults) => maintain(await lanes.badWal(), faults) },
];

const consume = (lane: Lane, faults: string) => cli(lane.args('consume', '--group', 'g', '--batch', '2'), faults);
const consumeScenarios: ReachScenario[] = [
  { name: 'a new group consumes two committed ranges', run: async (faults) => consume(await lanes.owned(2), faults) },
  {
    name: 'a group consumes a range whose generation 0 copy went bad',
    run: async (faults) => consume((await lanes.badGen0()).lane, faults),
  },
];

const takeover = (by: By): ReachScenario => ({
  name: 'a takeover of a created lane',
  run: async (faults) =>
    on(
      by,
      (l) => l.args('takeover'),
      'stream-takeover',
      (l) => ({ ...l.ref, owner: 'reach@test', session: randomUUID() }),
    )(await lanes.created(), faults),
});

const trim = (by: By): ReachScenario => ({
  name: 'a trim of two committed ranges',
  run: async (faults) =>
    on(
      by,
      (l) => l.args('trim', '--to', '2'),
      'stream-trim',
      (l) => ({ ...l.ref, to: 2 }),
    )(await lanes.owned(2), faults),
});

const seek: ReachScenario = {
  name: 'a seek of a consumed group back to 0',
  async run(faults) {
    const lane = await lanes.owned(1);
    await lanes.ok(lane.args('consume', '--group', 'g'));
    return cli(lane.args('seek', '--group', 'g', '--to', '0', '--yes'), faults);
  },
};

/** Each place and its scenarios (built when the test runs). */
const PLACES: Record<string, () => ReachScenario[]> = {
  'stream create': () => [
    { name: 'a new stream', run: (faults) => cli(['stream', 'create', lanes.name(), '--partitions', '2'], faults) },
  ],
  'stream takeover': () => [takeover('command')],
  'flow stream-takeover': () => [takeover('flow')],
  'stream append': () => [...appendScenarios('command'), producerAppend],
  'flow stream-append': () => appendScenarios('flow'),
  'library LaneWriter': () => writerScenarios,
  'stream resolve': () => resolveScenarios('command'),
  'flow stream-resolve-append': () => resolveScenarios('flow'),
  'stream read': () => readScenarios,
  'stream quarantine': () => [release],
  'stream trim': () => [trim('command')],
  'flow stream-trim': () => [trim('flow')],
  'stream gc': () => [gc('command')],
  'flow stream-gc': () => [gc('flow')],
  'stream compact': () => compactScenarios('command'),
  'flow stream-compact': () => compactScenarios('flow'),
  'stream materialize': () => materializeScenarios('command'),
  'flow stream-materialize': () => materializeScenarios('flow'),
  'flow stream-maintain': () => maintainScenarios,
  'stream consume': () => consumeScenarios,
  'stream seek': () => [seek],
  'stream policy': () => [
    {
      name: 'a retention policy naming a group',
      run: async (faults) => cli(['stream', 'policy', (await lanes.created()).stream, '--groups', 'g'], faults),
    },
  ],
};

describe('every stream cut point fires where faults list says', () => {
  it('covers every stream place of the stream, generation, objects and recovery subsystems', () => {
    expect(Object.keys(PLACES).sort()).toEqual(placesOfSubsystems(LOG_SUBSYSTEMS).filter(isStreamPlace));
  });

  for (const [place, scenarios] of placesInLane(PLACES)) {
    it(place, async () => expectReach(place, scenarios()), 300_000);
  }

  it('a read a compacted copy serves reads it through stream.read.provider, as every copy', async () => {
    const lane = await lanes.owned(3);
    await lanes.ok(lane.args('compact'));
    await lanes.ok(lane.args('read', '--from', '0'));
    // Index entries are in place now: this read crosses only the copies' GETs, and only the compacted copy serves.
    const r = await read(lane, ARM_EVERY_CUT_POINT);
    expect(r.code, r.stderr).toBe(0);
    expect([...firedIn(r.stderr)]).toEqual(['stream.read.provider']);
    expect(
      r.stderr.match(/fault fired: stream\.read\.provider /g),
      'one GET: the compacted copy, not each range',
    ).toHaveLength(1);
  }, 120_000);

  it('the read-only commands cross no cut point', async () => {
    const { lane } = await lanes.badGen0();
    await lanes.ok(lane.args('consume', '--group', 'g'));
    for (const argv of [
      ['stream', 'describe', lane.stream],
      lane.args('leases'),
      lane.args('cursors'),
      lane.args('quarantine'),
    ]) {
      const r = await cli(argv, ARM_EVERY_CUT_POINT);
      expect(r.code, r.stderr).toBe(0);
      expect([...firedIn(r.stderr)], argv.join(' ')).toEqual([]);
    }
  }, 120_000);
});
