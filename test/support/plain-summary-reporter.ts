import type { Reporter, TestModule } from 'vitest/node';

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
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}

/** The SLOWEST files by wall time, one line each; empty for a run of one file. */
export function slowestFiles(testModules: ReadonlyArray<TestModule>): string {
  if (testModules.length < 2) return '';
  const timed = testModules.map((module) => {
    const d = module.diagnostic();
    const setup = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration;
    return { name: `${module.project.name}: ${module.relativeModuleId}`, total: setup + d.duration, setup };
  });
  timed.sort((a, b) => b.total - a.total);
  const s = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
  const lines = timed.slice(0, SLOWEST).map((t) => `${s(t.total)} s  (import ${s(t.setup).trim()} s)  ${t.name}`);
  return `\nSlowest files (wall time):\n${lines.join('\n')}\n`;
}
