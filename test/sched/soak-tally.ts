import type { ScheduleResult } from '../support/sched/run-schedule.js';

interface PerScenario {
  schedules: number;
  failed: number;
  decisions: number;
  ms: number;
  maxMs: number;
}

/** What the soak has seen so far: progress lines for stderr, the summary for stdout. */
export class SoakTally {
  failed = 0;
  private readonly started = performance.now();
  private lastPrint = 0;
  private schedules = 0;
  private readonly failures: Array<{ scenario: string; seed: number; error: string; replay: string }> = [];
  private readonly scenarios = new Map<string, PerScenario>();
  private readonly faults = new Map<string, number>();
  private readonly events = new Map<string, number>();
  private readonly cutPoints = new Map<string, number>();
  private readonly reads = new Map<string, number>();

  get count(): number {
    return this.schedules;
  }

  add(r: ScheduleResult): void {
    this.schedules++;
    const per = this.scenarios.get(r.scenario) ?? { schedules: 0, failed: 0, decisions: 0, ms: 0, maxMs: 0 };
    per.schedules++;
    per.decisions += r.decisions;
    per.ms += r.ms;
    per.maxMs = Math.max(per.maxMs, r.ms);
    this.scenarios.set(r.scenario, per);
    if (!r.ok) {
      this.failed++;
      per.failed++;
      this.failures.push({
        scenario: r.scenario,
        seed: r.seed,
        error: `${r.error?.name}: ${r.error?.message}`,
        replay: r.replay,
      });
    }
    addAll(this.faults, r.faults);
    addAll(this.events, r.events);
    addAll(this.cutPoints, r.hits);
    addAll(this.reads, r.reads);
  }

  /** Every 5 s, and at the end. */
  shouldPrint(last: boolean): boolean {
    const now = performance.now();
    if (!last && now - this.lastPrint < 5000) return false;
    this.lastPrint = now;
    return true;
  }

  progress(total: number): string {
    const seconds = (performance.now() - this.started) / 1000;
    const rate = this.schedules / Math.max(seconds, 0.001);
    const eta = (total - this.schedules) / Math.max(rate, 0.001);
    return `${this.schedules}/${total} schedules, ${this.failed} failed, ${rate.toFixed(1)}/s, ${seconds.toFixed(0)} s elapsed, ~${eta.toFixed(0)} s left`;
  }

  summary(): Record<string, unknown> {
    const seconds = (performance.now() - this.started) / 1000;
    return {
      schedules: this.schedules,
      passed: this.schedules - this.failed,
      failed: this.failed,
      seconds: Math.round(seconds),
      scenarios: Object.fromEntries(
        [...this.scenarios].map(([name, p]) => [
          name,
          {
            schedules: p.schedules,
            failed: p.failed,
            decisions: p.decisions,
            meanMs: Math.round(p.ms / p.schedules),
            maxMs: Math.round(p.maxMs),
          },
        ]),
      ),
      faultsInjected: Object.fromEntries([...this.faults].sort()),
      actorEvents: Object.fromEntries([...this.events].sort()),
      cutPointsReached: this.cutPoints.size,
      cutPoints: Object.fromEntries([...this.cutPoints].sort()),
      /** Reads parked at, by port call (reads are scheduling points: test/support/sched/scheduler.ts). */
      readPoints: Object.fromEntries([...this.reads].sort()),
      failures: this.failures.slice(0, 50),
    };
  }
}

function addAll(into: Map<string, number>, from: ReadonlyMap<string, number>): void {
  for (const [k, n] of from) into.set(k, (into.get(k) ?? 0) + n);
}
