import { describe, expect, it } from 'vitest';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { candidateUuidOf, exchangeNamesOf } from '../../src/domain/publication/candidate.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { preparedOperation } from '../support/publication-governance.js';
import { usePublicationWorld, windowIds } from '../support/publication-world.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

const world = usePublicationWorld();

let tables = 0;

/** A fresh target, and one operation through PrepareCapsule, then Dispatch with `fault` armed at the EXCHANGE. */
async function dispatchedWith(fault: string) {
  const { table, deps, begun, manifestText } = await preparedOperation(world, `events_${++tables}`);
  world.faults.arm(fault);
  try {
    await dispatch(begun, deps).catch((error: unknown) => {
      if ((error as { name?: string }).name !== 'Cutpoint.WorkerCrashed') throw error;
    });
  } finally {
    world.faults.disarm();
  }
  const ref = { targetId: begun.targetId, invocationId: begun.invocationId };
  expect((await readInvocation(deps.ports, ref)).state).toBe('PUBLICATION_UNKNOWN');
  const recovery = { ports: deps.ports, target: deps.target, mode: deps.mode, route: deps.route };
  const input = { invocationId: begun.invocationId, manifestText, selector: '/config/publish.yaml#daily' };
  return { table, begun, ref, deps, recovery, input };
}

// T5 is a governance acceptance case (docs/testing.md#governance-acceptance).
describe('reconcile of a dispatched ClickHouse publication (by UUID, fence before concluding)', () => {
  it('the EXCHANGE applied, its worker crashed: reconcile proves the commit by UUID → PUBLISHED, one dispatch, no second EXCHANGE', async () => {
    const { table, begun, ref, deps, recovery, input } = await dispatchedWith('publication.exchange:crash-after');
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    const result = await reconcile(input, recovery);
    expect(result.state).toBe('PUBLISHED');
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    expect(await world.publishedWindowIds(table)).toEqual(windowIds);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });

  it('the EXCHANGE never landed: reconcile fences the candidate, concludes NOT_PUBLISHED_FENCED → REEXTRACT_REQUIRED, and a late EXCHANGE then fails UNKNOWN_TABLE (T5)', async () => {
    const { table, begun, deps, recovery, input } = await dispatchedWith('publication.exchange:crash-before');
    const predecessor = await world.uuidOf(table);
    expect(predecessor).not.toBe(candidateUuidOf(begun.invocationId));
    const result = await reconcile(input, recovery);
    expect(result.state).toBe('REEXTRACT_REQUIRED');
    const names = exchangeNamesOf(begun.invocationId, { database: 'pub', table });
    expect(await world.uuidOf(names.tombstone)).toBe(candidateUuidOf(begun.invocationId));
    expect(await world.uuidOf(names.candidate)).toBeUndefined();
    // The original EXCHANGE, delayed in flight, lands now: it names a candidate that is gone.
    await expect(exchangeOf(deps).exchange(names)).rejects.toBeDefined();
    expect(await world.uuidOf(table)).toBe(predecessor);
    // Reconcile is done: the journal offers retire, never another dispatch.
    await expect(dispatch({ ...begun, known: null }, deps)).resolves.toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      acted: false,
    });

    // Retire drops the fenced candidate (by its UUID, under the tombstone name) and the stage, proves both gone, releases custody.
    expect((await retire(input, recovery)).state).toBe('RETIRED');
    expect(await world.uuidOf(names.tombstone)).toBeUndefined();
    expect(await world.uuidOf(names.stage)).toBeUndefined();
    expect(await world.uuidOf(table)).toBe(predecessor);

    // A NEW operation publishes the window with its own single dispatch; the retired one's
    // EXCHANGE, should it still arrive, names a candidate that is gone.
    const { begun: next } = await preparedOperation(world, table, false);
    expect(await dispatch(next, deps)).toMatchObject({ state: 'PUBLISHED' });
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(next.invocationId));
    await expect(exchangeOf(deps).exchange(names)).rejects.toBeDefined();
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(next.invocationId));
    expect(await world.publishedWindowIds(table)).toEqual(windowIds);
  });

  it('the observation cannot be read: reconcile concludes nothing, the state stays PUBLICATION_UNKNOWN (exit 1, repeat later)', async () => {
    const { ref, deps, recovery, input } = await dispatchedWith('publication.exchange:crash-before');
    world.faults.arm('publication.observe:fail');
    try {
      await expect(reconcile(input, recovery)).rejects.toMatchObject({ code: 'publication.observation_failed' });
    } finally {
      world.faults.disarm();
    }
    expect((await readInvocation(deps.ports, ref)).state).toBe('PUBLICATION_UNKNOWN');
  });
});
