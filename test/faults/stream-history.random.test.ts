import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { CutpointConfig } from '../../src/config.js';
import { createStream } from '../../src/stream/create-stream.js';
import { setRetentionPolicy } from '../../src/stream/cursor/policy.js';
import { CURSOR_CUT_POINTS } from '../../src/stream/cursor/cut-points.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { freshStores } from '../support/emulators.js';
import {
  append,
  checkReadError,
  read,
  resolve,
  takeover,
  trim,
  type StepContext,
} from '../support/stream-history/actions.js';
import { checkDurable, contextOf, settleEverything } from '../support/stream-history/checks.js';
import { settleLifecycle } from '../support/stream-history/final-gc.js';
import {
  compact,
  compactionFault,
  consume,
  consumerTakeover,
  gc,
  gcFault,
  gen0Fault,
  materialize,
} from '../support/stream-history/lifecycle.js';
import { History, HistoryError, messageOf, type Operator } from '../support/stream-history/model.js';
import {
  appendFault,
  newPayloadAttempt,
  pickWriter,
  randomRule,
  RESOLVE_CUT_POINTS,
  readPlan,
  trimFault,
  trimTarget,
} from '../support/stream-history/plans.js';
import { countingPorts, MovableClock } from './stream-gc-world.js';

/**
 * A seeded randomized history of one lane (docs/rules.md#append-outcomes; issue #11,
 * "Done when"): interleaved appends by the owner and by stale writer sessions, faults at
 * every append cut point, lost client outcomes, MAY_HAVE_COMMITTED resolved now or later,
 * takeovers, trims and reads — and the lifecycle beside them: generation 0 and compaction
 * runs, GC runs (the stream-gc flow) with the clock moved past or short of the grace and
 * faults at its cut points, readers racing GC while holding their leases, and a consumer
 * group (takeovers fencing the previous consumer, commits as it reads, a retention policy
 * naming it in half the seeds). Everything runs in-process against the real stores. After
 * every step the history is checked against a model and the durable state:
 * - every attempt ends with exactly one final outcome: KNOWN_COMMITTED with a [start, end)
 *   that never changes across re-runs, or KNOWN_NOT_COMMITTED that never later commits;
 * - committed ranges are contiguous from 0 to the head's committed end, no gaps, no
 *   attempt (and no payload re-sent after KNOWN_NOT_COMMITTED) committed twice;
 * - the committed end and the trim offset never go backwards;
 * - while the lane is suspended nothing commits;
 * - reads (through compacted, generation-0 and WAL copies alike, racing GC or not) return
 *   exactly the committed records in offset order from `from`, never skip, never stop
 *   early below the committed end, and refuse offsets below the trim;
 * - the cursor never passes the committed end, never moves back outside a seek, and a
 *   trim never passes it when the policy names it; a fenced consumer never commits;
 * - compactions never overlap and each covers whole committed ranges.
 * At the end every attempt is resolved, faults are off, the lane invariant holds, and GC
 * past every grace leaves exactly the live objects, each collectible one deleted once
 * (test/support/stream-history/final-gc.ts).
 *
 * Replay one seed: CUTPOINT_SEED=<n> npx vitest run test/faults/stream-history.random.test.ts
 * (CUTPOINT_STEPS=<n> lengthens the run; CUTPOINT_HISTORY_TRACE=1 prints every step).
 * Every failure names its seed, step and the last steps of the history. A seed fixes
 * every choice (operations, sessions, attempt ids, records, faults, clock moves); only
 * the "race" steps, which run two or three operations at once, may interleave differently
 * on a replay. The seeds run concurrently, each on its own lane of one fresh table.
 */

const FILE = 'test/faults/stream-history.random.test.ts';
const DEFAULT_SEEDS = [11, 2024, 31337, 4096, 77, 9001];
const DEFAULT_STEPS = 40;
const STEPS = nonNegativeIntEnv('CUTPOINT_STEPS') ?? DEFAULT_STEPS;
const SEEDS = seedsFromEnv() ?? DEFAULT_SEEDS;
const TIMEOUT_MS = 240_000;
/** CUTPOINT_HISTORY_TRACE=1 prints every step of a passing run too (stderr). */
const TRACE = process.env.CUTPOINT_HISTORY_TRACE === '1';

function nonNegativeIntEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** CUTPOINT_SEED=<n> replays one seed; a comma-separated list runs several. */
function seedsFromEnv(): number[] | undefined {
  const raw = process.env.CUTPOINT_SEED;
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw.split(',').map((part) => {
    const n = Number(part.trim());
    if (part.trim() === '' || !Number.isSafeInteger(n) || n < 0)
      throw new Error(`CUTPOINT_SEED must be a non-negative integer (or a comma-separated list), got "${raw}"`);
    return n;
  });
}

const replayCommand = (seed: number): string =>
  `CUTPOINT_SEED=${seed}${STEPS === DEFAULT_STEPS ? '' : ` CUTPOINT_STEPS=${STEPS}`} npx vitest run ${FILE}`;

/** GC's orphan grace in the history; a GC step moves the clock by none, half, just past or twice of it. */
const GRACE_SECONDS = 120;

type StepKind =
  | 'append'
  | 'rerun'
  | 'resolve'
  | 'takeover'
  | 'trim'
  | 'read'
  | 'race'
  | 'materialize'
  | 'compact'
  | 'gc'
  | 'consume'
  | 'cursor-takeover';

async function runStep(h: History, ctx: StepContext): Promise<void> {
  const pending = h.pending();
  const suspended = h.head.suspendedBy;
  const stuck = suspended !== undefined && h.step - h.suspendedSince >= 6;
  const kind: StepKind = stuck
    ? 'resolve'
    : h.rng.weighted<StepKind>({
        append: 30,
        rerun: h.attempts.size ? 9 : 0,
        resolve: pending.length || suspended ? 9 : 0,
        takeover: h.writers.length < h.maxWriters ? 3 : 0,
        trim: 6,
        read: 12,
        race: 10,
        materialize: 3,
        compact: 6,
        gc: 7,
        consume: 7,
        'cursor-takeover': h.consumers.length < 3 ? 2 : 0,
      });
  h.note(`— ${kind}${suspended ? ` (lane suspended by ${suspended})` : ''}`);

  switch (kind) {
    case 'append': {
      const a = newPayloadAttempt(h, pickWriter(h));
      const fault = h.rng.chance(0.35) ? appendFault(h.rng) : undefined;
      const outcome = await append(h, a, ctx, fault);
      // MAY_HAVE_COMMITTED: resolve the original attempt now, or a few steps later.
      if (outcome?.status === 'MAY_HAVE_COMMITTED' && h.rng.chance(0.4)) await resolve(h, a);
      return;
    }
    case 'rerun': {
      // The same attempt id with its same records: an open one, a recent one (a client
      // retrying), or any earlier one — whatever its outcome was, it must not change.
      const all = [...h.attempts.values()];
      const a =
        pending.length && h.rng.chance(0.5)
          ? h.rng.pick(pending)
          : h.rng.chance(0.7)
            ? h.rng.pick(all.slice(-8))
            : h.rng.pick(all);
      const fault = h.rng.chance(0.3) ? appendFault(h.rng) : undefined;
      await append(h, a, ctx, fault);
      return;
    }
    case 'resolve': {
      const holder = suspended ? h.attempts.get(suspended) : undefined;
      const a = holder && (pending.length === 0 || stuck || h.rng.chance(0.75)) ? holder : h.rng.pick(pending);
      const fault = !stuck && h.rng.chance(0.25) ? randomRule(h.rng, RESOLVE_CUT_POINTS) : undefined;
      if (a.status === 'open' && a !== holder && h.rng.chance(0.5))
        await append(h, a, ctx, fault && appendFault(h.rng));
      else await resolve(h, a, fault);
      return;
    }
    case 'takeover':
      await takeover(h, h.rng.chance(0.3) ? randomRule(h.rng, [STREAM_CUT_POINTS.takeoverCas]) : undefined);
      return;
    case 'trim':
      await trim(h, trimTarget(h), trimFault(h));
      return;
    case 'read': {
      const plan = readPlan(h);
      const committedEnd = h.head.committedEnd;
      checkReadError(h, plan, await read(h, plan, committedEnd), committedEnd);
      return;
    }
    case 'race':
      await race(h, ctx);
      return;
    case 'materialize':
      await materialize(h, gen0Fault(h));
      return;
    case 'compact':
      await compact(h, compactionFault(h));
      return;
    case 'gc':
      await gc(h, {
        fault: gcFault(h),
        advanceSeconds: h.rng.pick([0, GRACE_SECONDS / 2, GRACE_SECONDS + 1, 2 * GRACE_SECONDS]),
      });
      return;
    case 'consume':
      await consume(h);
      return;
    case 'cursor-takeover':
      await consumerTakeover(h, h.rng.chance(0.3) ? randomRule(h.rng, [CURSOR_CUT_POINTS.takeover]) : undefined);
      return;
  }
}

/** Two or three operations in flight at once on the same lane. */
async function race(h: History, ctx: StepContext): Promise<void> {
  const stale = h.writers.map((w) => w.index).filter((i) => i !== h.owner);
  const variants = [
    'owner-pair',
    'mixed',
    'read-vs-gc',
    'compact-vs-gc',
    'append-vs-compact',
    ...(h.consumer >= 0 ? ['consume-vs-trim'] : []),
    ...(h.writers.length < h.maxWriters ? ['stale-writer'] : []),
    ...(stale.length ? ['stale-vs-owner'] : []),
  ];
  const variant = h.rng.pick(variants);
  h.note(`  race: ${variant}`);
  switch (variant) {
    case 'stale-writer': {
      // The owner is slow inside its append while a new session takes the lane over:
      // the old owner's bytes may land, its head CAS must not.
      const a = newPayloadAttempt(h, h.owner);
      const slowAt = h.rng.pick([STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas]);
      const fault = `${slowAt}:delay=${h.rng.int(60, 150)}`;
      const pause = h.rng.int(0, 50);
      await Promise.all([append(h, a, ctx, fault), sleep(pause).then(() => takeover(h))]);
      return;
    }
    case 'owner-pair': {
      const a = newPayloadAttempt(h, h.owner);
      const b = newPayloadAttempt(h, h.owner);
      await Promise.all([append(h, a, ctx), append(h, b, ctx)]);
      return;
    }
    case 'stale-vs-owner': {
      const a = newPayloadAttempt(h, h.owner);
      const b = newPayloadAttempt(h, h.rng.pick(stale));
      await Promise.all([append(h, a, ctx), append(h, b, ctx)]);
      return;
    }
    case 'read-vs-gc': {
      // A reader holds each lease a while (its release is slow) while the lane is trimmed
      // past where it reads and GC collects at once what the trim left: the lease drain
      // keeps the bytes under the reader until it lets go, then the read is refused as
      // trimmed (or returns exact records, had it finished first) — never a deleted byte,
      // never a quarantined copy. A copy marked before the reader pinned says read again.
      const committedEnd = h.head.committedEnd;
      const plan = {
        from: h.trim,
        maxRecords: h.rng.int(5, 60),
        fault: `${STREAM_CUT_POINTS.release}:delay=${h.rng.int(20, 120)}*`,
      };
      const to = h.trim + Math.floor((committedEnd - h.trim) * h.rng.next());
      const trimThenGc = async () => {
        await sleep(h.rng.int(0, 30));
        await trim(h, to);
        await gc(h);
      };
      const [readError] = await Promise.all([read(h, plan, committedEnd), trimThenGc()]);
      if (readError !== undefined && (readError as Error).name === 'Stream.ObjectReclaimed') {
        checkReadError(h, { from: plan.from }, await read(h, { from: plan.from }, committedEnd), committedEnd);
      } else {
        checkReadError(h, plan, readError, committedEnd);
      }
      return;
    }
    case 'compact-vs-gc':
      await Promise.all([compact(h), gc(h)]);
      return;
    case 'append-vs-compact': {
      const a = newPayloadAttempt(h, h.owner);
      await Promise.all([append(h, a, ctx), compact(h)]);
      return;
    }
    case 'consume-vs-trim':
      await Promise.all([consume(h), trim(h, trimTarget(h))]);
      return;
    default: {
      // An append, a read and a trim at once.
      const a = newPayloadAttempt(h, h.owner);
      const plan = readPlan(h);
      const to = h.trim + Math.floor((h.head.committedEnd - h.trim) * h.rng.next() * 0.3);
      const committedEnd = h.head.committedEnd;
      const [, readError] = await Promise.all([
        append(h, a, ctx),
        read(h, { ...plan, fault: undefined }, committedEnd),
        trim(h, to),
      ]);
      checkReadError(h, { ...plan, fault: undefined }, readError, committedEnd);
    }
  }
}

async function runHistory(h: History): Promise<void> {
  await createStream({ stream: h.lane.stream, partitions: 1 }, h.operator.ports);
  h.policy = h.rng.chance(0.5);
  if (h.policy) await setRetentionPolicy({ stream: h.lane.stream, groups: [h.group] }, h.operator.ports);
  await takeover(h);
  await checkDurable(h);
  for (h.step = 1; h.step <= STEPS; h.step++) {
    // Nothing a step does while the lane is suspended may commit (a resolve never does).
    const ctx = contextOf(h);
    await runStep(h, ctx);
    await checkDurable(h, ctx);
  }
  h.step = STEPS;
  await settleEverything(h);
  await settleLifecycle(h);
}

let config: CutpointConfig;
beforeAll(async () => {
  config = (await freshStores()).config;
});

/** One seed's actors: every port on one movable clock; GC on the operator's ports, which count the DELETEs that applied. */
function historyOf(seed: number): History {
  const clock = new MovableClock();
  const deletes = new Map<string, number>();
  const retiredLives = new Map<string, number>();
  const faults = new FaultSwitch();
  const operator: Operator = { ports: countingPorts(awsPorts(config, faults), clock, deletes, retiredLives), faults };
  const readerFaults = new FaultSwitch();
  const reader: Operator = { ports: { ...awsPorts(config, readerFaults), clock }, faults: readerFaults };
  return new History(seed, { stream: `hist-${seed}`, partition: 0 }, config, operator, 2 + (seed % 2), {
    clock,
    deletes,
    retiredLives,
    reader,
    graceSeconds: GRACE_SECONDS,
  });
}

describe(`randomized stream history with its lifecycle (${STEPS} steps per seed; replay one seed with CUTPOINT_SEED=<n>)`, () => {
  for (const seed of SEEDS) {
    it.concurrent(
      `seed ${seed} — replay: ${replayCommand(seed)}`,
      async () => {
        const h = historyOf(seed);
        try {
          await runHistory(h);
          if (TRACE) process.stderr.write(`seed ${seed}:\n  ${h.trace.join('\n  ')}\n`);
        } catch (error) {
          const message = error instanceof HistoryError ? error.message : `[${h.where()}] ${messageOf(error)}`;
          throw new Error(
            `${message}\n  replay: ${replayCommand(seed)}\n  last steps:\n    ${h.trace.slice(-40).join('\n    ')}`,
            { cause: error },
          );
        }
      },
      TIMEOUT_MS,
    );
  }
});
