import { beforeAll, describe, expect, it } from 'vitest';
import { GC_CUT_POINTS } from '../../src/stream/gc/cut-points.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { matrixCutPoints } from '../support/matrix-cut-points.js';
import { MATRIX_LANE, withKinds } from '../support/matrix-lane.js';
import { compactedGcWorld } from './stream-gc-compacted-world.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import { expectGcInvariant, gcFlow, gcWorld, rootOf, type GcWorld } from './stream-gc-world.js';

/**
 * The GC fault matrix (docs/rules.md#gc; issue 11, "Done when"): every GC cut point × the six
 * fault kinds (npm test: one kind per cut point, rotated; npm run test:matrix: all), on a lane
 * with live committed ranges, a trim and orphans, through statemachines/stream-gc.asl.json on
 * the local runner. Then recovery — a fresh run of the flow (a fresh scanner: nothing is
 * carried over from the faulted run) — and the invariant: no live byte deleted, no deleted byte
 * readable, every orphan past grace (and every trimmed object) deleted exactly once, counting
 * the DELETEs that applied. A second lane arms the fault on EVERY hit, so the faulted run fails
 * part-way (roots left MARKED or DELETING with sealed journals) and the recovery run resumes
 * from what is durable (a DELETE that went out and never applied closes its root as a late
 * object instead: the recovery run collects it under a new epoch, still once). A third and
 * fourth lane do the same on a lane with compactions (stream-gc-compacted-world.ts): one
 * committed below the trim, one aborted output, one committed above the trim that supersedes
 * WAL copies, one PREPARED — the compacted objects join the same invariant.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

/** Every cut point of the flow, in its spec's order (src/registry/flow-cut-points.ts). */
const GC_CUTS = matrixCutPoints('stream-gc', {});

/** The lanes the matrix runs on: the classic one, and one with compaction outputs of every fate. */
const LANES = [
  { name: '', label: 'gc', build: gcWorld, offset: 0 },
  { name: 'compacted objects: ', label: 'gcc', build: compactedGcWorld, offset: 2 },
] as const;

/** One fault: retries inside the flow resolve it by exact identity; a fresh run finds nothing left to repair. */
async function oneFault(world: GcWorld, cut: string, kind: string): Promise<FlowResult> {
  const injector = stores.faults.arm(`${cut}:${kind}`);
  const faulted = await gcFlow(world, { grace: '0s' });
  stores.faults.disarm();
  expect(injector.fired.length, `no fault fired at ${cut}`).toBeGreaterThan(0);
  expect(faulted.status, `${faulted.error}: ${faulted.cause}`).toBe('SUCCEEDED');
  const recovery = await gcFlow(world, { grace: '0s' });
  expect(recovery.status).toBe('SUCCEEDED');
  await expectGcInvariant(world);
  return recovery;
}

/**
 * A fault on every hit: an effect that never applies stops the run; one that applies
 * (crash-after, lose-response) is found applied by exact identity on the retry. Whatever
 * the faulted run left (roots MARKED, DELETING with a sealed journal, objects deleted but
 * roots not DELETED), a fresh run finishes it, deleting nothing twice.
 */
async function everyHit(world: GcWorld, cut: string, kind: string): Promise<void> {
  const injector = stores.faults.arm(`${cut}:${kind}${kind === 'delay' ? '=5' : ''}*`);
  const faulted = await gcFlow(world, { grace: '0s' });
  stores.faults.disarm();
  expect(injector.fired.length).toBeGreaterThan(0);
  // A DELETE that never applies does not stop the run: its journal recorded that it went
  // out, so the object still there may be an identical late object — the root closes as one
  // and the next run renews it (a new epoch, a fresh grace: src/stream/gc/delete.ts).
  const closesAsLate = cut === GC_CUT_POINTS.delete && kind !== 'fail';
  if ((kind === 'crash-before' || kind === 'fail' || kind === 'lose-request') && !closesAsLate)
    expect(faulted.status, 'an effect that never applies must stop the run').toBe('FAILED');
  const recovery = await gcFlow(world, { grace: '0s' });
  expect(recovery.status, `${recovery.error}: ${recovery.cause}`).toBe('SUCCEEDED');
  await expectGcInvariant(world);
}

for (const lane of LANES) {
  describe(`${lane.name}one fault at each GC cut point (${MATRIX_LANE})`, () => {
    it.each(withKinds(GC_CUTS, lane.offset))('%s × %s', async (cut, kind) => {
      const world = await lane.build(stores.ports, `${lane.label}-${kind}`);
      const recovery = await oneFault(world, cut, kind);
      if (cut === GC_CUT_POINTS.delete || cut === GC_CUT_POINTS.finalize) {
        // A root DELETED by the faulted run is retired by the recovery run (grace 0s: retention.ts).
        for (const key of world.orphans) {
          const root = await rootOf(world, key);
          if (root) expect(root.journal?.policyDigest).toBe((recovery.output as { policyDigest: string }).policyDigest);
        }
      }
    });
  });

  describe(`${lane.name}a fault on every hit of each GC cut point, then a fresh run (${MATRIX_LANE})`, () => {
    it.each(withKinds(GC_CUTS, lane.offset + 1))('%s × %s*', async (cut, kind) => {
      await everyHit(await lane.build(stores.ports, `${lane.label}p-${kind}`), cut, kind);
    });
  });
}
