import { describe, expect, it, vi } from 'vitest';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { completionDocument, readPreparedDocument } from '../../src/domain/quality/evidence.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { fetchEvidence, putEvidence } from '../../src/quality/evidence.js';
import { replayGovernance } from '../../src/quality/replay.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { preparedOperation } from '../support/publication-governance.js';
import { usePublicationWorld } from '../support/publication-world.js';
import { replaceObject } from '../support/replace-object.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

const world = usePublicationWorld();

let tables = 0;

/**
 * One operation published, then its capsule made COMPLETE the way ObserveTarget persists it
 * (completion.json with v_c = the version the COMPLETE write produces, then the capsule
 * update at the version read): a test seam standing in for the observation, which has its
 * own tests. Everything before it is the real steps.
 */
async function completed() {
  const { table, deps, begun, manifestText } = await preparedOperation(world, `events_${++tables}`);
  expect(await dispatch(begun, deps)).toMatchObject({ state: 'PUBLISHED' });
  const ref = { targetId: begun.targetId, invocationId: begun.invocationId };
  const capsule = await readCapsule(deps.ports, ref);
  if (!capsule || capsule.schema !== 2) throw new Error('test bug: no v2 capsule');
  const prepared = await fetchEvidence(deps.ports.objects, capsule.prepared.key);
  if (prepared.status !== 'found') throw new Error('test bug: no prepared.json');
  const probes = readPreparedDocument(prepared.bytes, capsule.prepared.sha256, capsule.coreDigest).plan.probes;
  const at = '2026-12-01T00:00:00.000Z';
  const doc = completionDocument({
    invocationId: begun.invocationId,
    coreDigest: capsule.coreDigest,
    candidateUuid: capsule.generation.candidateUuid,
    version: capsule.version + 1,
    at,
    runId: 'run-observer',
    results: probes.map((p) => ({ name: p.name, result: 'PASSED' as const })),
  });
  const key = qualityEvidenceKeyOf('daily', begun.invocationId, 'completion');
  await putEvidence(deps.ports.objects, 'quality.completion.put', key, doc.document, begun.invocationId);
  const updated = await deps.ports.authority.update(
    'test.complete',
    qualityKeys.capsule(ref.targetId, ref.invocationId),
    { version: capsule.version },
    {
      state: 'COMPLETE',
      completion: { version: capsule.version + 1, at, runId: 'run-observer', evidence: { key, sha256: doc.sha256 } },
      lastObservation: { runId: 'run-observer', outcome: 'COMPLETE', at, remoteTermination: 'not_applicable' },
    },
  );
  expect(updated.status).toBe('APPLIED');
  const input = { invocationId: begun.invocationId, manifestText, selector: '/config/publish.yaml#daily' };
  const replayDeps = { ports: deps.ports, target: deps.target, exchange: exchangeOf(deps), route: deps.route };
  return { table, begun, ref, deps, input, replayDeps };
}

const capsuleVersion = async (deps: DeliveryDeps, ref: { targetId: string; invocationId: string }) =>
  (await readCapsule(deps.ports, ref))?.version;

// T8, T9 and T10 are governance acceptance cases (docs/testing.md#governance-acceptance).
describe('quality replay (docs/rules.md#replay, N5, N21): read-only, its own receipt, the original results', () => {
  it('T8: the receipt names replayed_from, the original results, the same core, a released guard; nothing is written, read from the source or dispatched', async () => {
    const { begun, ref, deps, input, replayDeps } = await completed();
    const before = await capsuleVersion(deps, ref);
    const journalSeq = (await readInvocation(deps.ports, ref)).journalSeq;
    const exchange = vi.spyOn(exchangeOf(deps), 'exchange');
    const receipt = await replayGovernance(input, replayDeps);
    expect(receipt).toMatchObject({
      kind: 'cutpoint.quality-replay-receipt.v1',
      invocation_id: begun.invocationId,
      dispatch_count: 1,
      reader_guard: 'released',
      source_reads: 0,
      target_writes: 0,
      quality: { governance: 'complete' },
      generation: { match: true },
      authority: { binding: 'match', continuity: 'ok', completion_version: before, observed_version: before },
      replayed_from: {
        invocation_id: begun.invocationId,
        original_run_id: expect.stringMatching(/^run-/),
        original_load_id: expect.stringMatching(/^load-/),
      },
    });
    expect(receipt.quality.probes.every((p) => p.result === 'PASSED')).toBe(true);
    expect(receipt.acceptance.map((a) => a.probe)).toEqual(receipt.quality.probes.map((p) => p.name));
    const capsule = await readCapsule(deps.ports, ref);
    if (capsule?.schema !== 2) throw new Error('test bug');
    expect(JSON.stringify(receipt)).not.toContain(capsule.generation.candidateUuid); // UUIDs only as digests
    expect(exchange).not.toHaveBeenCalled();
    expect(await capsuleVersion(deps, ref)).toBe(before);
    expect((await readInvocation(deps.ports, ref)).journalSeq).toBe(journalSeq);
    exchange.mockRestore();
  });

  it('T9: a capsule re-put with a LOWER version than completion.json says → quality.authority_version_rollback, no receipt (T8 is the equal-version case, accepted: the limit of the check)', async () => {
    const { ref, deps, input, replayDeps } = await completed();
    const key = qualityKeys.capsule(ref.targetId, ref.invocationId);
    const item = await deps.ports.authority.get(key);
    if (!item) throw new Error('test bug');
    // A restore of an older copy: same attributes, version back to 1.
    const { version: _v, pk: _pk, sk: _sk, ...attributes } = item;
    await deps.ports.authority.delete('test.restore', key, { version: item.version });
    await deps.ports.authority.put('test.restore', { ...key, ...attributes }, 'absent');
    await expect(replayGovernance(input, replayDeps)).rejects.toMatchObject({
      code: 'quality.authority_version_rollback',
    });
  });

  it('missing or malformed completion evidence is never a pass: no receipt', async () => {
    const { ref, deps, input, replayDeps } = await completed();
    const capsule = await readCapsule(deps.ports, ref);
    if (!capsule || capsule.schema !== 2 || !capsule.completion?.evidence) throw new Error('test bug');
    expect(
      await replaceObject(
        deps.ports.objects,
        capsule.completion.evidence.key,
        Buffer.from('{"kind":"cutpoint.quality-completion.v1"}'),
        { sha256: capsule.completion.evidence.sha256 },
      ),
    ).toBe('APPLIED');
    await expect(replayGovernance(input, replayDeps)).rejects.toMatchObject({ code: 'quality.evidence_malformed' });
  });

  it('the manifest edited since the seal → refused before anything else (same invocation AND configuration)', async () => {
    const { input, replayDeps } = await completed();
    await expect(
      replayGovernance({ ...input, manifestText: `${input.manifestText}\n# edited\n` }, replayDeps),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^delivery\./) });
  });

  it('the window expired by the clock → quality.replay_window_closed; the generation replaced without a boundary → closed too', async () => {
    const { input, replayDeps, table } = await completed();
    const later = {
      ...replayDeps,
      ports: { ...replayDeps.ports, clock: { now: () => new Date('2027-06-01T00:00:00.000Z') } },
    };
    await expect(replayGovernance(input, later)).rejects.toMatchObject({ code: 'quality.replay_window_closed' });
    // Another generation under the target name, no boundary naming this operation (an older writer).
    await world.ch.client.command({
      query: `EXCHANGE TABLES pub.${table} AND pub.cutpoint_stg_${input.invocationId.slice(4, 24)}_c`,
    });
    await expect(replayGovernance(input, replayDeps)).rejects.toMatchObject({
      code: 'quality.replay_window_boundary_missing',
    });
  });

  it('T10: the authority table restored into a new table (same name, same items and versions) → quality.authority_replaced, no receipt', async () => {
    const { input, replayDeps } = await completed();
    const { DynamoDBClient, ScanCommand, DeleteTableCommand, PutItemCommand } =
      await import('@aws-sdk/client-dynamodb');
    const { config } = world.stores;
    const client = new DynamoDBClient({
      region: config.region,
      endpoint: config.endpoints?.dynamodb,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await client.send(
        new ScanCommand({ TableName: config.tableName, ...(start ? { ExclusiveStartKey: start as never } : {}) }),
      );
      items.push(...((page.Items ?? []) as Array<Record<string, unknown>>));
      start = page.LastEvaluatedKey as Record<string, unknown> | undefined;
    } while (start);
    await client.send(new DeleteTableCommand({ TableName: config.tableName }));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const { provisionLocal } = await import('../../src/adapters/provision.js');
    await provisionLocal(config);
    for (const item of items)
      await client.send(new PutItemCommand({ TableName: config.tableName, Item: item as never }));
    client.destroy();
    await expect(replayGovernance(input, replayDeps)).rejects.toMatchObject({ code: 'quality.authority_replaced' });
  });
});
