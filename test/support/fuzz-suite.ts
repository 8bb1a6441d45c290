import { afterAll, beforeAll } from 'vitest';
import { FuzzRunner } from './fuzz-cli.js';
import { openFuzzWorld, type FuzzWorld } from './fuzz-world.js';

/**
 * What every fuzz file (test/fuzz/*.test.ts) shares: the seed (fixed unless FUZZ_SEED=random,
 * printed; replay with FUZZ_SEED=<seed>), FUZZ_RUNS (scales every property's case count),
 * FUZZ_SURVEY=1 (every case run, violations printed by kind), and one seeded world per file
 * (each file has its own table, bucket and embedded servers, so the two vitest workers run
 * two files side by side), opened before the file's tests and closed after them, with the
 * timing of each property printed.
 */

// A fixed seed by default, so CI is reproducible; FUZZ_SEED=random draws a new one (printed).
export const FUZZ_SEED =
  process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 20261201);
const survey = process.env.FUZZ_SURVEY === '1';
const scale = Number(process.env.FUZZ_RUNS ?? '1');

/** A property's case count, scaled by FUZZ_RUNS. */
export const runs = (n: number): number => Math.max(1, Math.round(n * scale));

/** The budget of one property (a busy machine: x4 of idle and more). */
export const PROPERTY_MS = 300_000;

export interface FuzzSuite {
  world: FuzzWorld;
  runner: FuzzRunner;
}

/** Opens the file's world (then `ready`, the file's own checks and fixtures) before its tests; closes it after them. */
export function fuzzSuite(file: string, ready: (suite: FuzzSuite) => Promise<void> = async () => undefined): FuzzSuite {
  const suite = {} as FuzzSuite;
  beforeAll(async () => {
    console.log(`fuzz seed: ${FUZZ_SEED} (replay: FUZZ_SEED=${FUZZ_SEED} npx vitest run ${file})`);
    suite.world = await openFuzzWorld();
    suite.runner = new FuzzRunner(suite.world);
    await ready(suite);
  }, 240_000);

  afterAll(async () => {
    const { runner, world } = suite;
    for (const [property, t] of runner?.timing ?? [])
      console.log(`fuzz ${property}: ${t.cases} cases in ${(t.ms / 1000).toFixed(1)} s`);
    if (runner) console.log(`fuzz snapshots: ${(runner.snapshotMs / 1000).toFixed(1)} s in all`);
    if (survey && runner) {
      for (const [property, kinds] of runner.survey) {
        const lines = [...kinds]
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([kind, k]) => `  ${k.count}× ${kind}\n    e.g. ${k.example.replace(/\n/g, '\n    ')}`);
        console.log(`survey ${property}: ${lines.length ? `\n${lines.join('\n')}` : 'clean'}`);
      }
    }
    await world?.close();
  }, 120_000);
  return suite;
}
