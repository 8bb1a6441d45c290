import { describe, expect, it, vi } from 'vitest';
import type * as Read from '../../src/stream/read.js';
import { firstBreak, scenarioWorld } from '../support/sched/vitest-schedules.js';
import { streamScenario } from './scenarios/stream.js';

/*
 * THE SKIPPING READ: a read that drops the first record of every page of two or more and
 * numbers the rest as if nothing were missing (so its offsets stay contiguous). The stream
 * history checker (test/support/stream-history/log-linearizable.ts) must catch it from the
 * clients' history alone: the stream scenario's CI seeds fail with the history not
 * linearizable, before any of the model's own checks is consulted.
 */
vi.mock('../../src/stream/read.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Read>();
  return {
    ...actual,
    readStream: async (...args: Parameters<typeof Read.readStream>) => {
      const result = await actual.readStream(...args);
      if (result.records.length < 2) return result;
      const records = result.records.slice(1).map((r, i) => ({ ...r, offset: result.from + i }));
      return { ...result, records, next: result.from + records.length };
    },
  };
});

const CI_SEEDS = 100;

describe('the skipping read: the stream history checker catches it', () => {
  const world = scenarioWorld(streamScenario);

  it('a CI seed of the stream scenario fails: the history is not linearizable', async () => {
    const found = await firstBreak(streamScenario, world(), CI_SEEDS, 'the skipping read');
    expect(found.error).toMatchObject({
      name: 'Sched.InvariantViolation',
      message: expect.stringContaining('the history is not linearizable: read'),
    });
  }, 600_000);
});
