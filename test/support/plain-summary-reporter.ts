import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';
import { DURATIONS_FILE } from './duration-sequencer.js';

/** How many of the slowest files the closing summary lists. */
const SLOWEST = 12;

/**
 * Prints, after vitest's own summary, the slowest test files of the run (wall time: import
 * plus tests and hooks; on a busy machine this is inflated, but the order shows where the
 * time goes), then the plain closing line CI reads ("N passed, N failed"), counting every
 * test case of the run. The closing line stays last.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(slowestFiles(testModules));
    process.stdout.write(schedulesLine(testModules));
    // The sequencer's committed weights (duration-sequencer.ts), rewritten on request from a full run.
    if (process.env.CUTPOINT_WRITE_DURATIONS === '1' && testModules.length > 1)
      writeFileSync(DURATIONS_FILE, durationsTable(testModules));
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

/** Each file's wall time (import plus tests and hooks), slowest first. */
function timedFiles(testModules: ReadonlyArray<TestModule>) {
  const timed = testModules.map((module) => {
    const d = module.diagnostic();
    const setup = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration;
    return {
      file: module.relativeModuleId,
      name: `${module.project.name}: ${module.relativeModuleId}`,
      total: setup + d.duration,
      setup,
    };
  });
  return timed.sort((a, b) => b.total - a.total);
}

/** `{ "<relative path>": seconds }`, slowest first, one file per line. */
function durationsTable(testModules: ReadonlyArray<TestModule>): string {
  const lines = timedFiles(testModules).map((t) => `  ${JSON.stringify(t.file)}: ${Math.round(t.total / 100) / 10}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}

/** The SLOWEST files by wall time, one line each; empty for a run of one file. */
export function slowestFiles(testModules: ReadonlyArray<TestModule>): string {
  if (testModules.length < 2) return '';
  const timed = timedFiles(testModules);
  const s = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
  const lines = timed.slice(0, SLOWEST).map((t) => `${s(t.total)} s  (import ${s(t.setup).trim()} s)  ${t.name}`);
  return `\nSlowest files (wall time):\n${lines.join('\n')}\n`;
}

/** A describeSchedules block's name (test/support/sched/vitest-schedules.ts): `<scenario>: deterministic schedules (…)`. */
const SCHEDULES = /^(\S+): deterministic schedules /;

/** How many deterministic schedules ran, by scenario (`Schedules: N (…)`); empty when none did. */
export function schedulesLine(testModules: ReadonlyArray<TestModule>): string {
  const by = new Map<string, number>();
  for (const module of testModules) {
    for (const test of module.children.allTests()) {
      const parent = test.parent;
      const scenario = parent.type === 'suite' ? SCHEDULES.exec(parent.name)?.[1] : undefined;
      if (scenario && test.result().state !== 'skipped') by.set(scenario, (by.get(scenario) ?? 0) + 1);
    }
  }
  const total = [...by.values()].reduce((n, c) => n + c, 0);
  if (total === 0) return '';
  const parts = [...by].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s} ${n}`);
  return `\nSchedules: ${total} (${parts.join(', ')})\n`;
}
