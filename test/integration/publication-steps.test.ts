import { describe, expect, it } from 'vitest';
import { begin } from '../../src/delivery/steps/begin.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { newInvocationId } from '../support/delivery-world.js';
import { publicationManifest, usePublicationWorld, windowIds } from '../support/publication-world.js';

const world = usePublicationWorld();

let tables = 0;

/** A fresh target table, begin and every step through VerifyEof and the candidate. */
async function prepared(options: { assertion?: string } = {}) {
  const table = `events_${++tables}`;
  await world.createTarget(table);
  const manifestText = publicationManifest({ ...options, table });
  const deps = world.deps(manifestText);
  const begun = await begin(world.beginInput(newInvocationId(), manifestText), deps);
  await stepsThrough(begun, deps);
  expect(await fillCandidate(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true });
  const ref = { targetId: begun.targetId, invocationId: begun.invocationId };
  return { deps, begun, ref, table };
}

describe('ClickHouse publication (docs/rules.md#exchange-publication): candidate, capsule, the one EXCHANGE', () => {
  it('publishes the window by one EXCHANGE of the exact candidate; the capsule is PREPARED before it and the dispatch counted once', async () => {
    const { deps, begun, ref, table } = await prepared();
    const predecessor = await world.uuidOf(table);
    expect(await prepareCapsule(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true, failures: [] });
    const capsule = await readCapsule(deps.ports, ref);
    expect(capsule).toMatchObject({
      schema: 2,
      state: 'PREPARED',
      generation: { candidateUuid: candidateUuidOf(begun.invocationId) },
    });
    expect(capsule && 'reader' in capsule && capsule.reader).toBeFalsy();

    const out = await dispatch(begun, deps);
    expect(out).toMatchObject({ state: 'PUBLISHED', observed: 'COMMIT_PROVEN' });
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    expect(await world.publishedWindowIds(table)).toEqual(windowIds);
    const record = await readInvocation(deps.ports, ref);
    expect(record.facts.dispatch).toMatchObject({
      count: 1,
      predecessorUuid: predecessor,
      candidateUuid: candidateUuidOf(begun.invocationId),
    });
    expect(record.facts.publication).toMatchObject({
      mode: 'exchange',
      stagingObjectId: candidateUuidOf(begun.invocationId),
      rows: windowIds.length,
    });
    // The predecessor generation is kept (under the candidate's name) until governance is COMPLETE.
    expect(await world.uuidOf(`cutpoint_stg_${begun.invocationId.slice(4, 24)}_c`)).toBe(predecessor);

    // A re-run of the step never sends a second EXCHANGE (which would swap the generations back).
    expect(await dispatch({ ...begun, known: null }, deps)).toMatchObject({ state: 'PUBLISHED', acted: false });
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
  });

  it('the EXCHANGE answer lost: the observation by UUID proves the commit, PUBLISHED, still one dispatch', async () => {
    const { deps, begun, ref, table } = await prepared();
    await prepareCapsule(begun, deps);
    world.faults.arm('publication.exchange:lose-response');
    try {
      expect(await dispatch(begun, deps)).toMatchObject({ state: 'PUBLISHED', observed: 'COMMIT_PROVEN' });
    } finally {
      world.faults.disarm();
    }
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(begun.invocationId));
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });

  it('the EXCHANGE refused: PUBLICATION_UNKNOWN (dispatched, not proved), the target untouched, and a re-run only observes', async () => {
    const { deps, begun, ref, table } = await prepared();
    const before = await world.uuidOf(table);
    await prepareCapsule(begun, deps);
    world.faults.arm('publication.exchange:fail');
    try {
      expect(await dispatch(begun, deps)).toMatchObject({ state: 'PUBLICATION_UNKNOWN', observed: 'NOT_APPLIED_YET' });
    } finally {
      world.faults.disarm();
    }
    expect(await world.uuidOf(table)).toBe(before);
    expect(await dispatch({ ...begun, known: null }, deps)).toMatchObject({
      state: 'PUBLICATION_UNKNOWN',
      observed: 'NOT_APPLIED_YET',
      acted: false,
    });
    expect(await world.uuidOf(table)).toBe(before);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });

  it('a crash right after the dispatch intent: the retried step never sends the EXCHANGE (nobody may), it only observes', async () => {
    const { deps, begun, table } = await prepared();
    const before = await world.uuidOf(table);
    await prepareCapsule(begun, deps);
    world.stores.faults.arm('publication.dispatch.intent:crash-after');
    try {
      await expect(dispatch(begun, deps)).rejects.toMatchObject({ name: 'Cutpoint.WorkerCrashed' });
    } finally {
      world.stores.faults.disarm();
    }
    expect(await dispatch(begun, deps)).toMatchObject({ state: 'PUBLICATION_UNKNOWN', observed: 'NOT_APPLIED_YET' });
    expect(await world.uuidOf(table)).toBe(before);
  });

  it('a staged probe fails on the candidate: no capsule, REEXTRACT_REQUIRED, never dispatched', async () => {
    const { deps, begun, ref, table } = await prepared({
      assertion: 'SELECT count() FROM {relation} WHERE amount >= 0',
    });
    const before = await world.uuidOf(table);
    expect(await prepareCapsule(begun, deps)).toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      failures: ['assertion:no_negative_amounts'],
    });
    expect(await readCapsule(deps.ports, ref)).toBeUndefined();
    expect(await dispatch(begun, deps)).toMatchObject({ state: 'REEXTRACT_REQUIRED', acted: false });
    expect(await world.uuidOf(table)).toBe(before);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch).toBeUndefined();
  });

  it('rows written into the candidate after its fill was journaled (a late fill or a foreign writer): the probes no longer speak for it, so no EXCHANGE, INCIDENT_RETAINED', async () => {
    const { deps, begun, ref, table } = await prepared();
    const before = await world.uuidOf(table);
    expect(await prepareCapsule(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true, failures: [] });
    const candidate = (await readInvocation(deps.ports, ref)).facts.candidate!;
    await world.ch.client.command({
      query: `INSERT INTO pub.${candidate.table.table} SELECT * FROM pub.${candidate.table.table}`,
    });
    expect(await dispatch(begun, deps)).toMatchObject({ state: 'INCIDENT_RETAINED', acted: true });
    expect(await world.uuidOf(table)).toBe(before);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch).toBeUndefined();
  });
});
