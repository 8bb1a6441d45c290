import { describe, expect, it } from 'vitest';
import { qualityDemo, QUALITY_DEMO_RUN_FAULTS, QUALITY_DEMO_SLOW_PROBE } from '../../src/demo/quality-demo.js';
import { QUALITY_DEMO_CLICKHOUSE_ENV } from '../../src/demo/quality-demo-world.js';
import { freshStores } from '../support/emulators.js';

/**
 * `cutpoint demo quality`, run in-process once (the bin is not spawned) on a fresh table
 * and bucket of the run's DynamoDB Local and S3 emulator, with its own ClickHouse host: the publish-clickhouse flow with the
 * EXCHANGE answer lost, then inspect → reconcile → observe (deadline) → observe → resume →
 * replay. The demo checks its own outcome and throws when it does not hold; this test
 * asserts the document stage by stage.
 */
describe('cutpoint demo quality', () => {
  it('lost EXCHANGE answer → reconcile by UUID → TARGET_PENDING at the deadline → COMPLETE → CUSTODY_RELEASED → replay receipt; every window row once, one dispatch', async () => {
    const faultsBefore = process.env.CUTPOINT_FAULTS;
    // The run's DynamoDB Local and S3 emulator (a fresh table and bucket); the demo starts its own ClickHouse host.
    const doc = await qualityDemo({ ports: (await freshStores()).ports });

    expect(doc.run).toMatchObject({ flow: 'publish-clickhouse', status: 'FAILED', error: 'Delivery.NeedsRecovery' });
    expect(doc.run.command).toContain(`--faults '${QUALITY_DEMO_RUN_FAULTS}'`);
    expect(doc.inspect.projection).toMatchObject({ state: 'PUBLICATION_UNKNOWN', permitted_actions: ['reconcile'] });
    expect(doc.inspect.quality).toMatchObject({ capsule_state: 'PREPARED', dispatch_count: 1 });
    expect(doc.reconcile.projection.state).toBe('PUBLISHED');

    // The first observation overran its deadline inside the reader child: pending, guard released, remote end unverified.
    expect(doc.observePending.command).toMatch(
      new RegExp(
        `^CUTPOINT_FAULTS='${QUALITY_DEMO_SLOW_PROBE}' npx cutpoint quality observe inv-\\S+ --manifest \\S+#daily --yes`,
      ),
    );
    expect(doc.observePending).toMatchObject({ capsuleState: 'TARGET_PENDING', remoteTermination: 'UNVERIFIED' });
    expect(doc.observePending.quality).toMatchObject({
      journal_state: 'PUBLISHED',
      capsule_state: 'TARGET_PENDING',
      diagnostic_code: 'quality.target_pending',
      permitted_actions: ['observe'],
      reader_guard: { held: false },
      replay_details: {
        governance: 'pending',
        target_commit: 'proven',
        last_observation: { outcome: 'TARGET_PENDING', error_class: 'DEADLINE', remote_termination: 'UNVERIFIED' },
      },
    });
    expect(doc.observeComplete.quality).toMatchObject({
      capsule_state: 'COMPLETE',
      reader_guard: { held: false },
      replay_details: { governance: 'complete' },
    });
    expect(doc.observeComplete.quality.permitted_actions).toEqual(expect.arrayContaining(['resume', 'replay']));

    expect(doc.resume.projection).toMatchObject({ state: 'CUSTODY_RELEASED', holds_custody: false });
    expect(doc.resume.quality).toMatchObject({
      capsule_state: 'COMPLETE',
      permitted_actions: ['replay'],
      dispatch_count: 1,
    });
    expect(doc.replay.receipt).toMatchObject({
      kind: 'cutpoint.quality-replay-receipt.v1',
      invocation_id: doc.invocationId,
      dispatch_count: 1,
      reader_guard: 'released',
      quality: { governance: 'complete' },
      generation: { match: true },
      source_reads: 0,
      target_writes: 0,
    });

    expect(doc.outcome).toMatchObject({
      state: 'CUSTODY_RELEASED',
      governanceSequence: ['PREPARED', 'TARGET_PENDING', 'COMPLETE', 'COMPLETE'],
      capsuleRetired: true,
      dispatchCount: 1,
      replayChangedNothing: true,
      duplicates: 0,
      missing: 0,
      rowsOutsideWindow: 0,
      previousGenerationRows: 0,
      sourceCallsDuringRecovery: 0,
      custodyHeld: false,
    });
    expect(doc.outcome.windowRowsInSource).toBeGreaterThan(0);
    expect(doc.outcome.rowsInTarget).toBe(doc.outcome.windowRowsInSource);
    expect(doc.outcome.replay.capsuleVersionAfter).toBe(doc.outcome.replay.capsuleVersionBefore);

    // Nothing of the connection is printed; the demo's variables are gone and the faults variable is as it was.
    expect(JSON.stringify(doc)).not.toMatch(/127\.0\.0\.1|localhost|https?:\/\//);
    expect(process.env[QUALITY_DEMO_CLICKHOUSE_ENV]).toBeUndefined();
    expect(process.env.CUTPOINT_FAULTS).toBe(faultsBefore);
  }, 120_000);
});
