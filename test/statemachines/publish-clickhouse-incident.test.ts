import { describe, expect, it } from 'vitest';
import { routeOfEvent, type DeliveryDepsProvider } from '../../src/delivery/deps-provider.js';
import { makeHandler } from '../../functions/quality/observe-target.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { runFlow } from '../../src/local/flow-runner.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { QUALITY_INCIDENT_KIND } from '../../src/quality/observe-incident.js';
import { newInvocationId } from '../support/delivery-world.js';
import { useObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest, targetDdl } from '../support/publication-world.js';

/**
 * publish-clickhouse on the local runner (docs/rules.md#quality-commands: FAILED → notify the incident
 * topic, Fail Quality.Failed): a required probe that fails on the published generation ends the
 * execution FAILED with Quality.Failed after the NotifyIncident step published the
 * governance incident — built from the capsule, names only — to the incident topic (the
 * runner records what a notifying step publishes, as the SNS topic would receive it).
 */
const ctx = useObserveWorld();

describe('publish-clickhouse: a failing probe assertion is an incident', () => {
  it('a row of the published table made negative between Dispatch and ObserveTarget ⇒ capsule FAILED, the incident published once (probe names, no values), execution FAILED Quality.Failed, custody retained', async () => {
    const table = 'incident_1';
    await ctx.world.ch.client.command({ query: targetDdl(table) });
    const manifestText = publicationManifest({ table });
    const invocationId = newInvocationId();
    const stepDeps: DeliveryDepsProvider = (event) =>
      Promise.resolve({ ...ctx.world.deps(), route: routeOfEvent(event) });
    const observe = makeHandler({ delivery: stepDeps });
    const result = await runFlow(
      'publish-clickhouse',
      {
        invocationId,
        session: `run-${invocationId.slice(4, 14)}`,
        manifestText,
        selector: '/config/publish.yaml#daily',
      },
      {
        ports: ctx.world.stores.ports,
        retryIntervalMs: 0,
        stepDeps,
        taskHandlers: {
          // The real ObserveTarget handler, after a row of the published generation was altered (as T3 does).
          QualityObserveTargetFunctionArn: async (input) => {
            await ctx.world.ch.client.command({
              query: `ALTER TABLE pub.${table} UPDATE amount = -1 WHERE event_id IN (SELECT event_id FROM pub.${table} LIMIT 1) SETTINGS mutations_sync = 2`,
            });
            return observe(input);
          },
        },
      },
    );

    expect(result).toMatchObject({ status: 'FAILED', error: 'Quality.Failed' });
    const entered = result.events.filter((e) => e.type === 'StateEntered').map((e) => e.state);
    expect(entered.slice(-4)).toEqual(['ObserveTarget', 'NotifyIncident', 'AfterIncident', 'QualityFailed']);

    const record = await loadInvocation(ctx.world.stores.ports, invocationId);
    expect(record.state).toBe('PUBLISHED');
    const capsule = await readCapsule(ctx.world.stores.ports, { targetId: record.targetId, invocationId });
    expect(capsule).toMatchObject({
      schema: 2,
      state: 'FAILED',
      failure: { probes: ['assertion:no_negative_amounts'] },
    });
    expect(await loadCustody(ctx.world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });

    expect(result.notices).toHaveLength(1);
    const [notice] = result.notices;
    expect(notice!.subject).toContain('quality governance FAILED');
    expect(notice!.message).toMatchObject({
      kind: QUALITY_INCIDENT_KIND,
      notice_id: `quality-incident.${invocationId}.${capsule!.version}`,
      flow: 'publish-clickhouse',
      governance: {
        invocation_id: invocationId,
        capsule_state: 'FAILED',
        journal_state: 'PUBLISHED',
        diagnostic_code: 'quality.failed',
        failed_probes: ['assertion:no_negative_amounts'],
        reader_guard: { held: false },
      },
    });
    // Names and states only: no table UUID, no target name, no row value (the execution id is the runner's own).
    const text = JSON.stringify({
      subject: notice!.subject,
      governance: notice!.message.governance,
      next: notice!.message.next,
    });
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(text).not.toContain(table);
    expect(text).not.toContain('-1');
  });
});
