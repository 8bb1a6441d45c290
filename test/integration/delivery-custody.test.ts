import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { advanceCheckpoint, loadCheckpoint } from '../../src/delivery/checkpoint.js';
import {
  acquireCustody,
  assertCustody,
  loadCustody,
  releaseCustody,
  type CustodyGrant,
} from '../../src/delivery/custody.js';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliveryKeys, journalOf, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { inspectAll } from '../../src/delivery/journal/listing.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { recordFacts, transition } from '../../src/delivery/journal/transition.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { interceptPorts, sameKey } from '../support/intercept-ports.js';
import { EXPECTED_FIRST, firstAttempt } from '../support/fault-attempt.js';
import { beginRequest, newTarget as journalTarget } from '../support/journal-fixture.js';

/**
 * Target custody against DynamoDB Local (issue 4): exactly one invocation holds a target;
 * a zombie step from an old epoch cannot publish, advance the checkpoint or drop stages.
 */

const newTarget = () => journalTarget('custody');

const hex = (s: string) => sha256Hex(s);
const staging = { table: { schema: 'dbo', table: 'cutpoint_stg_x' }, objectId: '1234', owner: hex('owner') };
/** The target's proof that the stage is gone: RETIRED requires it. */
const absence = { table: staging.table, objectId: staging.objectId };
const publication = {
  rows: 20,
  digest: hex('pub'),
  stagingObjectId: '1234',
  mode: 'replace_window' as const,
  publishedAt: '2026-11-03T00:05:00.000Z',
};
const evidence = { key: 'delivery/daily/x/evidence.json', sha256: hex('evidence') };

async function snapshot(ports: Ports, targetId: string, invocationIds: string[]): Promise<string> {
  const a = ports.authority;
  const parts = await Promise.all([
    a.query(`target#${targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(targetId), 'inv#'),
    ...invocationIds.flatMap((id) => [
      a.query(deliveryKeys.journal(id), 'seq#'),
      a.query(deliveryKeys.journal(id), 'tx#'),
      a.get(deliveryKeys.pointer(id)).then((p) => (p ? [p] : [])),
    ]),
  ]);
  return JSON.stringify(parts);
}

async function journalIds(ports: Ports, invocationId: string): Promise<string[]> {
  const entries = await journalOf(ports.authority, invocationId).read();
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
  return entries.map((e) => e.transitionId);
}

let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

describe('acquire and release', () => {
  it('epochs: begin takes 1, a terminal transition releases and keeps it, the next invocation takes 2, a takeover 3', async () => {
    const { ports } = stores;
    const targetId = newTarget();
    const a = await beginInvocation(ports, beginRequest(targetId));
    expect(a.fence.epoch).toBe(1);
    expect(await loadCustody(ports, targetId)).toMatchObject({
      state: 'HELD',
      epoch: 1,
      fence: a.fence,
      invocationId: a.fence.owner,
      version: 1,
    });
    expect(await assertCustody(ports, targetId, a.fence)).toMatchObject({ epoch: 1 });

    const refA = { targetId, invocationId: a.fence.owner };
    await expect(
      releaseCustody(ports, refA, { from: 'EMPTY_STAGING', to: 'WRITING_UNKNOWN', fence: a.fence, transitionId: 'x' }),
    ).rejects.toMatchObject({
      code: 'delivery.release_not_terminal',
    });
    await releaseCustody(ports, refA, {
      from: 'EMPTY_STAGING',
      to: 'RETIRED',
      fence: a.fence,
      transitionId: 'retire',
      patch: { ownedStagesRecorded: true, staging, absence },
    });
    expect(await loadCustody(ports, targetId)).toMatchObject({
      state: 'RELEASED',
      epoch: 1,
      invocationId: a.fence.owner,
      version: 2,
    });
    await expect(assertCustody(ports, targetId, a.fence)).rejects.toMatchObject({
      name: 'Delivery.Fenced',
      code: 'delivery.custody_fenced',
    });
    // Terminal: custody is not retained, so no session can take it again.
    await expect(acquireCustody(ports, refA, 'recovery-1')).rejects.toMatchObject({
      code: 'delivery.custody_not_retained',
    });

    const b = await beginInvocation(ports, beginRequest(targetId));
    expect(b.fence.epoch).toBe(2);
    const refB = { targetId, invocationId: b.fence.owner };
    const takeover = await acquireCustody(ports, refB, 'recovery-1');
    expect(takeover).toMatchObject({
      alreadyApplied: false,
      fence: { owner: refB.invocationId, session: 'recovery-1', epoch: 3 },
      invocation: { custodyEpoch: 3 },
    });
    expect(await acquireCustody(ports, refB, 'recovery-1')).toMatchObject({
      alreadyApplied: true,
      fence: takeover.fence,
    });
    expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', epoch: 3, fence: takeover.fence });
    await expect(assertCustody(ports, targetId, b.fence)).rejects.toMatchObject({ code: 'delivery.custody_fenced' });
    expect(await journalIds(ports, refB.invocationId)).toEqual(['sys:begin', 'sys:custody:recovery-1']);
    // A session is granted custody once: the fenced-out session gets its old grant back, still fenced.
    expect(await acquireCustody(ports, refB, b.fence.session)).toMatchObject({ alreadyApplied: true, fence: b.fence });
    await expect(assertCustody(ports, targetId, b.fence)).rejects.toMatchObject({ code: 'delivery.custody_fenced' });
    expect(await loadCustody(ports, targetId)).toMatchObject({ epoch: 3, fence: takeover.fence });
  });

  it('a target held by one invocation refuses another, naming the holder, and writes nothing', async () => {
    const { ports } = stores;
    const targetId = newTarget();
    const holder = await beginInvocation(ports, beginRequest(targetId));
    const other = beginRequest(targetId);
    const before = await snapshot(ports, targetId, [holder.fence.owner, other.invocationId]);
    const error = await beginInvocation(ports, other).catch((e: unknown) => e as Error & { code: string });
    expect(error).toMatchObject({ name: 'Delivery.CustodyHeld', code: 'delivery.custody_held' });
    expect((error as Error).message).toContain(holder.fence.owner);
    expect(await snapshot(ports, targetId, [holder.fence.owner, other.invocationId])).toBe(before);
    await expect(loadInvocation(ports, other.invocationId)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_unavailable',
    });
  });

  it('two (and five) concurrent invocations on one target: exactly one holds custody', async () => {
    const { ports } = stores;
    for (const contenders of [2, 5]) {
      const targetId = newTarget();
      const requests = Array.from({ length: contenders }, () => beginRequest(targetId));
      const results = await Promise.allSettled(requests.map((r) => beginInvocation(ports, r)));
      const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0] as CustodyGrant;
      for (const r of results) {
        if (r.status === 'rejected')
          expect(r.reason).toMatchObject({
            name: 'Delivery.CustodyHeld',
            message: expect.stringContaining(winner.fence.owner),
          });
      }
      expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', epoch: 1, fence: winner.fence });
      const index = await inspectAll(ports, { targetId });
      expect(index.items.map((i) => i.invocation_id)).toEqual([winner.fence.owner]);
      expect(index.retained_custody_count).toBe(1);
      for (const loser of requests.filter((r) => r.invocationId !== winner.fence.owner)) {
        expect(await ports.authority.get(deliveryKeys.pointer(loser.invocationId))).toBeUndefined();
        expect(await ports.authority.query(deliveryKeys.journal(loser.invocationId), 'seq#')).toEqual([]);
      }
    }
  });

  it('concurrent takeovers by two recovery sessions leave exactly one current fence', async () => {
    const { ports } = stores;
    const targetId = newTarget();
    const begun = await beginInvocation(ports, beginRequest(targetId));
    const ref = { targetId, invocationId: begun.fence.owner };
    const [x, y] = await Promise.all([acquireCustody(ports, ref, 'rec-x'), acquireCustody(ports, ref, 'rec-y')]);
    const holds = await Promise.all(
      [begun.fence, x.fence, y.fence].map((f) =>
        assertCustody(ports, targetId, f).then(
          () => true,
          () => false,
        ),
      ),
    );
    expect(holds.filter(Boolean)).toHaveLength(1);
    expect(holds[0]).toBe(false);
    expect(new Set([x.fence.epoch, y.fence.epoch])).toEqual(new Set([2, 3]));
    expect(await loadCustody(ports, targetId)).toMatchObject({ epoch: 3 });
  });

  it("a release landing between a takeover's reads is seen whole: the takeover is refused as not retained, never as an inconsistent journal", async () => {
    // Two separate reads could see the record before the release and the custody after it:
    // a journal that seems to retain custody its target has released.
    const { ports } = stores;
    const targetId = newTarget();
    const begun = await beginInvocation(ports, beginRequest(targetId));
    const ref = { targetId, invocationId: begun.fence.owner };
    const invocationKey = deliveryKeys.invocation(targetId, ref.invocationId);
    const custodyKey = deliveryKeys.custody(targetId);
    // The takeover reads custody first on its own (already held by this session?), then the
    // record with it to plan: the release lands just before that second custody read, after
    // any record read already in flight has returned.
    let custodyReads = 0;
    let landed = 0;
    let recordRead: Promise<unknown> = Promise.resolve();
    const land = async () => {
      await recordRead;
      landed++;
      await releaseCustody(ports, ref, {
        from: 'EMPTY_STAGING',
        to: 'RETIRED',
        fence: begun.fence,
        transitionId: 'retire',
        patch: { ownedStagesRecorded: true, staging, absence },
      });
    };
    const a = ports.authority;
    const racing = interceptPorts(ports, {
      authority: {
        get: async (key) => {
          if (sameKey(key, invocationKey)) return (recordRead = a.get(key));
          if (sameKey(key, custodyKey) && ++custodyReads === 2) await land();
          return a.get(key);
        },
        getTogether: async (keys) => {
          if (keys.some((k) => sameKey(k, custodyKey)) && ++custodyReads === 2) await land();
          return a.getTogether(keys);
        },
      },
    });
    await expect(acquireCustody(racing, ref, 'recovery-1')).rejects.toMatchObject({
      name: 'Delivery.CustodyNotRetained',
      code: 'delivery.custody_not_retained',
    });
    expect(landed).toBe(1);
    expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'RELEASED', epoch: 1 });
    expect(await journalIds(ports, ref.invocationId)).toEqual(['sys:begin', 'retire']);
  });

  it('a lost begin response is resolved by reloading the exact session; another session is not "similar enough"', async () => {
    const { ports, faults } = stores;
    const targetId = newTarget();
    const request = beginRequest(targetId);
    faults.arm(`${DELIVERY_CUT_POINTS.custodyAcquire}:lose-response*`); // every attempt: only the reload can tell
    const grant = await beginInvocation(ports, request);
    faults.disarm();
    expect(grant).toMatchObject({
      alreadyApplied: true,
      fence: { owner: request.invocationId, session: request.session, epoch: 1 },
    });
    expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', fence: grant.fence });
    await expect(beginInvocation(ports, { ...request, session: 'someone-else' })).rejects.toMatchObject({
      code: 'delivery.invocation_exists',
    });
    expect(await journalIds(ports, request.invocationId)).toEqual(['sys:begin']);
  });
});

describe('zombies', () => {
  /** An invocation at VERIFIED_EOF whose first session (the zombie) was taken over by a recovery session. */
  async function takenOver(ports: Ports) {
    const targetId = newTarget();
    const zombie = await beginInvocation(ports, beginRequest(targetId));
    const ref: InvocationRef = { targetId, invocationId: zombie.fence.owner };
    await transition(ports, ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence: zombie.fence,
      transitionId: 'w',
      patch: { staging, ownedStagesRecorded: true },
    });
    await transition(ports, ref, {
      from: 'WRITING_UNKNOWN',
      to: 'VERIFIED_EOF',
      fence: zombie.fence,
      transitionId: 'eof',
      patch: { parts: { parts: 1, chunks: 1, rows: 10, bytes: 100, digest: '0'.repeat(64) } },
    });
    const recovery = await acquireCustody(ports, ref, 'recovery');
    return { ref, zombie: zombie.fence, recovery: recovery.fence };
  }

  it('an old-epoch session cannot publish, record, advance the checkpoint, retire or take custody back; nothing changes', async () => {
    const { ports } = stores;
    const { ref, zombie, recovery } = await takenOver(ports);
    expect(recovery.epoch).toBe(zombie.epoch + 1);
    const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
    const attempts: Array<() => Promise<unknown>> = [
      () =>
        transition(ports, ref, {
          from: 'VERIFIED_EOF',
          to: 'PUBLISHED',
          fence: zombie,
          transitionId: 'publish',
          patch: { publication },
        }),
      () =>
        recordFacts(ports, ref, { state: 'VERIFIED_EOF', fence: zombie, transitionId: 'facts', patch: { evidence } }),
      () => advanceCheckpoint(ports, ref, zombie),
      () =>
        transition(ports, ref, { from: 'VERIFIED_EOF', to: 'REEXTRACT_REQUIRED', fence: zombie, transitionId: 'rx' }),
      () => assertCustody(ports, ref.targetId, zombie),
      // A forged fence with the right epoch but another session is no better.
      () => assertCustody(ports, ref.targetId, { ...recovery, session: 'forged' }),
    ];
    for (const attempt of attempts)
      await expect(attempt()).rejects.toMatchObject({ name: 'Delivery.Fenced', code: 'delivery.custody_fenced' });
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(before);
    expect(await loadCheckpoint(ports, ref.targetId, 'daily')).toBeUndefined();

    // The current session proceeds; the zombie cannot drop the stages (retire) either.
    await transition(ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'REEXTRACT_REQUIRED',
      fence: recovery,
      transitionId: 'rx',
    });
    const atRetire = await snapshot(ports, ref.targetId, [ref.invocationId]);
    await expect(
      releaseCustody(ports, ref, { from: 'REEXTRACT_REQUIRED', to: 'RETIRED', fence: zombie, transitionId: 'retire' }),
    ).rejects.toMatchObject({
      name: 'Delivery.Fenced',
    });
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(atRetire);
    await releaseCustody(ports, ref, {
      from: 'REEXTRACT_REQUIRED',
      to: 'RETIRED',
      fence: recovery,
      transitionId: 'retire',
      patch: { absence },
    });
    expect(await loadCustody(ports, ref.targetId)).toMatchObject({ state: 'RELEASED', epoch: recovery.epoch });
    expect(await journalIds(ports, ref.invocationId)).toEqual([
      'sys:begin',
      'w',
      'eof',
      'sys:custody:recovery',
      'rx',
      'retire',
    ]);
  });

  /**
   * The race the transaction guard exists for: the zombie read custody while it was still
   * current, then stalled (held at its cut point) while a recovery session took over. Its
   * transaction fails its conditions (the takeover moved both the custody fence and the
   * invocation version) and applies nothing; the next test isolates the custody leg.
   */
  it.each([
    ['publish', DELIVERY_CUT_POINTS.journalTransition],
    ['checkpoint', DELIVERY_CUT_POINTS.checkpointAdvance],
    ['retire', DELIVERY_CUT_POINTS.custodyRelease],
  ] as const)(
    'a zombie %s stalled across a takeover is refused by the conditions of its own transaction (invocation version, custody fence)',
    async (step, cutPoint) => {
      const { ports } = stores;
      const targetId = newTarget();
      const first = await beginInvocation(ports, beginRequest(targetId));
      const ref: InvocationRef = { targetId, invocationId: first.fence.owner };
      const f = first.fence;
      await transition(ports, ref, {
        from: 'EMPTY_STAGING',
        to: 'WRITING_UNKNOWN',
        fence: f,
        transitionId: 'w',
        patch: { staging, ownedStagesRecorded: true },
      });
      await transition(ports, ref, {
        from: 'WRITING_UNKNOWN',
        to: 'VERIFIED_EOF',
        fence: f,
        transitionId: 'eof',
        patch: { parts: { parts: 1, chunks: 1, rows: 10, bytes: 100, digest: '0'.repeat(64) } },
      });
      if (step === 'checkpoint') {
        await transition(ports, ref, {
          from: 'VERIFIED_EOF',
          to: 'PUBLISHED',
          fence: f,
          transitionId: 'publish',
          patch: { publication },
        });
        await recordFacts(ports, ref, { state: 'PUBLISHED', fence: f, transitionId: 'evidence', patch: { evidence } });
      }
      const run: Record<typeof step, () => Promise<unknown>> = {
        publish: () =>
          transition(ports, ref, {
            from: 'VERIFIED_EOF',
            to: 'PUBLISHED',
            fence: f,
            transitionId: 'zombie-publish',
            patch: { publication },
          }),
        checkpoint: () => advanceCheckpoint(ports, ref, f),
        retire: () =>
          transition(ports, ref, { from: 'VERIFIED_EOF', to: 'REEXTRACT_REQUIRED', fence: f, transitionId: 'rx' }),
      };
      if (step === 'retire') {
        // Retirement of a re-extract state: first move there under the live fence, then stall the release.
        await run.retire();
        run.retire = () =>
          releaseCustody(ports, ref, {
            from: 'REEXTRACT_REQUIRED',
            to: 'RETIRED',
            fence: f,
            transitionId: 'zombie-retire',
            patch: { absence },
          });
      }
      const held = stores.hold(cutPoint);
      const zombie = run[step]().then(
        () => undefined,
        (e: unknown) => e,
      );
      await held.reached; // the zombie has read custody and is stalled at its cut point
      const recovery = await acquireCustody(ports, ref, 'recovery');
      const before = await snapshot(ports, targetId, [ref.invocationId]);
      held.release();
      const error = await zombie;
      expect(error).toMatchObject({ name: 'Delivery.Fenced' });
      expect(await snapshot(ports, targetId, [ref.invocationId])).toBe(before);
      expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', fence: recovery.fence });
      expect(await loadCheckpoint(ports, targetId, 'daily')).toBeUndefined();
    },
  );

  it('the custody ConditionCheck alone refuses a stalled zombie when only the custody item moved', async () => {
    const { ports } = stores;
    const targetId = newTarget();
    const first = await beginInvocation(ports, beginRequest(targetId));
    const ref: InvocationRef = { targetId, invocationId: first.fence.owner };
    const held = stores.hold(DELIVERY_CUT_POINTS.journalTransition);
    const zombie = transition(ports, ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence: first.fence,
      transitionId: 'w',
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await held.reached;
    // Only the custody item changes (the invocation record keeps its version), so the
    // zombie's invocation leg would pass: the custody leg is what refuses it.
    const custody = await loadCustody(ports, targetId);
    const newer = { ...first.fence, session: 'newer', epoch: 2 };
    await ports.authority.update(
      'test.takeover',
      deliveryKeys.custody(targetId),
      { version: custody?.version ?? 0, fence: first.fence },
      { fence: newer, epoch: 2 },
    );
    const invocationBefore = await ports.authority.get(deliveryKeys.invocation(targetId, ref.invocationId));
    held.release();
    expect(await zombie).toMatchObject({ name: 'Delivery.Fenced' });
    expect(await ports.authority.get(deliveryKeys.invocation(targetId, ref.invocationId))).toEqual(invocationBefore);
    expect(await journalIds(ports, ref.invocationId)).toEqual(['sys:begin']);
  });
});

// ---------------------------------------------------------------------------------------
// Fault matrix at delivery.custody.acquire: begin and takeover.

describe('fault matrix', () => {
  it.each(FAULT_KINDS)(
    '%s at delivery.custody.acquire (begin): custody and record land together, once',
    async (kind) => {
      const { ports, faults } = stores;
      const targetId = newTarget();
      const request = beginRequest(targetId);
      const first = await firstAttempt(faults, DELIVERY_CUT_POINTS.custodyAcquire, kind, () =>
        beginInvocation(ports, request),
      );
      expect(first).toBe(EXPECTED_FIRST[kind]);
      const appliedFirst = kind === 'crash-after' || first === 'ok';
      const custody = await loadCustody(ports, targetId);
      const pointer = await ports.authority.get(deliveryKeys.pointer(request.invocationId));
      expect([custody?.state, !!pointer]).toEqual(appliedFirst ? ['HELD', true] : [undefined, false]);

      const grant = await beginInvocation(ports, request);
      expect(grant).toMatchObject({
        alreadyApplied: appliedFirst,
        fence: { owner: request.invocationId, session: request.session, epoch: 1 },
      });
      expect(await journalIds(ports, request.invocationId)).toEqual(['sys:begin']);
      expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', fence: grant.fence, version: 1 });
      expect(await loadInvocation(ports, request.invocationId)).toMatchObject({
        state: 'EMPTY_STAGING',
        journalSeq: 1,
        custodyEpoch: 1,
      });
    },
  );

  it.each(FAULT_KINDS)(
    '%s at delivery.custody.acquire (takeover): the epoch rises once, journaled once',
    async (kind) => {
      const { ports, faults } = stores;
      const targetId = newTarget();
      const begun = await beginInvocation(ports, beginRequest(targetId));
      const ref = { targetId, invocationId: begun.fence.owner };
      const first = await firstAttempt(faults, DELIVERY_CUT_POINTS.custodyAcquire, kind, () =>
        acquireCustody(ports, ref, 'recovery'),
      );
      expect(first).toBe(EXPECTED_FIRST[kind]);
      const appliedFirst = kind === 'crash-after' || first === 'ok';
      expect((await loadCustody(ports, targetId))?.epoch).toBe(appliedFirst ? 2 : 1);

      const grant = await acquireCustody(ports, ref, 'recovery');
      expect(grant).toMatchObject({ alreadyApplied: appliedFirst, fence: { session: 'recovery', epoch: 2 } });
      expect(await journalIds(ports, ref.invocationId)).toEqual(['sys:begin', 'sys:custody:recovery']);
      expect(await loadCustody(ports, targetId)).toMatchObject({ state: 'HELD', fence: grant.fence, epoch: 2 });
      expect((await loadInvocation(ports, ref.invocationId)).custodyEpoch).toBe(2);
      await expect(assertCustody(ports, targetId, begun.fence as Fence)).rejects.toMatchObject({
        code: 'delivery.custody_fenced',
      });
    },
  );
});
