import { describe, expect, it } from 'vitest';
import { loadCustody, releaseCustody } from '../../src/delivery/custody.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { loadInvocation, readInvocation } from '../../src/delivery/journal/records.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { stagingRefOf, transitionIdOf, type StepInput } from '../../src/delivery/steps/common.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { replayWindowOf } from '../../src/domain/quality/replay-window.js';
import { transition } from '../../src/delivery/journal/transition.js';
import { cleanupPublication } from '../../src/publication/steps/cleanup.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { exchangeOf, namesOf } from '../../src/publication/exchange-deps.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { newInvocationId } from '../support/delivery-world.js';
import { landBeforeRead } from '../support/intercept-ports.js';
import { fresh, stageName, succeeded as succeededIn, type Ref } from '../support/publication-governance.js';
import { publicationManifest, usePublicationWorld } from '../support/publication-world.js';

const world = usePublicationWorld();

let tables = 0;

const succeeded = (table = `events_${++tables}`, create = true) => succeededIn(world, table, create);

async function withFault<T>(rule: string, body: () => Promise<T>): Promise<T> {
  world.faults.arm(rule);
  try {
    return await body();
  } finally {
    world.faults.disarm();
  }
}

async function tablesOfUuid(uuid: string): Promise<number> {
  const rows = await (
    await world.ch.client.query({
      query: 'SELECT count() AS n FROM system.tables WHERE uuid = toUUID({u:String})',
      query_params: { u: uuid },
      format: 'JSONEachRow',
    })
  ).json<{ n: string }>();
  return Number(rows[0]?.n);
}

const boundariesOf = (deps: DeliveryDeps, targetId: string) =>
  deps.ports.authority.query(`target#${targetId}`, 'boundary#');

async function expectReleased(
  deps: DeliveryDeps,
  begun: StepInput,
  ref: Ref,
  table: string,
  predecessor: string,
): Promise<void> {
  expect(await world.uuidOf(`${stageName(ref.invocationId)}_c`)).toBeUndefined();
  expect(await world.uuidOf(table)).toBe(candidateUuidOf(ref.invocationId));
  expect(await tablesOfUuid(predecessor)).toBe(0);
  expect((await readInvocation(deps.ports, ref)).state).toBe('CUSTODY_RELEASED');
  expect(((await readCapsule(deps.ports, ref)) as CapsuleV2).retiredAt).toBeDefined();
  expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({ acted: false });
}

describe('ClickHouse publication cleanup and successors (docs/rules.md#successors-and-replay-window, I7)', () => {
  it('publication.predecessor.drop lose-response: the DROP applied, its answer lost; the observation by UUID proves P absent and the same call releases', async () => {
    const { deps, begun, ref, table, predecessor } = await succeeded();
    const out = await withFault('publication.predecessor.drop:lose-response', () =>
      cleanupPublication(fresh(begun), deps),
    );
    expect(out).toMatchObject({ state: 'CUSTODY_RELEASED', drop: 'ABSENT_PROVED' });
    await expectReleased(deps, begun, ref, table, predecessor);
  });

  it('publication.predecessor.drop crash-after: custody kept in SUCCEEDED; the re-run finds P gone, proves it and releases', async () => {
    const { deps, begun, ref, table, predecessor } = await succeeded();
    await expect(
      withFault('publication.predecessor.drop:crash-after', () => cleanupPublication(fresh(begun), deps)),
    ).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    expect((await readInvocation(deps.ports, ref)).state).toBe('SUCCEEDED');
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({ state: 'HELD' });
    expect(await world.uuidOf(`${stageName(ref.invocationId)}_c`)).toBeUndefined();
    expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({
      state: 'CUSTODY_RELEASED',
      drop: 'ABSENT_PROVED',
    });
    await expectReleased(deps, begun, ref, table, predecessor);
  });

  it('publication.predecessor.drop lose-request: P still there, absence unproved (drop ABSENCE_UNPROVABLE), custody and capsule untouched; the re-run drops and releases', async () => {
    const { deps, begun, ref, table, predecessor } = await succeeded();
    const capsule = (await readCapsule(deps.ports, ref)) as CapsuleV2;
    const out = await withFault('publication.predecessor.drop:lose-request', () =>
      cleanupPublication(fresh(begun), deps),
    );
    expect(out).toMatchObject({ state: 'SUCCEEDED', drop: 'ABSENCE_UNPROVABLE' });
    expect(await world.uuidOf(`${stageName(ref.invocationId)}_c`)).toBe(predecessor);
    expect(((await readCapsule(deps.ports, ref)) as CapsuleV2).version).toBe(capsule.version);
    expect(await loadCustody(deps.ports, ref.targetId)).toMatchObject({ state: 'HELD' });
    expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({
      state: 'CUSTODY_RELEASED',
      drop: 'ABSENT_PROVED',
    });
    await expectReleased(deps, begun, ref, table, predecessor);
  });

  it("P under the tombstone name (reconcile's fence RENAME landed after a late EXCHANGE, publication seed 2087): cleanup drops it there by UUID and releases", async () => {
    const { deps, begun, ref, table, predecessor } = await succeeded();
    const names = namesOf(ref.invocationId, deps);
    // The real fence RENAME, as reconcile sends it once its first observation saw NOT_APPLIED_YET
    // and the late EXCHANGE landed in between: the candidate's name held P, now the tombstone's.
    await exchangeOf(deps).fenceRename(names);
    expect(await world.uuidOf(names.candidate)).toBeUndefined();
    expect(await world.uuidOf(names.tombstone)).toBe(predecessor);
    expect(await cleanupPublication(fresh(begun), deps)).toMatchObject({
      state: 'CUSTODY_RELEASED',
      drop: 'ABSENT_PROVED',
    });
    expect(await world.uuidOf(names.tombstone)).toBeUndefined();
    await expectReleased(deps, begun, ref, table, predecessor);
  });

  it('I7: a successor waits while A holds the slot, and is Quality.SuccessorBlocked (nothing written) when A was released without retirement (an older writer)', async () => {
    const a = await succeeded();
    const manifest = a.manifestText;
    const successor = () => begin(world.beginInput(newInvocationId(), manifest), world.deps(manifest));
    await expect(successor()).rejects.toMatchObject({ name: 'Delivery.CustodyHeld' });

    // TEST SEAM: a release without the capsule's retirement leg — the journal's rule holds it to
    // the cleanup's facts (recorded here), but only the leg retires the capsule.
    const record = await readInvocation(a.deps.ports, a.ref);
    const staging = stagingRefOf(record);
    await releaseCustody(a.deps.ports, a.ref, {
      from: 'SUCCEEDED',
      to: 'CUSTODY_RELEASED',
      fence: a.begun.fence,
      transitionId: transitionIdOf('release', a.ref.invocationId),
      patch: {
        absence: { table: staging.table, objectId: staging.objectId },
        publicationCleanup: {
          predecessorUuid: record.facts.dispatch!.predecessorUuid,
          capsuleRetiredAt: new Date().toISOString(),
        },
      },
    });
    const custody = await loadCustody(a.deps.ports, a.ref.targetId);
    const capsule = (await readCapsule(a.deps.ports, a.ref)) as CapsuleV2;
    const id = newInvocationId();
    await expect(begin(world.beginInput(id, manifest), world.deps(manifest))).rejects.toMatchObject({
      name: 'Quality.SuccessorBlocked',
      code: 'quality.successor_blocked',
      blockingInvocationId: a.ref.invocationId,
    });
    expect(await loadCustody(a.deps.ports, a.ref.targetId)).toEqual(custody);
    expect(await readCapsule(a.deps.ports, a.ref)).toEqual(capsule);
    await expect(loadInvocation(a.deps.ports, id)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_unavailable',
    });
    expect(await boundariesOf(a.deps, a.ref.targetId)).toEqual([]);
  });

  it("I7: of two successors racing for the released slot, the one whose reads straddle the other's begin is Delivery.CustodyHeld naming it, never Quality.SuccessorBlocked", async () => {
    // The begin reads the slot's custody (RELEASED by A), then A's capsule: the other
    // successor's begin landing between them closed A's window. Planned on the stale custody,
    // that closed window refused the begin as blocked by A, whose governance is finished.
    const a = await succeeded();
    expect(await cleanupPublication(fresh(a.begun), a.deps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    const other = newInvocationId();
    const deps = world.deps(a.manifestText);
    const race = landBeforeRead(deps.ports, qualityKeys.capsule(a.ref.targetId, a.ref.invocationId), async () => {
      expect(await begin(world.beginInput(other, a.manifestText), world.deps(a.manifestText))).toMatchObject({
        state: 'EMPTY_STAGING',
        acted: true,
      });
    });
    const id = newInvocationId();
    await expect(begin(world.beginInput(id, a.manifestText), { ...deps, ports: race.ports })).rejects.toMatchObject({
      name: 'Delivery.CustodyHeld',
      message: expect.stringContaining(other),
    });
    expect(race.landed()).toBe(1);
    expect((await boundariesOf(a.deps, a.ref.targetId)).map((b) => [b.closedOperation, b.successor])).toEqual([
      [a.ref.invocationId, other],
    ]);
    await expect(loadInvocation(a.deps.ports, id)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_unavailable',
    });
  });

  it("I7/N19: after A's cleanup and retirement the successor begins, writes boundary#<its epoch> naming A, and closes A's replay window in the same transaction", async () => {
    const a = await succeeded();
    expect(await cleanupPublication(fresh(a.begun), a.deps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    const id = newInvocationId();
    const deps = world.deps(a.manifestText);
    const b = await begin(world.beginInput(id, a.manifestText), deps);
    expect(b).toMatchObject({ state: 'EMPTY_STAGING', acted: true, fence: { epoch: 2 } });

    const closed = (await readCapsule(deps.ports, a.ref)) as CapsuleV2;
    expect(closed.replay).toMatchObject({ closedBy: id, reason: 'successor' });
    expect(replayWindowOf({ capsule: closed, days: 14, now: new Date().toISOString() })).toMatchObject({
      closed: true,
      reason: 'successor',
    });
    const boundaries = await boundariesOf(deps, a.ref.targetId);
    expect(boundaries).toHaveLength(1);
    expect(boundaries[0]).toMatchObject({
      ...qualityKeys.boundary(a.ref.targetId, 2),
      closedOperation: a.ref.invocationId,
      reason: 'successor',
      successor: id,
      closedAt: closed.replay.closedAt,
    });

    // The successor's begin re-run (a lost response) finds its own grant: no second boundary, the window closed once.
    expect(await begin(world.beginInput(id, a.manifestText), deps)).toMatchObject({ acted: false });
    expect(await boundariesOf(deps, a.ref.targetId)).toHaveLength(1);
    expect(((await readCapsule(deps.ports, a.ref)) as CapsuleV2).version).toBe(closed.version);
  });

  it('a previous operation that never published (RETIRED with its capsule PREPARED) governs nothing: the successor begins with no boundary, the capsule untouched', async () => {
    const table = `events_${++tables}`;
    await world.createTarget(table);
    const manifest = publicationManifest({ table });
    const deps = world.deps(manifest);
    const a = await begin(world.beginInput(newInvocationId(), manifest), deps);
    await stepsThrough(a, deps);
    await fillCandidate(fresh(a), deps);
    await prepareCapsule(fresh(a), deps);
    const ref = { targetId: a.targetId, invocationId: a.invocationId };
    const prepared = (await readCapsule(deps.ports, ref)) as CapsuleV2;
    // TEST SEAM: the operation given up before any dispatch (re-extract, then retired with its stage's absence).
    await transition(deps.ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'REEXTRACT_REQUIRED',
      fence: a.fence,
      transitionId: transitionIdOf('seam-reextract', a.invocationId),
    });
    const staging = stagingRefOf(await readInvocation(deps.ports, ref));
    await releaseCustody(deps.ports, ref, {
      from: 'REEXTRACT_REQUIRED',
      to: 'RETIRED',
      fence: a.fence,
      transitionId: transitionIdOf('seam-retire', a.invocationId),
      patch: { absence: { table: staging.table, objectId: staging.objectId } },
    });
    expect(await begin(world.beginInput(newInvocationId(), manifest), deps)).toMatchObject({
      state: 'EMPTY_STAGING',
      acted: true,
    });
    expect(await boundariesOf(deps, ref.targetId)).toEqual([]);
    expect(await readCapsule(deps.ports, ref)).toEqual(prepared);
  });
});
