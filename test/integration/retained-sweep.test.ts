import { beforeAll, describe, expect, it } from 'vitest';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { transition } from '../../src/delivery/journal/transition.js';
import { sweepRetained } from '../../src/operations/retained.js';
import type { Ports } from '../../src/ports/index.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { beginRequest, newTarget } from '../support/journal-fixture.js';
import { newLane, resolveFlow, statusOf } from '../support/stream-fixture.js';
import { claimTurn } from '../../src/stream/append/claim-turn.js';
import { suspendLane } from '../../src/stream/append/suspend-lane.js';
import { loadHead } from '../../src/stream/lane-store.js';

/** The retained-items gauge against DynamoDB Local: a retained custody (or lane) counts 1 until its state changes, then 0. */

const staging = { table: { schema: 'dbo', table: 'cutpoint_stg_x' }, objectId: '1234', owner: 'a'.repeat(64) };
const absence = { table: staging.table, objectId: staging.objectId };

let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
}, 60_000);

async function begin(ports: Ports) {
  const request = beginRequest(newTarget('retained'));
  const grant = await beginInvocation(ports, request);
  return { ref: { targetId: request.targetId, invocationId: request.invocationId }, fence: grant.fence };
}

/** An invocation that holds an empty stage, retired (a terminal transition). */
const retireEmpty = (ports: Ports, begun: Awaited<ReturnType<typeof begin>>) =>
  transition(ports, begun.ref, {
    from: 'EMPTY_STAGING',
    to: 'RETIRED',
    fence: begun.fence,
    transitionId: 'retire',
    patch: { ownedStagesRecorded: true, staging, absence },
  });

/** The ports as seen `minutes` from now (the sweep measures retainedAfterMinutes with the clock port). */
const later = (ports: Ports, minutes: number): Ports => ({
  ...ports,
  clock: { now: () => new Date(Date.now() + minutes * 60_000) },
});

const count = async (ports: Ports, state: string, input: unknown = { retainedAfterMinutes: 60 }) =>
  (await sweepRetained(input, ports)).counts.find((c) => c.kind === 'custody' && c.state === state)!.count;

describe('the retained-items sweep', () => {
  it('counts a held custody once it has not moved for retainedAfterMinutes, until it is released; INCIDENT_RETAINED at once', async () => {
    const { ports } = stores;
    const held = await begin(ports);
    // A delivery that just began is a running flow's step, not yet retained.
    expect(await count(ports, 'EMPTY_STAGING')).toBe(0);
    expect(await count(later(ports, 61), 'EMPTY_STAGING')).toBe(1);

    const incident = await begin(ports);
    await transition(ports, incident.ref, {
      from: 'EMPTY_STAGING',
      to: 'INCIDENT_RETAINED',
      fence: incident.fence,
      transitionId: 'contradiction',
    });
    expect(await count(ports, 'INCIDENT_RETAINED')).toBe(1);

    // Every retained state is reported, zeros included: the alarms read absence as a stopped sweep.
    const sweep = await sweepRetained({ retainedAfterMinutes: 60 }, later(ports, 61));
    expect(sweep.retainedAfterMinutes).toBe(60);
    expect(sweep.counts.filter((c) => c.count > 0)).toEqual([
      { kind: 'custody', state: 'EMPTY_STAGING', count: 1 },
      { kind: 'custody', state: 'INCIDENT_RETAINED', count: 1 },
    ]);
    expect(sweep.counts.length).toBeGreaterThanOrEqual(12);

    await retireEmpty(ports, held);
    expect(await count(later(ports, 61), 'EMPTY_STAGING')).toBe(0);
    expect(await count(later(ports, 61), 'INCIDENT_RETAINED')).toBe(1);
  });

  it('releases an invocation begun before the held index existed (no held entry): the terminal transition forgets the entry whatever it is', async () => {
    const { ports } = stores;
    const old = await begin(ports);
    await ports.authority.delete('test.drop-held', deliveryKeys.held(old.ref.invocationId), { version: 1 });
    expect(await ports.authority.get(deliveryKeys.held(old.ref.invocationId))).toBeUndefined();
    await retireEmpty(ports, old);
    const record = await ports.authority.get(deliveryKeys.invocation(old.ref.targetId, old.ref.invocationId));
    expect(record?.state).toBe('RETIRED');
  });

  it('reads only what is held: finished invocations, however many, cost the sweep nothing', async () => {
    const fresh = await freshStores();
    const reads: string[] = [];
    const counting: Ports = {
      ...fresh.ports,
      authority: {
        ...fresh.ports.authority,
        get: (key) => (reads.push(`get ${key.pk}`), fresh.ports.authority.get(key)),
        query: (pk, prefix, options) => (reads.push(`query ${pk}`), fresh.ports.authority.query(pk, prefix, options)),
        getTogether: (keys) => (reads.push('getTogether'), fresh.ports.authority.getTogether(keys)),
        describeBinding: () => fresh.ports.authority.describeBinding(),
        put: (...a) => fresh.ports.authority.put(...a),
        update: (...a) => fresh.ports.authority.update(...a),
        delete: (...a) => fresh.ports.authority.delete(...a),
        transact: (...a) => fresh.ports.authority.transact(...a),
      },
    };
    for (let i = 0; i < 5; i++) {
      const done = await begin(fresh.ports);
      await retireEmpty(fresh.ports, done);
    }
    const held = await begin(fresh.ports);
    await sweepRetained({ retainedAfterMinutes: 60 }, later(counting, 61));
    // One page of the held index, then the one held invocation's record and its capsule.
    expect(reads).toEqual([
      'query delivery#held',
      `get delivery#${held.ref.targetId}`,
      `get quality#${held.ref.targetId}`,
    ]);
  });

  it('counts a suspended lane of the given lanes: SuspendLane at once, an own claim once it has not moved; resolve clears it', async () => {
    const { ports } = stores;
    const claimed = await newLane(ports, 'retained-claim');
    const suspended = await newLane(ports, 'retained-suspend');
    const quiet = await newLane(ports, 'retained-quiet');
    const lanes = [claimed.lane, suspended.lane, quiet.lane];
    const laneCount = async (p: Ports) =>
      (await sweepRetained({ retainedAfterMinutes: 60, lanes }, p)).counts.find((c) => c.kind === 'lane')!.count;
    expect(await laneCount(later(ports, 61))).toBe(0);

    // An append's own claim (its process may still send the head CAS): retained once it has not moved.
    const ref = { ...claimed.lane, attemptId: 'c1', session: claimed.session };
    expect(await claimTurn(ports, ref, await loadHead(ports, claimed.lane))).toBeDefined();
    expect(await laneCount(ports)).toBe(0);
    expect(await laneCount(later(ports, 61))).toBe(1);

    // SuspendLane: the outcome is unknown until a resolve, retained at once.
    const wal = {
      walKey: 'wal/never-written',
      walSha256: 'a'.repeat(64),
      walSize: 10,
      recordCount: 1,
      start: 0,
      fenceEpoch: suspended.session.epoch,
    };
    const outcome = await suspendLane({ ...suspended.lane, attemptId: 's1', session: suspended.session, wal }, ports);
    expect(outcome.status).toBe('MAY_HAVE_COMMITTED');
    const sweep = await sweepRetained({ retainedAfterMinutes: 60, lanes }, ports);
    expect(sweep.counts.find((c) => c.kind === 'lane')).toEqual({
      kind: 'lane',
      state: 'MAY_HAVE_COMMITTED',
      count: 1,
    });
    expect(sweep.suspendedLanes).toEqual([suspended.lane]);

    expect(statusOf(await resolveFlow(ports, suspended.lane, 's1'))).toBe('KNOWN_NOT_COMMITTED');
    expect(await laneCount(ports)).toBe(0);
    // Lanes it is not given cost nothing and count nothing; a lane not created yet holds nothing.
    expect((await sweepRetained({ retainedAfterMinutes: 60 }, later(ports, 61))).suspendedLanes).toEqual([]);
    expect(await laneCount(later(ports, 61))).toBe(1);
    expect(
      (await sweepRetained({ retainedAfterMinutes: 60, lanes: [{ stream: 'never-made', partition: 0 }] }, ports))
        .suspendedLanes,
    ).toEqual([]);
    await expect(sweepRetained({ retainedAfterMinutes: 60, lanes: 'orders:0' }, ports)).rejects.toMatchObject({
      code: 'operations.invalid_lanes',
    });
  });

  it('refuses a retainedAfterMinutes that is not a whole number of minutes from 1 to 10080, reading nothing', async () => {
    for (const bad of [undefined, 0, -1, 1.5, '60', 10081])
      await expect(sweepRetained({ retainedAfterMinutes: bad }, stores.ports)).rejects.toMatchObject({
        name: 'Cutpoint.ValidationError',
        code: 'operations.invalid_retained_after',
      });
  });
});
