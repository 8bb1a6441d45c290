import { describe, expect, it, vi } from 'vitest';
import { routeOfEvent } from '../../src/delivery/deps-provider.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { observeTarget } from '../../src/quality/steps/observe-target.js';
import { useObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest } from '../support/publication-world.js';
import { inspectOp } from '../support/quality-history.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

/**
 * Observation on AWS, on the local runner over the handlers Lambda runs (docs/rules.md#bounded-reader,
 * docs/rules.md#quality-commands):
 * the quality-observe flow (the operator's `quality observe --aws`) and the delivery-resume
 * flow of a PUBLISHED ClickHouse operation, both observing through the bounded reader in its
 * own process against the ClickHouse host.
 */
const ctx = useObserveWorld();

const run = (flow: string, input: object): Promise<FlowResult> =>
  runFlow(flow, input, {
    ports: ctx.world.stores.ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ...ctx.world.deps(), route: routeOfEvent(event) }),
  });
const entered = (result: FlowResult): string[] =>
  result.events.filter((e) => e.type === 'StateEntered' && e.state).map((e) => e.state!);
const selector = '/config/publish.yaml#daily';
/** The quality-observe flow with `faults` armed on the world's stores for its whole run. */
const observeUnder = async (faults: string, input: object): Promise<FlowResult> => {
  ctx.world.stores.faults.arm(faults);
  try {
    return await run('quality-observe', input);
  } finally {
    ctx.world.stores.faults.disarm();
  }
};

describe('quality-observe flow', () => {
  it('TARGET_PENDING (the flow observation ran out of budget) → the operator flow observes again ⇒ COMPLETE, the projection with the observation; refused without yes, nothing written', async () => {
    const { deps, begun, ref, table } = await ctx.world.published();
    // The flow's own observation with no budget left: the reader never starts, TARGET_PENDING persisted.
    expect(await observeTarget(begun, deps, await ctx.world.reader(deps, 0))).toMatchObject({
      capsuleState: 'TARGET_PENDING',
    });
    const pending = await readCapsule(ctx.world.stores.ports, ref);
    const input = { invocationId: ref.invocationId, manifestText: publicationManifest({ table }), selector };

    const refused = await run('quality-observe', { ...input, yes: false });
    expect(refused).toMatchObject({ status: 'FAILED', error: 'Quality.ConfirmationRequired' });
    expect(entered(refused)).toEqual(['Confirmed', 'ConfirmationRequired']);
    expect((await readCapsule(ctx.world.stores.ports, ref))?.version).toBe(pending?.version);

    const observed = await run('quality-observe', { ...input, yes: true });
    expect(observed, JSON.stringify(observed.events.filter((e) => e.error))).toMatchObject({ status: 'SUCCEEDED' });
    expect(entered(observed)).toEqual(['Confirmed', 'Observe', 'Observed']);
    expect(observed.output).toMatchObject({
      invocation_id: ref.invocationId,
      capsule_state: 'COMPLETE',
      permitted_actions: ['replay', 'resume'],
      observation: { outcome: 'COMPLETE', remote_termination: 'not_applicable' },
    });
    expect(await readCapsule(ctx.world.stores.ports, ref)).toMatchObject({ state: 'COMPLETE' });
    expect((await loadInvocation(ctx.world.stores.ports, ref.invocationId)).state).toBe('PUBLISHED');
  }, 60_000);

  it('a required probe failing on the published generation ⇒ capsule FAILED, NotifyIncident publishes the governance incident once, the execution fails Quality.Failed', async () => {
    const { ref, table } = await ctx.world.published();
    await ctx.world.ch.client.command({
      query: `ALTER TABLE pub.${table} UPDATE amount = -1 WHERE event_id IN (SELECT event_id FROM pub.${table} LIMIT 1) SETTINGS mutations_sync = 2`,
    });
    const failed = await run('quality-observe', {
      invocationId: ref.invocationId,
      manifestText: publicationManifest({ table }),
      selector,
      yes: true,
    });
    expect(failed).toMatchObject({ status: 'FAILED', error: 'Quality.Failed' });
    expect(entered(failed)).toEqual(['Confirmed', 'Observe', 'NotifyIncident', 'AfterIncident', 'QualityFailed']);
    expect(failed.notices).toHaveLength(1);
    expect(failed.notices[0]!.message).toMatchObject({
      flow: 'quality-observe',
      governance: {
        invocation_id: ref.invocationId,
        capsule_state: 'FAILED',
        failed_probes: ['assertion:no_negative_amounts'],
      },
    });
    expect(await readCapsule(ctx.world.stores.ports, ref)).toMatchObject({ state: 'FAILED' });
  }, 60_000);

  it('G4 for the operator: the Observe Lambda dies right after its guard acquire; the ASL retry (a new session) is refused Quality.ReaderGuardHeld, NotifyIncident reports the held guard (publication seed 2223)', async () => {
    const { ref, table } = await ctx.world.published();
    const died = await observeUnder('quality.reader.acquire:crash-after', {
      invocationId: ref.invocationId,
      manifestText: publicationManifest({ table }),
      selector,
      yes: true,
    });
    expect(died).toMatchObject({ status: 'FAILED', error: 'Quality.ReaderGuardHeld' });
    expect(entered(died)).toEqual(['Confirmed', 'Observe', 'NotifyIncident', 'AfterIncident', 'ReaderGuardHeld']);
    expect(died.notices).toHaveLength(1);
    expect(died.notices[0]!.message).toMatchObject({
      flow: 'quality-observe',
      governance: {
        invocation_id: ref.invocationId,
        diagnostic_code: 'quality.incomplete',
        reader_guard: { held: true },
      },
    });
    expect(await readCapsule(ctx.world.stores.ports, ref)).toMatchObject({
      state: 'PREPARED',
      reader: expect.any(Object),
    });
  }, 60_000);

  it('an observation that crashes on every attempt (the ASL retries exhausted) ends through NotifyIncident as Quality.Incomplete, not a bare Cutpoint.WorkerCrashed; no guard held, so no notice, and observe is still offered', async () => {
    const { ref, table } = await ctx.world.published();
    const died = await observeUnder('quality.reader.acquire:crash-before*', {
      invocationId: ref.invocationId,
      manifestText: publicationManifest({ table }),
      selector,
      yes: true,
    });
    expect(died).toMatchObject({ status: 'FAILED', error: 'Quality.Incomplete' });
    expect(entered(died).slice(-3)).toEqual(['NotifyIncident', 'AfterIncident', 'QualityIncomplete']);
    expect(died.events.filter((e) => e.type === 'StateEntered' && e.state === 'Observe')).toHaveLength(1);
    expect(died.notices).toEqual([]);
    const capsule = await readCapsule(ctx.world.stores.ports, ref);
    expect(capsule).toMatchObject({ state: 'PREPARED' });
    expect(capsule && 'reader' in capsule && capsule.reader).toBeFalsy();
    expect((await inspectOp(ctx.world.stores.ports, ref)).actions).toContain('observe');
  }, 60_000);
});

describe('delivery-resume flow on a ClickHouse exchange route', () => {
  it('a PUBLISHED operation with its capsule PREPARED (the run stopped after Dispatch) ⇒ observed to COMPLETE, evidence, checkpoint, cleanup, CUSTODY_RELEASED; no second EXCHANGE', async () => {
    const { deps, ref, table } = await ctx.world.published();
    const exchange = vi.spyOn(exchangeOf(deps), 'exchange');
    try {
      const result = await run('delivery-resume', {
        invocationId: ref.invocationId,
        manifestText: publicationManifest({ table }),
        selector,
        yes: true,
      });
      expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({
        status: 'SUCCEEDED',
        output: { state: 'CUSTODY_RELEASED' },
      });
      expect(exchange).not.toHaveBeenCalled();
    } finally {
      exchange.mockRestore();
    }
    expect(await readCapsule(ctx.world.stores.ports, ref)).toMatchObject({
      state: 'COMPLETE',
      retiredAt: expect.any(String),
    });
    expect(await loadCustody(ctx.world.stores.ports, ref.targetId)).not.toMatchObject({ state: 'HELD' });
  }, 60_000);
});
