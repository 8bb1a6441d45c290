import { describe, expect, it, vi } from 'vitest';
import type * as Load from '../../src/generation/load.js';
import { firstBreak, scenarioWorld } from '../support/sched/vitest-schedules.js';
import { generationScenario } from './scenarios/generation.js';

/*
 * THE STRADDLE, re-introduced: generation resolution by two separate reads (the record and
 * the head, side by side), as it was before the one-snapshot read (authority getTogether).
 * A commit moves the record and the head in one transaction; two reads can straddle it and
 * see the record COMMITTED with the head still behind, so a worker racing another on the
 * same task fails Generation.Inconsistent on an intact authority. CI's race matrix found it
 * once in ~150 runs; the scheduler finds it only because reads are scheduling points
 * (test/support/sched/scheduler.ts `read`), each moving alone, so a schedule can put the
 * commit between them. The generation scenario's CI seeds must find it.
 */
vi.mock('../../src/generation/load.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Load>();
  return {
    ...actual,
    loadResolution: async (
      ports: Parameters<typeof Load.loadResolution>[0],
      ref: Load.TaskRef,
      task?: Load.LoadedTask,
    ) => {
      const loaded = task ?? (await actual.loadTask(ports, ref));
      const [record, head] = await Promise.all([
        actual.loadRecord(ports, ref.root, loaded.generation),
        actual.loadRootHead(ports, ref.root),
      ]);
      return actual.resolved(loaded, record, head);
    },
  };
});

const CI_SEEDS = 160;

describe('the straddle: generation resolution by two separate reads', () => {
  const world = scenarioWorld(generationScenario);

  it('a CI seed of the generation scenario fails: Generation.Inconsistent on an intact authority', async () => {
    const found = await firstBreak(generationScenario, world(), CI_SEEDS, 'the two-read resolution');
    expect(found.error).toMatchObject({
      name: 'Sched.InvariantViolation',
      message: expect.stringContaining('Generation.Inconsistent'),
    });
  }, 600_000);
});
