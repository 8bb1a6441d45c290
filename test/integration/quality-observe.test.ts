import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { readCompletionDocument } from '../../src/domain/quality/evidence.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { observeTarget, observeTargetStep } from '../../src/quality/steps/observe-target.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';

let world: ObserveWorld;
beforeAll(async () => {
  world = await openObserveWorld();
}, 180_000);
afterAll(async () => {
  await world?.close();
});

const v2 = async (ports: Parameters<typeof readCapsule>[0], ref: Parameters<typeof readCapsule>[1]) => {
  const capsule = await readCapsule(ports, ref);
  if (!capsule || capsule.schema !== 2) throw new Error('expected a v2 capsule');
  return capsule;
};

describe('ObserveTarget (seed 000 §4.4): the original probes on the published generation, under the reader guard', () => {
  it('COMPLETE: probes pass on C, one persist-and-release, completion.json version = the capsule version the COMPLETE write produced (I4)', async () => {
    const { deps, begun, ref, route } = await world.published();
    const before = await v2(deps.ports, ref);
    expect(before).toMatchObject({ state: 'PREPARED' });
    const out = await observeTargetStep(begun, deps, await world.reader(deps));
    expect(out).toMatchObject({ state: 'PUBLISHED', acted: true, capsuleState: 'COMPLETE', outcome: 'COMPLETE', remoteTermination: 'not_applicable' });

    const capsule = await v2(deps.ports, ref);
    expect(capsule.reader).toBeUndefined();
    expect(capsule.state).toBe('COMPLETE');
    // acquire (v+1), persist COMPLETE (v+2 = completion.version), evidence fact (v+3).
    expect(capsule.completion?.version).toBe(before.version + 2);
    expect(capsule.version).toBe(before.version + 3);
    const key = qualityEvidenceKeyOf(route, ref.invocationId, 'completion');
    expect(capsule.completion?.evidence?.key).toBe(key);
    const stored = await deps.ports.objects.get(key);
    const doc = readCompletionDocument(Buffer.from(stored!.bytes).toString('utf8'), capsule.completion!.evidence!.sha256, capsule.coreDigest);
    expect(doc).toMatchObject({ version: before.version + 2, candidateUuid: candidateUuidOf(ref.invocationId) });
    expect(doc.results.every((r) => r.result === 'PASSED')).toBe(true);

    // A re-run does nothing: COMPLETE is final, its evidence recorded.
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({ acted: false, capsuleState: 'COMPLETE' });
    expect((await v2(deps.ports, ref)).version).toBe(capsule.version);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });
});
