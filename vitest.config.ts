import { defineConfig } from 'vitest/config';
import PlainSummaryReporter from './test/support/plain-summary-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', new PlainSummaryReporter()],
    // Forks, never threads: embedded ClickHouse (chdb) crashes in worker threads.
    pool: 'forks',
    // Two cores: the JVM and the S3 emulator need one of them.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    allowOnly: false,
    passWithNoTests: false,
  },
});
