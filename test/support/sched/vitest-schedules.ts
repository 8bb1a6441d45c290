import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { describeFailure, runSchedule, type ScheduleResult } from './run-schedule.js';
import type { Scenario } from './scenario.js';
import type { SchedStores } from './stores.js';

/**
 * `count` schedules of `scenario` as one test each (seeds first..first+count-1, then the
 * `pinned` seeds a soak found), on the run's emulators. CUTPOINT_SCHED_SEEDS=<n>[,<n>...] runs those seeds instead (a replay);
 * CUTPOINT_SCHEDULES=<n> runs n per scenario. A failure prints the broken invariant, the
 * last moves and the one command that replays it.
 */
export function describeSchedules<W extends { stores: SchedStores }>(
  scenario: Scenario<W>,
  count: number,
  first = 1,
  pinned: readonly number[] = [],
): void {
  describe(`${scenario.name}: deterministic schedules (${scenario.actors.join(', ')})`, () => {
    const world = scenarioWorld(scenario);
    for (const seed of seedsOf(count, first, pinned)) {
      // Measured: a schedule takes 0.1-2 s idle; 60 s leaves room for a loaded machine.
      it(`seed ${seed}`, async () => {
        const result = await runSchedule(scenario, world(), seed);
        if (!result.ok) expect.fail(describeFailure(result));
        expect(result.decisions).toBeGreaterThan(0);
      }, 60_000);
    }
  });
}

/** The scenario's world for the enclosing describe: opened on the run's emulators before its tests, closed after. */
export function scenarioWorld<W>(scenario: Pick<Scenario<W>, 'open' | 'close'>): () => W {
  let world: W | undefined;
  beforeAll(async () => {
    world = await scenario.open({ dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') });
  }, 240_000);
  afterAll(async () => {
    if (world) await scenario.close(world);
  });
  return () => world!;
}

/** first..first+count-1, then the pinned seeds (soak findings kept as regressions); or the replay's seeds. */
function seedsOf(count: number, first: number, pinned: readonly number[]): number[] {
  const replay = process.env.CUTPOINT_SCHED_SEEDS?.trim();
  if (replay) return replay.split(',').map((part) => parseSeed(part, 'CUTPOINT_SCHED_SEEDS'));
  const n = process.env.CUTPOINT_SCHEDULES?.trim()
    ? parseSeed(process.env.CUTPOINT_SCHEDULES, 'CUTPOINT_SCHEDULES')
    : count;
  return [
    ...Array.from({ length: n }, (_, i) => first + i),
    ...pinned.filter((seed) => seed < first || seed >= first + n),
  ];
}

function parseSeed(raw: string, name: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new Error(`${name} must be non-negative integers, got "${raw}"`);
  return n;
}

/**
 * A deliberate break's search (test/sched/*-break.test.ts): the seeds 1..`seeds` of
 * `scenario`, in order, until one fails; that failure, printed with its last moves. Fails
 * the test when none does, naming `what` went uncaught.
 */
export async function firstBreak<W extends { stores: SchedStores }>(
  scenario: Scenario<W>,
  world: W,
  seeds: number,
  what: string,
): Promise<ScheduleResult> {
  let found: ScheduleResult | undefined;
  for (let seed = 1; seed <= seeds && !found; seed++) {
    const result = await runSchedule(scenario, world, seed);
    if (!result.ok) found = result;
  }
  expect(found, `no CI seed (1-${seeds}) caught ${what}`).toBeDefined();
  console.info(`${what} found by ${describeFailure(found!, 12)}`);
  return found!;
}
