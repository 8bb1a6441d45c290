import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeOfEvent } from '../../functions/lib/delivery-deps.js';
import { journalOf } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { canTransition, isJournalState } from '../../src/domain/delivery/journal-states.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { scanTable } from '../support/delivery-snapshot.js';
import { newInvocationId } from '../support/delivery-world.js';
import { openPublicationWorld, publicationManifest, windowIds, type PublicationWorld } from '../support/publication-world.js';

/**
 * The publish-clickhouse flow (statemachines/publish-clickhouse.asl.json) run by the local
 * runner over the same handlers Lambda runs, on real components: embedded ClickHouse (chdb)
 * as source and target, DynamoDB Local and the S3 emulator. ObserveTarget is still the stub
 * (src/quality/steps/observe-target.ts, Quality.Incomplete) until the lead merges the real
 * bounded observation: the flow publishes and then ends in its Quality.Incomplete Fail state.
 */

let world: PublicationWorld;
beforeAll(async () => {
  world = await openPublicationWorld();
}, 120_000);
afterAll(async () => {
  await world?.close();
});

/** A flow over the world's chdb (stage + exchange on one handle), stores and source; the route from each Task's input, as in Lambda. */
const run = (flow: string, input: BeginInput): Promise<FlowResult> =>
  runFlow(flow, input, { ports: world.stores.ports, retryIntervalMs: 0, stepDeps: (event) => Promise.resolve({ ...world.deps(), route: routeOfEvent(event) }) });

const entered = (result: FlowResult): string[] => result.events.filter((e) => e.type === 'StateEntered' && e.state).map((e) => e.state!);

async function journalTransitions(invocationId: string): Promise<string[]> {
  const moves: string[] = [];
  for (const e of await journalOf(world.stores.ports.authority, invocationId).read()) {
    const { from, to } = e.data as { from?: unknown; to?: unknown };
    if (to === undefined) continue;
    expect(isJournalState(from) && isJournalState(to) && canTransition(from, to), `${String(from)}>${String(to)}`).toBe(true);
    moves.push(`${String(from)}>${String(to)}`);
  }
  return moves;
}

let tables = 0;

describe('publish-clickhouse flow (local runner)', () => {
  it('publishes the window by one EXCHANGE (PUBLISHED, dispatch count 1, capsule PREPARED), then the unwired observation ends the flow in Quality.Incomplete', async () => {
    const table = `flow_${++tables}`;
    await world.createTarget(table);
    const manifestText = publicationManifest({ table });
    const invocationId = newInvocationId();
    const predecessor = await world.uuidOf(table);
    const result = await run('publish-clickhouse', world.beginInput(invocationId, manifestText));

    expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({ status: 'FAILED', error: 'Quality.Incomplete' });
    expect(entered(result).filter((s) => s !== 'ExtractLoadPart')).toEqual([
      'Begin',
      'CreateStaging',
      'PlanParts',
      'ExtractLoadParts',
      'VerifyEof',
      'FillCandidate',
      'PrepareCapsule',
      'Dispatch',
      'ObserveTarget',
      'QualityIncomplete',
    ]);
    expect(await journalTransitions(invocationId)).toEqual(
      expect.arrayContaining(['EMPTY_STAGING>WRITING_UNKNOWN', 'VERIFIED_EOF>PUBLICATION_UNKNOWN', 'PUBLICATION_UNKNOWN>PUBLISHED']),
    );
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('PUBLISHED');
    expect(record.facts.dispatch).toMatchObject({ count: 1, predecessorUuid: predecessor, candidateUuid: candidateUuidOf(invocationId) });
    expect(record.facts.publication).toMatchObject({ mode: 'exchange', stagingObjectId: candidateUuidOf(invocationId), rows: windowIds.length });
    expect(await readCapsule(world.stores.ports, { targetId: record.targetId, invocationId })).toMatchObject({ schema: 2, state: 'PREPARED' });
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    // The target now serves the candidate: the window exactly once, the stale predecessor row gone from it.
    expect(await world.uuidOf(table)).toBe(candidateUuidOf(invocationId));
    expect(await world.publishedWindowIds(table)).toEqual(windowIds);
  }, 300_000);

  it('refuses a SQL route at Begin (publication.sql_route_refused) before custody: nothing written', async () => {
    const sqlManifest = publicationManifest({ table: 'never' })
      .replace('pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }', 'warehouse: { kind: postgres, url_env: PG_URL }')
      .replace(/target: \{ binding: pub_ch, table: pub\.never, key_columns: \[event_id\], mode: exchange \}/, 'target: { binding: warehouse, table: dwh.never, key_columns: [event_id], mode: replace_window }')
      .replace('      capsule: v2\n', '')
      .replace('{relation}', '{staging}');
    expect(routeOfEvent({ manifestText: sqlManifest, selector: '/config/publish.yaml#daily' }).route.target.mode).toBe('replace_window');
    const before = await scanTable(world.stores.config);
    const result = await run('publish-clickhouse', world.beginInput(newInvocationId(), sqlManifest));
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(result.events.find((e) => e.type === 'StateFailed')?.error).toBe('Cutpoint.ValidationError');
    expect(result.cause).toContain('run the deliver-window flow');
    expect(entered(result)).toEqual(['Begin', 'StepRefused']);
    expect(await scanTable(world.stores.config)).toBe(before);
  }, 120_000);

  it('deliver-window refuses a ClickHouse exchange route at Begin (delivery.exchange_route_refused) before custody: nothing written', async () => {
    const table = `flow_${++tables}`;
    await world.createTarget(table);
    const manifestText = publicationManifest({ table });
    const before = await scanTable(world.stores.config);
    const result = await run('deliver-window', world.beginInput(newInvocationId(), manifestText));
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(result.events.find((e) => e.type === 'StateFailed')?.error).toBe('Cutpoint.ValidationError');
    expect(result.cause).toContain('run the publish-clickhouse flow');
    expect(entered(result)).toEqual(['Begin', 'StepRefused']);
    expect(await scanTable(world.stores.config)).toBe(before);
    expect(await loadCustody(world.stores.ports, targetIdOf('pub_ch', { schema: 'pub', name: table }))).toBeUndefined();
  }, 120_000);
});
