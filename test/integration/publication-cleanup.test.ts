import { describe, expect, it } from 'vitest';
import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadCustody, releaseCustody } from '../../src/delivery/custody.js';
import { stagingRefOf, transitionIdOf } from '../../src/delivery/steps/common.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import type { StepInput } from '../../src/delivery/steps/common.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { MAX_READ_ROUNDS, readInvocation } from '../../src/delivery/journal/records.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { cleanupPublication } from '../../src/publication/steps/cleanup.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { inspectQuality } from '../../src/quality/inspect.js';
import { interceptPorts, landBeforeRead } from '../support/intercept-ports.js';
import { usePublicationWorld, windowIds } from '../support/publication-world.js';
import {
  completeByObserveSeam,
  DAY_MS,
  failedBySeam,
  fresh,
  pendingBySeam,
  published as publishedIn,
  rawUpdate,
  succeeded as succeededIn,
  stageName,
  type Ref,
} from '../support/publication-governance.js';

const world = usePublicationWorld();

let tables = 0;
const published = () => publishedIn(world, `events_${++tables}`);

const succeeded = () => succeededIn(world, `events_${++tables}`);

/** Evidence and checkpoint both refused with `name`, and nothing written: same record version, no evidence, no checkpoint. */
async function expectGovernanceRefusal(deps: DeliveryDeps, begun: StepInput, ref: Ref, name: string): Promise<void> {
  const before = await readInvocation(deps.ports, ref);
  await expect(persistEvidence(begun, deps)).rejects.toMatchObject({ name });
  await expect(checkpoint(begun, deps)).rejects.toMatchObject({ name });
  const after = await readInvocation(deps.ports, ref);
  expect(after.version).toBe(before.version);
  expect(after.state).toBe(before.state);
  expect(after.facts.checkpoint).toBeUndefined();
  expect(await loadCheckpoint(deps.ports, ref.targetId, deps.route.name)).toBeUndefined();
}

// T1 (its end) is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('ClickHouse publication after COMPLETE (docs/rules.md#governance-vs-publication): evidence, checkpoint, cleanup, retirement, successor', () => {
  it('T1 (end): evidence → checkpoint → predecessor P dropped by UUID and proved absent, stage gone, CUSTODY_RELEASED with the capsule retired; C stays published', async () => {
    const { deps, begun, ref, table, predecessor } = await published();
    const completed = await completeByObserveSeam(deps, ref);

    expect(await persistEvidence(begun, deps)).toMatchObject({ state: 'PUBLISHED', acted: true });
    expect(await checkpoint(fresh(begun), deps)).toMatchObject({ state: 'SUCCEEDED', acted: true });
    // The predecessor generation is still kept until cleanup (the only rollback an escalation might need).
    expect(await world.uuidOf(`${stageName(begun.invocationId)}_c`)).toBe(predecessor);

    const out = await cleanupPublication(fresh(begun), deps);
    expect(out).toMatchObject({ state: 'CUSTODY_RELEASED', acted: true, drop: 'ABSENT_PROVED' });
    expect(await world.uuidOf(`${stageName(begun.invocationId)}_c`)).toBeUndefined();
    expect(await world.uuidOf(stageName(begun.invocationId))).toBeUndefined();
    const anywhere = await (
      await world.ch.client.query({
        query: 'SELECT count() AS n FROM system.tables WHERE uuid = toUUID({u:String})',
        query_params: { u: predecessor },
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    expect(Number(anywhere[0]?.n)).toBe(0);
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    expect(await world.publishedWindowIds(table)).toEqual(windowIds);

    const record = await readInvocation(deps.ports, ref);
    expect(record.facts.dispatch?.count).toBe(1);
    expect(record.facts.absence).toBeDefined();
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({
      state: 'RELEASED',
      invocationId: ref.invocationId,
    });
    const retired = (await readCapsule(deps.ports, ref)) as CapsuleV2;
    expect(retired).toMatchObject({ state: 'COMPLETE', version: completed.version + 1 });
    expect(retired.retiredAt).toBeDefined();
    expect(Date.parse(retired.replay.windowEndsAt!)).toBe(Date.parse(completed.completion!.at) + 14 * DAY_MS);

    // Repeat-safe: a re-run does nothing.
    expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({ state: 'CUSTODY_RELEASED', acted: false });
  });

  it("quality inspect racing the cleanup's release sees the record and capsule of one moment, never a pair no writer produces", async () => {
    // The release moves the record (SUCCEEDED → CUSTODY_RELEASED) and retires the capsule in
    // one transaction. Read apart, inspect saw SUCCEEDED beside a retired capsule and showed
    // quality.state_inconsistent with no permitted action.
    const { deps, begun, ref } = await succeeded();
    const race = landBeforeRead(deps.ports, qualityKeys.capsule(ref.targetId, ref.invocationId), async () => {
      expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({ state: 'CUSTODY_RELEASED', acted: true });
    });
    const seen = await inspectQuality(race.ports, ref.invocationId);
    expect(race.landed()).toBe(1);
    expect(seen).toMatchObject({ journal_state: 'CUSTODY_RELEASED' });
    expect(seen.diagnostic_code).not.toBe('quality.state_inconsistent');
    expect(seen).toEqual(await inspectQuality(deps.ports, ref.invocationId));
  });

  it('quality inspect of an operation whose record moves at every snapshot gives up after a bounded number of reads: unavailable, never a guessed pair', async () => {
    const { deps, ref } = await succeeded();
    const key = deliveryKeys.invocation(ref.targetId, ref.invocationId);
    let snapshots = 0;
    const a = deps.ports.authority;
    const moving = interceptPorts(deps.ports, {
      authority: {
        getTogether: async (keys) => {
          snapshots++;
          // Another writer moves the record (same content, the next version) just before each snapshot.
          const current = (await a.get(key))!;
          expect(
            (await a.update('test.record.touch', key, { version: current.version }, { updatedAt: current.updatedAt }))
              .status,
          ).toBe('APPLIED');
          return a.getTogether(keys);
        },
      },
    });
    await expect(inspectQuality(moving, ref.invocationId)).rejects.toMatchObject({
      name: 'Delivery.JournalUnavailable',
      code: 'delivery.recovery_journal_unavailable',
    });
    expect(snapshots).toBe(MAX_READ_ROUNDS);
    // Left alone, the same operation inspects as it is.
    expect(await inspectQuality(deps.ports, ref.invocationId)).toMatchObject({ journal_state: 'SUCCEEDED' });
  });

  it("a duplicate cleanup (its Task retried while the first ran) releasing between this one's record and capsule reads: acted false, never a refusal", async () => {
    const { deps, begun, ref } = await succeeded();
    const race = landBeforeRead(deps.ports, qualityKeys.capsule(ref.targetId, ref.invocationId), async () => {
      expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({ state: 'CUSTODY_RELEASED', acted: true });
    });
    expect(await cleanupPublication(fresh(begun), { ...deps, ports: race.ports })).toMatchObject({
      state: 'CUSTODY_RELEASED',
      acted: false,
    });
    expect(race.landed()).toBe(1);
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({
      state: 'RELEASED',
      invocationId: ref.invocationId,
    });
  });

  it('I10: evidence and checkpoint refuse while the capsule is PREPARED, TARGET_PENDING or FAILED; nothing written', async () => {
    const { deps, begun, ref } = await published();
    await expectGovernanceRefusal(deps, begun, ref, 'Quality.TargetPending');
    await pendingBySeam(deps, ref);
    await expectGovernanceRefusal(deps, begun, ref, 'Quality.TargetPending');
    await failedBySeam(deps, ref);
    await expectGovernanceRefusal(deps, begun, ref, 'Quality.Failed');
    expect((await readInvocation(deps.ports, ref)).facts.evidence).toBeUndefined();
  });

  it('I10/N2: COMPLETE but the completion evidence deleted ⇒ evidence refused (missing); a capsule put back to TARGET_PENDING after the evidence ⇒ the checkpoint refuses it as a rollback (its completion document says otherwise), never SUCCEEDED', async () => {
    const { deps, begun, ref } = await published();
    const completed = await completeByObserveSeam(deps, ref);
    const key = completed.completion!.evidence!.key;
    const stored = await deps.ports.objects.get(key);
    await deps.ports.objects.delete('test.seam', key);
    await expect(persistEvidence(begun, deps)).rejects.toMatchObject({
      name: 'Quality.EvidenceInvalid',
      code: 'quality.evidence_missing',
    });
    expect((await readInvocation(deps.ports, ref)).facts.evidence).toBeUndefined();
    await deps.ports.objects.put('test.seam', key, stored!.bytes, stored!.metadata);
    expect(await persistEvidence(fresh(begun), deps)).toMatchObject({ state: 'PUBLISHED', acted: true });
    // TEST SEAM: the capsule rewritten behind the operation's back (no writer does this).
    await rawUpdate(deps, ref, completed.version, {
      state: 'TARGET_PENDING',
      completion: undefined,
      lastObservation: {
        runId: completed.runs.originalRunId,
        outcome: 'TARGET_PENDING',
        at: new Date().toISOString(),
        remoteTermination: 'UNVERIFIED',
      },
    });
    await expect(checkpoint(fresh(begun), deps)).rejects.toMatchObject({
      name: 'Quality.AuthorityRollback',
      code: 'quality.authority_version_rollback',
    });
    expect((await readInvocation(deps.ports, ref)).state).toBe('PUBLISHED');
    expect(await loadCheckpoint(deps.ports, ref.targetId, deps.route.name)).toBeUndefined();
  });

  it('a capsule put back below its completion version (a restore of the authority table): evidence, checkpoint and cleanup refuse it as a rollback and write nothing; the predecessor stays', async () => {
    const { deps, begun, ref, predecessor } = await published();
    await completeByObserveSeam(deps, ref);
    const key = qualityKeys.capsule(ref.targetId, ref.invocationId);
    // TEST SEAM: the item written back at version 1, its attributes as they were (no writer does this).
    const rollBack = async () => {
      const item = await deps.ports.authority.get(key);
      const { version, pk: _pk, sk: _sk, ...attributes } = item!;
      expect((await deps.ports.authority.delete('test.restore', key, { version })).status).toBe('APPLIED');
      expect((await deps.ports.authority.put('test.restore', { ...key, ...attributes }, 'absent')).status).toBe(
        'APPLIED',
      );
    };
    await rollBack();
    await expectGovernanceRefusal(deps, fresh(begun), ref, 'Quality.AuthorityRollback');
    expect(((await readCapsule(deps.ports, ref)) as CapsuleV2).version).toBe(1);

    // Continuous again (a capsule at its completion version), the operation reaches SUCCEEDED; rolled back then, cleanup refuses.
    const restored = (await readCapsule(deps.ports, ref)) as CapsuleV2;
    for (let v = restored.version; v < restored.completion!.version; v++)
      await rawUpdate(deps, ref, v, { replay: restored.replay });
    expect(await persistEvidence(fresh(begun), deps)).toMatchObject({ state: 'PUBLISHED' });
    expect(await checkpoint(fresh(begun), deps)).toMatchObject({ state: 'SUCCEEDED' });
    await rollBack();
    const before = await readInvocation(deps.ports, ref);
    await expect(cleanupPublication(fresh(begun), deps)).rejects.toMatchObject({
      name: 'Quality.AuthorityRollback',
      code: 'quality.authority_version_rollback',
    });
    expect(await readInvocation(deps.ports, ref)).toEqual(before);
    expect(((await readCapsule(deps.ports, ref)) as CapsuleV2).version).toBe(1);
    expect(await world.uuidOf(`${stageName(begun.invocationId)}_c`)).toBe(predecessor);
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({ state: 'HELD' });
  });

  it('the authority table replaced (DescribeTable names another table than the core sealed): evidence and checkpoint refuse Quality.AuthorityReplaced, then cleanup on SUCCEEDED does too; nothing is written, the predecessor stays', async () => {
    const { deps, begun, ref, predecessor } = await published();
    await completeByObserveSeam(deps, ref);
    const sealed = await deps.ports.authority.describeBinding();
    // A port hook on the real store: what DescribeTable answers after a restore into a new table.
    const restored = {
      ...deps,
      ports: interceptPorts(deps.ports, {
        authority: {
          describeBinding: async () => ({
            ...sealed,
            creationDateTime: new Date(Date.parse(sealed.creationDateTime) + 60_000).toISOString(),
          }),
        },
      }),
    };
    await expectGovernanceRefusal(restored, fresh(begun), ref, 'Quality.AuthorityReplaced');
    expect(await persistEvidence(fresh(begun), deps)).toMatchObject({ state: 'PUBLISHED' });
    expect(await checkpoint(fresh(begun), deps)).toMatchObject({ state: 'SUCCEEDED' });
    const before = await readInvocation(deps.ports, ref);
    await expect(cleanupPublication(fresh(begun), restored)).rejects.toMatchObject({
      name: 'Quality.AuthorityReplaced',
      code: 'quality.authority_replaced',
    });
    expect(await readInvocation(deps.ports, ref)).toEqual(before);
    expect(await world.uuidOf(`${stageName(begun.invocationId)}_c`)).toBe(predecessor);
  });

  it("the journal's rule holds a ClickHouse release to its cleanup: without the predecessor's absence and the capsule's retirement recorded, SUCCEEDED → CUSTODY_RELEASED is refused and custody stays held", async () => {
    const { deps, begun, ref } = await succeeded();
    const record = await readInvocation(deps.ports, ref);
    const staging = stagingRefOf(record);
    const release = (patch: Record<string, unknown>) =>
      releaseCustody(deps.ports, ref, {
        from: 'SUCCEEDED',
        to: 'CUSTODY_RELEASED',
        fence: begun.fence,
        transitionId: transitionIdOf('release', ref.invocationId),
        patch,
      });
    await expect(release({ absence: { table: staging.table, objectId: staging.objectId } })).rejects.toMatchObject({
      name: 'Delivery.TransitionPrecondition',
      message: expect.stringMatching(/predecessor generation proved absent/),
    });
    // Another predecessor than the dispatch's is no proof either.
    await expect(
      release({
        absence: { table: staging.table, objectId: staging.objectId },
        publicationCleanup: {
          predecessorUuid: '22222222-2222-4222-8222-222222222222',
          capsuleRetiredAt: new Date().toISOString(),
        },
      }),
    ).rejects.toMatchObject({ name: 'Delivery.TransitionPrecondition' });
    expect((await readInvocation(deps.ports, ref)).state).toBe('SUCCEEDED');
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({ state: 'HELD' });
    // The cleanup step records both with the release: CUSTODY_RELEASED, the fact naming the dispatch's predecessor.
    expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    const released = await readInvocation(deps.ports, ref);
    expect(released.facts.publicationCleanup).toEqual({
      predecessorUuid: released.facts.dispatch?.predecessorUuid,
      capsuleRetiredAt: ((await readCapsule(deps.ports, ref)) as CapsuleV2).retiredAt,
    });
  });

  it('the generic cleanup step (resume, the in-process run) on an exchange route is the publication cleanup: P dropped, capsule retired', async () => {
    const { deps, begun, ref, table } = await published();
    await completeByObserveSeam(deps, ref);
    await persistEvidence(begun, deps);
    await checkpoint(fresh(begun), deps);
    expect(await cleanup(fresh(begun), deps)).toMatchObject({ state: 'CUSTODY_RELEASED', drop: 'ABSENT_PROVED' });
    expect(await world.uuidOf(`${stageName(begun.invocationId)}_c`)).toBeUndefined();
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    expect(((await readCapsule(deps.ports, ref)) as CapsuleV2).retiredAt).toBeDefined();
  });
});
