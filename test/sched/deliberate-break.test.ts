import { describe, expect, it, vi } from 'vitest';
import type * as JournaledWrite from '../../src/delivery/journal/journaled-write.js';
import { firstBreak, scenarioWorld } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/*
 * THE DELIBERATE BREAK (issue #13): the custody fence check skipped. `requireFence` is the
 * one function every journaled write (transition, facts, checkpoint), every carried step
 * state and `assertCustody` use to demand that the caller's fence IS the current custody;
 * the transaction's own condition only says "custody unchanged since I read it". With the
 * check gone, a session fenced by a takeover writes as if it still held custody. The
 * delivery scenario's CI seeds (the ones npm test runs) must find it: the first schedule
 * that breaks an invariant ends the search.
 */
vi.mock('../../src/delivery/journal/journaled-write.js', async (importOriginal) => ({
  ...(await importOriginal<typeof JournaledWrite>()),
  requireFence: () => undefined,
}));

const CI_SEEDS = 120;

describe('the deliberate break: delivery with the custody fence check skipped', () => {
  const world = scenarioWorld(deliveryScenario);

  // Measured: the search stops within the first few seeds (~1 s each idle); 600 s covers all 120 on a loaded machine.
  it('a CI seed of the delivery scenario fails with Sched.InvariantViolation', async () => {
    const found = await firstBreak(deliveryScenario, world(), CI_SEEDS, 'the skipped fence check');
    expect(found.error?.name).toBe('Sched.InvariantViolation');
  }, 600_000);
});
