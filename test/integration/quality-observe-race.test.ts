import { describe, expect, it } from 'vitest';
import { acquireCustody } from '../../src/delivery/custody.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { loadCustody } from '../../src/delivery/journal/records.js';
import type { AuthorityStore } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { operatorObservation } from '../../src/quality/operator-observe.js';
import { observeTarget } from '../../src/quality/steps/observe-target.js';
import type { StepInput } from '../../src/delivery/steps/common.js';
import { useObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest } from '../support/publication-world.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';
import { exchangeModeOver } from '../support/exchange-mode.js';

/**
 * The operator's `quality observe` racing the flow's ObserveTarget (found by the scheduler,
 * test/sched/scenarios/publication.ts, seed 47): the flow acquires the reader guard AFTER the
 * operator's guide check and BEFORE the operator's custody write. Taking custody then would
 * fence the flow's session out of ever persisting its observation or releasing its guard —
 * a guard held forever with no incident. The custody write carries the capsule's version
 * as read, so it is refused and the flow keeps custody.
 */
const ctx = useObserveWorld();

/**
 * A seam on the real store: just before the first custody transaction through `ports`, the
 * flow's observation acquires the reader guard and its process dies (the guard stays, as
 * after a crash right after the acquire).
 */
function guardTakenBeforeCustody(
  world: ObserveWorld,
  deps: DeliveryDeps,
  begun: StepInput,
): { ports: Ports; raced: () => boolean } {
  let raced = false;
  const racing: AuthorityStore = Object.create(deps.ports.authority) as AuthorityStore;
  racing.transact = async (cutPoint, legs) => {
    if (cutPoint === 'delivery.custody.acquire' && !raced) {
      raced = true;
      world.stores.faults.arm('quality.reader.acquire:crash-after');
      try {
        await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
          name: 'Cutpoint.WorkerCrashed',
        });
      } finally {
        world.stores.faults.disarm();
      }
    }
    return deps.ports.authority.transact(cutPoint, legs);
  };
  return { ports: { ...deps.ports, authority: racing }, raced: () => raced };
}

describe('operator observe vs the flow acquiring the guard in between', () => {
  it('the custody takeover is refused (Quality.ReaderGuardHeld); the flow keeps custody and its guard', async () => {
    const { world } = ctx;
    const { deps, begun, ref, table } = await world.published();
    // Just before the operator's custody transaction, the flow's observation acquires the guard and its process dies.
    const { ports, raced } = guardTakenBeforeCustody(world, deps, begun);
    const held = await (async () => {
      const input = {
        invocationId: ref.invocationId,
        manifestText: publicationManifest({ table }),
        selector: '/config/publish.yaml#daily',
        session: 'observe-race',
      };
      await expect(
        operatorObservation(input, {
          ports,
          target: deps.target,
          exchange: exchangeOf(deps),
          route: deps.route,
          reader: await world.reader(deps),
        }),
      ).rejects.toMatchObject({
        name: 'Quality.ReaderGuardHeld',
        code: 'quality.reader_guard_held',
      });
      return readCapsule(deps.ports, ref);
    })();
    expect(raced()).toBe(true);
    expect(held).toMatchObject({ state: 'PREPARED', reader: { fence: begun.fence } });
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({
      state: 'HELD',
      epoch: begun.fence.epoch,
      fence: { session: begun.fence.session },
    });
  }, 120_000);

  it("resume's takeover has the same race: refused (Quality.ReaderGuardHeld) when the flow took the guard after resume's checks; the flow keeps custody and its guard", async () => {
    const { world } = ctx;
    const { deps, begun, ref, table } = await world.published();
    // The same race for delivery resume (which observes a PUBLISHED operation whose capsule is PREPARED).
    const { ports, raced } = guardTakenBeforeCustody(world, deps, begun);
    const reader = await world.reader(deps);
    const input = {
      invocationId: ref.invocationId,
      manifestText: publicationManifest({ table }),
      selector: '/config/publish.yaml#daily',
      session: 'resume-race',
    };
    await expect(
      resume(input, {
        ports,
        target: deps.target,
        mode: exchangeModeOver(exchangeOf(deps), () => Promise.resolve(reader)),
        route: deps.route,
      }),
    ).rejects.toMatchObject({
      name: 'Quality.ReaderGuardHeld',
      code: 'quality.reader_guard_held',
    });
    expect(raced()).toBe(true);
    expect(await readCapsule(deps.ports, ref)).toMatchObject({ state: 'PREPARED', reader: { fence: begun.fence } });
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({
      state: 'HELD',
      epoch: begun.fence.epoch,
      fence: { session: begun.fence.session },
    });
  }, 120_000);

  it('a takeover between the guard acquire and the persist (seed 75: a reconcile) ⇒ Quality.Incomplete, the guard kept, so the incident step reports it', async () => {
    const { world } = ctx;
    const { deps, begun, ref } = await world.published();
    let took = false;
    const racing: AuthorityStore = Object.create(deps.ports.authority) as AuthorityStore;
    racing.transact = async (cutPoint, legs) => {
      if (cutPoint === 'quality.complete.commit' && !took) {
        took = true;
        await acquireCustody(deps.ports, ref, 'recovery-takeover');
      }
      return deps.ports.authority.transact(cutPoint, legs);
    };
    const observing = { ...deps, ports: { ...deps.ports, authority: racing } };
    await expect(observeTarget(begun, observing, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.Incomplete',
    });
    expect(took).toBe(true);
    expect(await readCapsule(deps.ports, ref)).toMatchObject({ state: 'PREPARED', reader: { fence: begun.fence } });
  }, 120_000);
});
