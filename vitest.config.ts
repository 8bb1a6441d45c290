import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/support/duration-sequencer.js';
import PlainSummaryReporter from './test/support/plain-summary-reporter.js';
/** Integration files that replace a module with vi.mock: they run with a module graph of their own (lint allows vi.mock only there). */
import ISOLATED from './test/support/isolated-files.json' with { type: 'json' };

export default defineConfig({
  test: {
    reporters: ['default', new PlainSummaryReporter()],
    // Longest file first across projects, from measured durations (duration-sequencer.ts).
    sequence: { sequencer: DurationSequencer },
    // Forks, never threads: embedded ClickHouse (chdb) crashes in worker threads.
    pool: 'forks',
    // Three on two cores: a worker waits on DynamoDB Local, the S3 emulator or ClickHouse for
    // much of its time. Measured on a clean clone (3,344 tests, files grouped by project):
    // idle 378 s against 426 s with two workers (the same ~700 s of CPU: two left a sixth of
    // the cores idle); beside a one-worker soak 563 s, then 418 s and 554 s in a row, against
    // 564 s and 574 s in a row with two.
    maxWorkers: 3,
    // Budgets for a busy machine, not an idle one: at load 16 on these two cores one spawn of
    // the bin took 20-25 s (4-5 s idle) and a DynamoDB-backed test ~4x its idle time. A test
    // that spawns, or runs a flow, names its own larger budget; these are the floor.
    testTimeout: 120_000,
    hookTimeout: 240_000,
    allowOnly: false,
    // Local flow runs (the CLI's `flow run`, stream commands, `delivery run`, in-process or
    // spawned) retry at once instead of the ASL's 1-2 s backoffs: the same retries, no idle wait.
    env: { CUTPOINT_LOCAL_RETRY_MS: '0' },
    passWithNoTests: false,
    projects: [
      // The fast lane (`npm run test:unit`): pure domain rules, no emulator started.
      // Pure modules: one module graph per worker (isolate: false), imported once, not per file.
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false } },
      // The synthesized stacks: no emulator; one module graph per worker (isolate: false), so
      // aws-cdk-lib is imported once and each CDK context is synthesized once per worker
      // (test/infra/support/built-app.ts), not once per file.
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], isolate: false } },
      // Everything else runs against DynamoDB Local and the S3 emulator the global setup starts.
      // One module graph per worker (isolate: false): each file still opens its own table,
      // bucket and worlds, but the SDK clients, the state-machine runner and its validated
      // ASL are loaded once per worker, not once per file. The whole suite beside a soak used
      // 949 s of CPU against 1,024 s isolated (different neighbours: a rough figure).
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['test/unit/**', 'test/infra/**', ...ISOLATED],
          globalSetup: ['test/support/global-setup.ts'],
          isolate: false,
        },
      },
      // Files that replace a module (vi.mock) need a module graph of their own.
      {
        extends: true,
        test: { name: 'integration-isolated', include: ISOLATED, globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});
