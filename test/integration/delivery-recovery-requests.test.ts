import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { beginInput, manifestText, openWindowWorld, route, selector } from '../support/deliver-window-fixture.js';
import { runLosingCommitAnswer } from '../support/delivery-steps.js';
import { newInvocationId, type DeliveryWorld } from '../support/delivery-world.js';

/**
 * What a live recovery action reads from the authority (src/delivery/recovery/
 * recovery-session.ts `runRecovery`), as deliver-window-steps.test.ts counts a delivery's:
 * the checked load and the session's begin record once, then nothing the takeover or the
 * action's last write already returned. Every DynamoDB request of the action is counted,
 * so a new kind of read fails here too. Real components (the deliver-window fixture's
 * world, a SQL route); each action runs once, on a fresh recovery session.
 */

let world: DeliveryWorld;
let deps: DeliveryDeps;
let recoveryDeps: RecoveryDeps;
const input = (invocationId: string): RecoveryInput => ({ invocationId, manifestText, selector });

beforeAll(async () => {
  ({ world, deps } = await openWindowWorld());
  recoveryDeps = world.recoveryDeps(route, forbiddenSource());
});

afterAll(() => world?.close());

/** The DynamoDB requests `run` made, by operation. */
async function requestsOf(run: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = world.stores.meter.snapshot();
  await run();
  const after = world.stores.meter.snapshot();
  const used = Object.keys(after)
    .filter((op) => op.startsWith('dynamodb.') && after[op] !== before[op])
    .map((op) => [op, (after[op] ?? 0) - (before[op] ?? 0)] as const);
  return Object.fromEntries(used);
}

/**
 * Before any action writes: the checked load of the invocation (`loadInvocation`: its
 * pointer, its record, the target's custody and the journal's records 1, head and head + 1
 * — what proves the journal consistent before a session acts on it) and the session's
 * begin record (its claim and record: a session is granted custody at most once, and the
 * one that began the invocation gets its begin grant back, custody.ts `acquireCustody`).
 * The takeover is planned on the checked load, the action's first write on what the
 * takeover wrote.
 */
const SESSION_READS = 6 + 2;

describe('requests of a live recovery action', () => {
  it('reconcile (a lost COMMIT answer, the receipt found), then resume: the session reads, then only what no write returned', async () => {
    const invocationId = newInvocationId();
    await runLosingCommitAnswer(world, await begin(beginInput(invocationId), deps), deps);
    const reconciled = await requestsOf(async () => {
      expect(await reconcile(input(invocationId), recoveryDeps)).toMatchObject({ state: 'PUBLISHED' });
    });
    // One write for custody, one for PUBLISHED. Was 30 GetItem and 2 TransactGetItems: the
    // invocation loaded four more times (after the takeover, for the projection, for the
    // state) and a snapshot read before each write.
    expect(reconciled).toEqual({ 'dynamodb.GetItem': SESSION_READS, 'dynamodb.TransactWriteItems': 2 });

    const resumed = await requestsOf(async () => {
      expect(await resume(input(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    });
    // The steps whose turn it is not read the record to know it (steps/carried.ts: the
    // first one on what the takeover left, acted false, then from the journal): create-
    // staging, plan-parts, verify-eof, quality, publish once each; extract-load-parts the
    // record, then each of its 3 parts the record and its head; evidence the record and
    // the custody (the steps before it carried none on); the checkpoint its route
    // checkpoint; cleanup nothing. The projection reads the record once: cleanup released
    // custody and hands on none. Writes: custody, evidence, checkpoint with SUCCEEDED,
    // release. Was 44 GetItem and 1 TransactGetItems (43 once a SQL route's resume stopped
    // reading a capsule it can never have).
    const steps = 5 + (1 + 3 * 2) + 2 + 1;
    expect(resumed).toEqual({ 'dynamodb.GetItem': SESSION_READS + steps + 1, 'dynamodb.TransactWriteItems': 4 });
  });

  it('retire (EMPTY_STAGING, the stage recorded): the session reads, then one write for custody and one for RETIRED', async () => {
    const invocationId = newInvocationId();
    await createStaging(await begin(beginInput(invocationId), deps), deps);
    const requests = await requestsOf(async () => {
      expect(await retire(input(invocationId), recoveryDeps)).toMatchObject({ state: 'RETIRED' });
    });
    // Was 30 GetItem and 2 TransactGetItems.
    expect(requests).toEqual({
      'dynamodb.GetItem': SESSION_READS,
      'dynamodb.TransactWriteItems': 2,
    });
  });
});
