import { describe, expect, it, vi } from 'vitest';
import { routeOfEvent } from '../../src/delivery/deps-provider.js';
import { journalOf } from '../../src/delivery/journal/keys.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { canTransition, isJournalState } from '../../src/domain/delivery/journal-states.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { runFlow, type FlowResult } from '../../src/local/flow-runner.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { scanTable } from '../support/delivery-snapshot.js';
import { newInvocationId } from '../support/delivery-world.js';
import { useObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest, targetDdl, windowIds, WINDOW } from '../support/publication-world.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

/**
 * The publish-clickhouse flow (statemachines/publish-clickhouse.asl.json) run by the local
 * runner over the same handlers Lambda runs, on real components: ClickHouse (chdb) in its
 * own process behind the HTTP interface — source and target, reached over HTTP by the steps
 * AND by ObserveTarget's bounded reader, a separate process — DynamoDB Local and the S3
 * emulator. The bindings' variables name the host, as a deployment's secrets would.
 * T1 is a governance acceptance case (docs/testing.md#governance-acceptance).
 */

const ctx = useObserveWorld();

const beginInput = (invocationId: string, manifestText: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector: '/config/publish.yaml#daily',
});

async function createTarget(table: string): Promise<void> {
  await ctx.world.ch.client.command({ query: targetDdl(table) });
  await ctx.world.ch.client.command({
    query: `INSERT INTO pub.${table} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
  });
}

async function publishedWindowIds(table: string): Promise<string[]> {
  const result = await ctx.world.ch.client.query({
    query: `SELECT toString(event_id) AS id FROM pub.${table} WHERE event_time >= parseDateTime64BestEffort({s:String}, 3) AND event_time < parseDateTime64BestEffort({e:String}, 3)`,
    query_params: { s: WINDOW.start, e: WINDOW.end },
    format: 'JSONEachRow',
  });
  return (await result.json<{ id: string }>()).map((r) => r.id).sort();
}

/** A flow over the world's chdb (stage + exchange on one handle), stores and source; the route from each Task's input, as in Lambda. */
const run = (flow: string, input: BeginInput): Promise<FlowResult> =>
  runFlow(flow, input, {
    ports: ctx.world.stores.ports,
    retryIntervalMs: 0,
    stepDeps: (event) => Promise.resolve({ ...ctx.world.deps(), route: routeOfEvent(event) }),
  });

const entered = (result: FlowResult): string[] =>
  result.events.filter((e) => e.type === 'StateEntered' && e.state).map((e) => e.state!);

async function journalTransitions(invocationId: string): Promise<string[]> {
  const moves: string[] = [];
  for (const e of await journalOf(ctx.world.stores.ports.authority, invocationId).read()) {
    const { from, to } = e.data as { from?: unknown; to?: unknown };
    if (to === undefined) continue;
    expect(isJournalState(from) && isJournalState(to) && canTransition(from, to), `${String(from)}>${String(to)}`).toBe(
      true,
    );
    moves.push(`${String(from)}>${String(to)}`);
  }
  return moves;
}

let tables = 0;

describe('publish-clickhouse flow (local runner)', () => {
  it('T1: publishes the window by one EXCHANGE, governs it to COMPLETE on the published generation, drops the predecessor and releases custody', async () => {
    const table = `flow_${++tables}`;
    await createTarget(table);
    const manifestText = publicationManifest({ table });
    const invocationId = newInvocationId();
    const predecessor = await ctx.world.uuidOf(table);
    const result = await run('publish-clickhouse', beginInput(invocationId, manifestText));

    expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({ status: 'SUCCEEDED' });
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
      'Evidence',
      'Checkpoint',
      'Cleanup',
    ]);
    expect(await journalTransitions(invocationId)).toEqual(
      expect.arrayContaining([
        'EMPTY_STAGING>WRITING_UNKNOWN',
        'VERIFIED_EOF>PUBLICATION_UNKNOWN',
        'PUBLICATION_UNKNOWN>PUBLISHED',
        'PUBLISHED>SUCCEEDED',
        'SUCCEEDED>CUSTODY_RELEASED',
      ]),
    );
    const record = await loadInvocation(ctx.world.stores.ports, invocationId);
    expect(record.state).toBe('CUSTODY_RELEASED');
    expect(record.facts.dispatch).toMatchObject({
      count: 1,
      predecessorUuid: predecessor,
      candidateUuid: candidateUuidOf(invocationId),
    });
    expect(record.facts.publication).toMatchObject({
      mode: 'exchange',
      stagingObjectId: candidateUuidOf(invocationId),
      rows: windowIds.length,
    });
    const capsule = await readCapsule(ctx.world.stores.ports, { targetId: record.targetId, invocationId });
    expect(capsule).toMatchObject({ schema: 2, state: 'COMPLETE', retiredAt: expect.any(String) });
    expect(capsule && 'reader' in capsule ? capsule.reader : undefined).toBeUndefined();
    expect(await loadCustody(ctx.world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED' });
    // The target serves the candidate: the window exactly once; the predecessor generation is gone.
    expect(await ctx.world.uuidOf(table)).toBe(candidateUuidOf(invocationId));
    expect(await publishedWindowIds(table)).toEqual(windowIds);
    const left = await ctx.world.ch.client.query({
      query: `SELECT count() AS n FROM system.tables WHERE uuid = toUUID({p:String})`,
      query_params: { p: predecessor ?? '' },
      format: 'JSONEachRow',
    });
    expect(await left.json()).toEqual([{ n: '0' }]);
  });

  it('refuses a SQL route at Begin (publication.sql_route_refused) before custody: nothing written', async () => {
    const sqlManifest = publicationManifest({ table: 'never' })
      .replace('pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }', 'warehouse: { kind: postgres, url_env: PG_URL }')
      .replace(
        /target: \{ binding: pub_ch, table: pub\.never, key_columns: \[event_id\], mode: exchange \}/,
        'target: { binding: warehouse, table: dwh.never, key_columns: [event_id], mode: replace_window }',
      )
      .replace('      capsule: v2\n', '')
      .replace('{relation}', '{staging}');
    expect(routeOfEvent({ manifestText: sqlManifest, selector: '/config/publish.yaml#daily' }).route.target.mode).toBe(
      'replace_window',
    );
    const before = await scanTable(ctx.world.stores.config);
    const result = await run('publish-clickhouse', beginInput(newInvocationId(), sqlManifest));
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(result.events.find((e) => e.type === 'StateFailed')?.error).toBe('Cutpoint.ValidationError');
    expect(result.cause).toContain('run the deliver-window flow');
    expect(entered(result)).toEqual(['Begin', 'StepRefused']);
    expect(await scanTable(ctx.world.stores.config)).toBe(before);
  }, 120_000);

  it('deliver-window refuses a ClickHouse exchange route at Begin (delivery.exchange_route_refused) before custody: nothing written', async () => {
    const table = `flow_${++tables}`;
    await createTarget(table);
    const manifestText = publicationManifest({ table });
    const before = await scanTable(ctx.world.stores.config);
    const result = await run('deliver-window', beginInput(newInvocationId(), manifestText));
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(result.events.find((e) => e.type === 'StateFailed')?.error).toBe('Cutpoint.ValidationError');
    expect(result.cause).toContain('run the publish-clickhouse flow');
    expect(entered(result)).toEqual(['Begin', 'StepRefused']);
    expect(await scanTable(ctx.world.stores.config)).toBe(before);
    expect(
      await loadCustody(ctx.world.stores.ports, targetIdOf('pub_ch', { schema: 'pub', name: table })),
    ).toBeUndefined();
  }, 120_000);

  it('resume of a published operation (the flow stopped after Dispatch) governs it to COMPLETE and releases custody, source-free, with no second EXCHANGE', async () => {
    const { deps, ref, table } = await ctx.world.published();
    const exchange = vi.spyOn(exchangeOf(deps), 'exchange');
    const input = {
      invocationId: ref.invocationId,
      manifestText: publicationManifest({ table }),
      selector: '/config/publish.yaml#daily',
    };
    const result = await resume(input, {
      ports: deps.ports,
      target: deps.target,
      mode: deps.mode,
      route: deps.route,
    });
    expect(result.state).toBe('CUSTODY_RELEASED');
    expect(exchange).not.toHaveBeenCalled();
    exchange.mockRestore();
    expect(await readCapsule(ctx.world.stores.ports, ref)).toMatchObject({
      state: 'COMPLETE',
      retiredAt: expect.any(String),
    });
    expect(await ctx.world.uuidOf(table)).toBe(candidateUuidOf(ref.invocationId));
    expect(await publishedWindowIds(table)).toEqual(windowIds);
  });
});
