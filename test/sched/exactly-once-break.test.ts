import { describe, expect, it, vi } from 'vitest';
import type * as Publication from '../../src/adapters/postgres/publication.js';
import { quoteTable } from '../../src/adapters/postgres/sql.js';
import { firstBreak, scenarioWorld } from '../support/sched/vitest-schedules.js';
import { deliveryScenario } from './scenarios/delivery.js';

/*
 * THE RECEIPTLESS PUBLICATION: the PostgreSQL target's publication transaction replaces the
 * window's rows and commits them without its receipt row — the row is deleted again before
 * COMMIT — yet returns the receipt as if it had been written. The journal goes on to
 * PUBLISHED and CUSTODY_RELEASED on that answer, and the client is told SUCCEEDED; but the
 * target now holds a window no receipt accounts for (a replay would publish it again, and
 * reconcile or retire would find nothing published). The delivery history checker
 * (test/support/delivery-history/exactly-once.ts) must catch it from what the clients were
 * told: an acknowledged delivery without exactly one receipt.
 */
vi.mock('../../src/adapters/postgres/publication.js', async (importOriginal) => {
  const actual = await importOriginal<typeof Publication>();
  return {
    ...actual,
    publishBody: async (...args: Parameters<typeof Publication.publishBody>) => {
      const [client, request, receipts] = args;
      const result = await actual.publishBody(...args);
      if (result.commit)
        await client.query(`DELETE FROM ${quoteTable(receipts)} WHERE invocation_id = $1`, [request.invocationId]);
      return result;
    },
  };
});

const CI_SEEDS = 40;

describe('the receiptless publication: the delivery history checker catches it', () => {
  const world = scenarioWorld(deliveryScenario);

  it('a CI seed of the delivery scenario fails: a delivery acknowledged without its one receipt', async () => {
    const found = await firstBreak(deliveryScenario, world(), CI_SEEDS, 'the receiptless publication');
    expect(found.error).toMatchObject({
      name: 'Sched.InvariantViolation',
      message: expect.stringMatching(
        /\[history-exactly-once\]: .* acknowledged the window delivered .* 0 receipt\(s\)/,
      ),
    });
  }, 600_000);
});
