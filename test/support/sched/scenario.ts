import type { Scheduler, SchedulerOptions } from './scheduler.js';
import type { Endpoints } from './stores.js';

/**
 * A flow (or a few flows sharing state) as the scheduler explores it: its actors, the
 * fresh state each schedule starts from, and the history checker of its invariants.
 */
export interface Scenario<W = unknown> {
  /** Names the scenario in a replay command (`npm run soak -- --scenario <name> --seed N`). */
  readonly name: string;
  /** The actors it plays, for the summary (zombie, duplicate-start, duplicate-invocation, operator-race, reader-gc, ...). */
  readonly actors: readonly string[];
  readonly options?: SchedulerOptions;
  /** Once per run: what every schedule shares (a table and bucket, a ClickHouse source, a target). */
  open(endpoints: Endpoints): Promise<W>;
  /** One schedule: its fresh keys, its actors spawned on `s` (not yet running). */
  plan(world: W, s: Scheduler): Promise<Planned>;
  close(world: W): Promise<void>;
}

export interface Planned {
  /**
   * After every actor ended, with faults off: what the system does on its own to reach a
   * final state (the recovery flow an EventBridge rule starts, an operator's retry) — so
   * the checker can demand a final state, not only a safe one.
   */
  settle?(): Promise<void>;
  /** The history checker: throws InvariantViolation naming the invariant broken. */
  check(): Promise<void>;
}
