import { describe, expect, it } from 'vitest';
import { acquireCustody } from '../../src/delivery/custody.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { runIdOf } from '../../src/quality/admission.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { newInvocationId } from '../support/delivery-world.js';
import { publicationManifest, usePublicationWorld } from '../support/publication-world.js';

/**
 * prepared.json is written once under a create-only key (`If-None-Match: *`, enforced by S3
 * and by the local emulator), before the capsule's journal record. When the process dies
 * between the two and a NEW session takes custody (reconcile, resume), its re-run of the
 * step must compute the same bytes, or the put conflicts with the first write forever (the
 * full publish-clickhouse matrix at `quality.capsule.prepare` × crash-before/fail/lose-request).
 * The document's original run is the session that began the operation, never the fence's.
 */
const world = usePublicationWorld();

describe('PrepareCapsule re-run under a new session after prepared.json landed', () => {
  it('writes the same bytes (REUSED), the capsule is PREPARED with them, and its original run is the session that began', async () => {
    await world.createTarget('events_takeover');
    const manifestText = publicationManifest({ table: 'events_takeover' });
    const deps = world.deps(manifestText);
    const begun = await begin(world.beginInput(newInvocationId(), manifestText), deps);
    await stepsThrough(begun, deps);
    expect(await fillCandidate(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true });
    const ref = { targetId: begun.targetId, invocationId: begun.invocationId };

    // prepared.json lands, then the process dies before the capsule's journal record.
    world.stores.faults.arm(`${QUALITY_CUT_POINTS.capsulePrepare}:crash-before`);
    try {
      await expect(prepareCapsule(begun, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    } finally {
      world.stores.faults.disarm();
    }
    expect(await readCapsule(deps.ports, ref)).toBeUndefined();
    const key = qualityEvidenceKeyOf((await readInvocation(deps.ports, ref)).route, ref.invocationId, 'prepared');
    const first = await deps.ports.objects.get(key);
    expect(first).toBeDefined();

    // A recovery in another session takes custody and runs the step again.
    const takeover = await acquireCustody(deps.ports, ref, 'recovery-takeover');
    expect(takeover.fence.session).not.toBe(begun.fence.session);
    expect(await prepareCapsule({ ...begun, fence: takeover.fence, known: null }, deps)).toMatchObject({
      state: 'VERIFIED_EOF',
      acted: true,
      failures: [],
    });

    const capsule = await readCapsule(deps.ports, ref);
    expect(capsule).toMatchObject({
      schema: 2,
      state: 'PREPARED',
      prepared: { key, sha256: sha256Hex(first!.bytes) },
      runs: { originalRunId: runIdOf(begun.fence.session) },
    });
    const after = await deps.ports.objects.get(key);
    expect(sha256Hex(after!.bytes)).toBe(sha256Hex(first!.bytes));
  }, 120_000);
});
