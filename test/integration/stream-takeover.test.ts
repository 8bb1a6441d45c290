import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { laneKeys, type AppendOutcome, type CommitRecord, type SpentMarker } from '../../src/domain/stream.js';
import type { Fence } from '../../src/domain/fence.js';
import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';
import { takeoverLane } from '../../src/stream/takeover.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { batchOf, expectLaneInvariant, newLane, type Acknowledged } from '../support/stream-fixture.js';

/**
 * Writer takeover under real concurrency against DynamoDB Local: a stale writer keeps
 * appending (some of its calls stuck in slow WAL I/O) while a new owner takes the lane
 * over and appends. The stale writer may finish PUTs, but never advances the head.
 */
let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

async function writer(
  ports: Ports,
  lane: { stream: string; partition: number },
  fence: Fence,
  prefix: string,
  count: number,
  results: Array<{ attemptId: string; outcome: AppendOutcome }>,
) {
  for (let i = 0; i < count; i++) {
    const attemptId = `${prefix}-${i}`;
    const outcome = await appendBatch(
      { ...lane, attemptId, session: fence, records: batchOf(attemptId, 3).map((r) => Buffer.from(r)) },
      ports,
    );
    results.push({ attemptId, outcome });
  }
}

describe('takeover', () => {
  it('a stale writer racing the new owner cannot advance the head', async () => {
    const { lane, session: old } = await newLane(stores.ports, 'race');
    // The stale writer's WAL PUTs are slow: it is often stuck in provider I/O when the takeover lands.
    const staleFaults = new FaultSwitch();
    staleFaults.arm(`${STREAM_CUT_POINTS.wal}:delay=40*`);
    const stalePorts = awsPorts(stores.config, staleFaults);
    const ownerPorts = awsPorts(stores.config, new FaultSwitch());

    const staleResults: Array<{ attemptId: string; outcome: AppendOutcome }> = [];
    const ownerResults: Array<{ attemptId: string; outcome: AppendOutcome }> = [];
    const stale = writer(stalePorts, lane, old, 'old', 12, staleResults);
    // Take over once the stale writer has committed something, while it keeps going.
    while (staleResults.length < 2) await new Promise((r) => setTimeout(r, 10));
    const fresh = { owner: 'new-owner', session: randomUUID() };
    const takeover = await takeoverLane({ ...lane, ...fresh }, ownerPorts);
    expect(takeover.epoch).toBe(old.epoch + 1);
    const session = { ...fresh, epoch: takeover.epoch };
    await Promise.all([stale, writer(ownerPorts, lane, session, 'new', 6, ownerResults)]);

    const commits = (await stores.ports.authority.query(laneKeys.pk(lane), 'commit#')) as unknown as CommitRecord[];
    const markers = new Map(
      ((await stores.ports.authority.query(laneKeys.pk(lane), 'spent#')) as unknown as SpentMarker[]).map((m) => [
        m.attemptId,
        m,
      ]),
    );
    // Every range committed after the takeover point belongs to the new owner, and every
    // committed range's WAL object is bound to the epoch the head held when it committed.
    for (const commit of commits) {
      const wal = await stores.ports.objects.head(commit.walKey);
      const epoch = Number(wal!.metadata['fence-epoch']);
      if (commit.start >= takeover.committedEnd) expect(epoch, commit.attemptId).toBe(takeover.epoch);
      else expect(epoch, commit.attemptId).toBe(old.epoch);
      expect(Number(wal!.metadata.start), commit.attemptId).toBe(commit.start);
    }
    expect(ownerResults.every((r) => r.outcome.status === 'KNOWN_COMMITTED')).toBe(true);
    expect(staleResults.filter((r) => r.outcome.status === 'KNOWN_COMMITTED').length).toBeGreaterThanOrEqual(2);
    // The stale writer was refused at least once after the takeover, with proof.
    const refused = staleResults.filter((r) => r.outcome.status === 'KNOWN_NOT_COMMITTED');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.outcome.reason).toMatch(/Stream\.Fenced|no head CAS was issued/);
      const marker = markers.get(r.attemptId);
      if (marker) expect(marker).toMatchObject({ reason: expect.any(String), orphanSince: expect.any(String) });
    }
    // The bytes it managed to write are unreferenced: no commit names them.
    const committedWal = new Set(commits.map((c) => c.walKey));
    for (const r of refused) expect([...committedWal].some((k) => k.includes(`/${r.attemptId}/`))).toBe(false);

    const acknowledged: Acknowledged[] = [...staleResults, ...ownerResults]
      .filter((r) => r.outcome.status === 'KNOWN_COMMITTED')
      .map((r) => ({ attemptId: r.attemptId, records: batchOf(r.attemptId, 3) }));
    await expectLaneInvariant(stores.ports, lane, acknowledged);
  });

  it('a lost takeover response is resolved by reloading the exact session', async () => {
    const { lane, session } = await newLane(stores.ports, 'lost');
    stores.faults.arm(`${STREAM_CUT_POINTS.takeoverCas}:lose-response`);
    const result = await takeoverLane({ ...lane, owner: 'b', session: 'fixed-session-0001' }, stores.ports);
    stores.faults.disarm();
    expect(result).toEqual({ ...lane, owner: 'b', epoch: session.epoch + 1, committedEnd: 0 });
    const head = await stores.ports.authority.get(laneKeys.head(lane));
    expect(head?.fence).toEqual({ owner: 'b', session: 'fixed-session-0001', epoch: session.epoch + 1 });
  });
});
