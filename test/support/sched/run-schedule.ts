import { Scheduler } from './scheduler.js';
import type { Scenario } from './scenario.js';
import type { SchedStores } from './stores.js';

/** What one schedule did: the soak's unit of account. */
export interface ScheduleResult {
  scenario: string;
  seed: number;
  ok: boolean;
  ms: number;
  decisions: number;
  /** Cut points reached (parks that moved), by name. */
  hits: ReadonlyMap<string, number>;
  /** Reads that parked and moved (scheduling points, never faulted), by port call. */
  reads: ReadonlyMap<string, number>;
  /** Faults injected, by kind (zombie and duplicate invocations counted by the scenario's trace). */
  faults: ReadonlyMap<string, number>;
  /** Actor events by kind (zombie, duplicate-invocation, duplicate-start, operator-race, reader-gc, ...). */
  events: ReadonlyMap<string, number>;
  /** The failure: its stable name and message. */
  error?: { name: string; message: string };
  /** The one command that replays this schedule. */
  replay: string;
  trace: readonly string[];
}

export const replayCommand = (scenario: string, seed: number): string =>
  `npm run soak -- --scenario ${scenario} --seed ${seed} --trace`;

/**
 * Runs one schedule of `scenario` with `seed`: plans it (fresh keys, actors spawned), runs
 * every actor to its end under the scheduler, lets the system settle with faults off, then
 * runs the history checker. Never throws: a failure is in the result, with its replay command.
 */
export async function runSchedule<W extends { stores: SchedStores }>(
  scenario: Scenario<W>,
  world: W,
  seed: number,
): Promise<ScheduleResult> {
  const started = performance.now();
  const s = new Scheduler(seed, scenario.options);
  let error: ScheduleResult['error'];
  world.stores.use(s.faults);
  world.stores.useReads(s);
  try {
    const planned = await scenario.plan(world, s);
    await s.run();
    await planned.settle?.();
    await planned.check();
  } catch (e) {
    const err = e as { name?: string; message?: string };
    error = { name: err.name ?? 'Error', message: err.message ?? String(e) };
    s.release();
  } finally {
    world.stores.use(undefined);
    world.stores.useReads(undefined);
  }
  return {
    scenario: scenario.name,
    seed,
    ok: error === undefined,
    ms: performance.now() - started,
    decisions: s.decisions,
    hits: s.hits,
    reads: s.reads,
    faults: s.faultsFired,
    events: s.events,
    error,
    replay: replayCommand(scenario.name, seed),
    trace: s.trace,
  };
}

/** A failed schedule as a reader needs it: what broke, the last moves, and the replay command. */
export function describeFailure(r: ScheduleResult, tail = 40): string {
  const moves = r.trace.slice(-tail).join('\n');
  return `${r.scenario} seed ${r.seed}: ${r.error?.name}: ${r.error?.message}\nlast ${Math.min(tail, r.trace.length)} of ${r.trace.length} moves:\n${moves}\nreplay: ${r.replay}`;
}
