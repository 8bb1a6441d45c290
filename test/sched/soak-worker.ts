import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { runSchedule, type ScheduleResult } from '../support/sched/run-schedule.js';
import type { Scenario } from '../support/sched/scenario.js';
import type { Endpoints, SchedStores } from '../support/sched/stores.js';

/**
 * One soak worker: its share of the schedules (every `of`-th round from `index`), on the emulators
 * the soak started, each result one JSON line on stdout for the parent to tally. Several run
 * side by side (`--workers`), so the soak uses both cores while DynamoDB Local's JVM and the
 * in-process S3 emulator serve them all.
 */

export type AnyScenario = Scenario<{ stores: SchedStores }>;

export interface Share {
  scenarios: AnyScenario[];
  total: number;
  first: number;
  /** A replay: this seed for every scenario. */
  seed?: number;
  index: number;
  of: number;
  stopOnFailure: boolean;
}

/** The i-th schedule of the soak: scenarios round-robin, seeds counting up from `first`. */
export function scheduleAt(share: Share, i: number): { scenario: AnyScenario; seed: number } {
  const scenario = share.scenarios[i % share.scenarios.length]!;
  return { scenario, seed: share.seed ?? share.first + Math.floor(i / share.scenarios.length) };
}

/**
 * The schedule indices of worker `index` of `of`: whole rounds (one seed of every scenario),
 * every `of`-th round. Each worker runs every scenario alike; dealing single schedules out
 * instead gave two workers and four scenarios generation + delivery on one and stream +
 * publication (ten times the cost) on the other, which then ran alone for most of the soak.
 */
export function* indicesOf(share: Pick<Share, 'scenarios' | 'total' | 'index' | 'of'>): Generator<number> {
  const n = share.scenarios.length;
  for (let round = share.index; round * n < share.total; round += share.of) {
    for (let i = round * n; i < Math.min(share.total, (round + 1) * n); i++) yield i;
  }
}

export async function runShare(share: Share, endpoints: Endpoints, emit: (r: ScheduleResult) => void): Promise<void> {
  const worlds = new Map<AnyScenario, { stores: SchedStores }>();
  try {
    for (const i of indicesOf(share)) {
      const { scenario, seed } = scheduleAt(share, i);
      if (!worlds.has(scenario)) worlds.set(scenario, await scenario.open(endpoints));
      const result = await runSchedule(scenario, worlds.get(scenario)!, seed);
      emit(result);
      if (!result.ok && share.stopOnFailure) return;
    }
  } finally {
    for (const [scenario, world] of worlds) await scenario.close(world).catch(() => undefined);
  }
}

/** A result as one JSON line (maps as objects; the trace only when it failed). */
export function toLine(r: ScheduleResult): string {
  return JSON.stringify({
    ...r,
    hits: Object.fromEntries(r.hits),
    reads: Object.fromEntries(r.reads),
    faults: Object.fromEntries(r.faults),
    events: Object.fromEntries(r.events),
    trace: r.ok ? [] : r.trace,
  });
}

/** Reads a worker's result lines back. */
export function readResults(child: ChildProcess, onResult: (r: ScheduleResult) => void): Promise<void> {
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => {
    const raw = JSON.parse(line) as ScheduleResult & {
      hits: Record<string, number>;
      reads: Record<string, number>;
      faults: Record<string, number>;
      events: Record<string, number>;
    };
    onResult({
      ...raw,
      hits: new Map(Object.entries(raw.hits)),
      reads: new Map(Object.entries(raw.reads)),
      faults: new Map(Object.entries(raw.faults)),
      events: new Map(Object.entries(raw.events)),
    });
  });
  return new Promise((resolve) => lines.on('close', resolve));
}
