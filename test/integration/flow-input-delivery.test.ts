import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { invocationIdOfExecution } from '../../src/domain/delivery/identifiers.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import { generateEvents, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';
import { entered, expectRefusedUnwritten, unknownField, why } from '../support/flow-input-refusal.js';

/*
 * The SQL delivery flows started as StartExecution starts them (the console, `aws
 * stepfunctions start-execution`, the recovery dispatcher's EventBridge rule): the local
 * runner with the execution input as given, over DynamoDB Local, the S3 emulator, embedded
 * ClickHouse as the source and embedded PostgreSQL as the target. A field the flow does
 * not read is refused by its first Task (docs/deploy.md "Flow inputs") before anything durable is
 * written; the same input without it runs as before: a lost publication COMMIT, the
 * automatic reconcile, resume, and a retire no longer permitted.
 */

const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    chunk_rows: 200
`;
const selector = '/config/route.yaml#daily';
const rows = generateEvents(3000, 144_000);

let world: DeliveryWorld;
beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: ['events'] });
}, 240_000);
afterAll(() => world?.close());

/** Recovery flows get a refusing source, as deployed: they must never call it. */
const refusing = forbiddenSource();
const recover = (flow: string, input: unknown): Promise<FlowResult> => world.runFlow(flow, input, refusing);
const action = (invocationId: string) => ({ invocationId, manifestText, selector, yes: true });
const refusedAt = (flow: string, field: string, states: string[], error = 'Cutpoint.ValidationError') => ({
  error,
  cause: unknownField(flow, field),
  states,
});

describe('SQL delivery flows started directly', () => {
  it('deliver-window, the automatic and the operator reconcile, resume and retire each refuse an unknown field at their first Task and write nothing; without it each runs as before', async () => {
    // What an operator types into the console, or a schedule sends: the route, nothing else.
    const original = { manifestText, selector };
    await expectRefusedUnwritten(
      world.stores.config,
      () => world.runFlow('deliver-window', { ...original, extra: 1 }),
      refusedAt('deliver-window', 'extra', ['Begin', 'StepRefused'], 'Delivery.StepRefused'),
    );
    await expectRefusedUnwritten(
      world.stores.config,
      () => world.runFlow('deliver-window', { ...original, execution: { id: 'forged', name: 'forged' } }),
      refusedAt('deliver-window', 'execution', ['Begin', 'StepRefused'], 'Delivery.StepRefused'),
    );

    world.targetFaults.arm('delivery.publish.commit:lose-response');
    const failed = await world.runFlow('deliver-window', original).finally(() => world.targetFaults.disarm());
    expect(failed, why(failed)).toMatchObject({ status: 'FAILED', error: 'Delivery.NeedsRecovery' });
    const invocationId = invocationIdOfExecution(failed.executionArn);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLICATION_UNKNOWN');

    // The recovery dispatcher's start: {recoveryOf, originalInput}, its original held to deliver-window's fields.
    const envelope = (text: string, extra: object = {}) => ({
      recoveryOf: failed.executionArn,
      originalInput: text,
      ...extra,
    });
    const automatic = ['IsAutomatic', 'UnwrapFailedDelivery', 'Inspect', 'Refused'];
    await expectRefusedUnwritten(
      world.stores.config,
      () => recover('delivery-reconcile', envelope(JSON.stringify({ ...original, pages: 1 }))),
      refusedAt('delivery-reconcile', 'pages', automatic),
    );
    await expectRefusedUnwritten(
      world.stores.config,
      () => recover('delivery-reconcile', envelope(JSON.stringify(original), { yes: true })),
      refusedAt('delivery-reconcile', 'yes', automatic),
    );
    // The operator's reconcile: its own fields.
    await expectRefusedUnwritten(
      world.stores.config,
      () => recover('delivery-reconcile', { ...action(invocationId), next: 'x' }),
      refusedAt('delivery-reconcile', 'next', ['IsAutomatic', 'Confirmed', 'Reconcile', 'Refused']),
    );

    const reconciled = await recover('delivery-reconcile', envelope(JSON.stringify(original)));
    expect(reconciled, why(reconciled)).toMatchObject({
      status: 'SUCCEEDED',
      output: { action: 'reconcile', state: 'PUBLISHED', projection: { permitted_actions: ['resume'] } },
    });
    expect(entered(reconciled)).toEqual([
      'IsAutomatic',
      'UnwrapFailedDelivery',
      'Inspect',
      'AfterInspect',
      'StartBackoff',
      'ProbeTarget',
      'AfterProbe',
      'Reconcile',
      'AfterReconcile',
      'Done',
    ]);

    await expectRefusedUnwritten(
      world.stores.config,
      () => recover('delivery-resume', { ...action(invocationId), dryrun: true }),
      refusedAt('delivery-resume', 'dryrun', ['Confirmed', 'Resume', 'Refused']),
    );
    const resumed = await recover('delivery-resume', action(invocationId));
    expect(resumed, why(resumed)).toMatchObject({
      status: 'SUCCEEDED',
      output: { action: 'resume', state: 'CUSTODY_RELEASED' },
    });
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIdsOf(rows, WINDOW));

    await expectRefusedUnwritten(
      world.stores.config,
      () => recover('delivery-retire', { ...action(invocationId), session: 'x' }),
      refusedAt('delivery-retire', 'session', ['Confirmed', 'Retire', 'Refused']),
    );
    // As before: a released invocation is not retired.
    const retired = await recover('delivery-retire', action(invocationId));
    expect(retired, why(retired)).toMatchObject({ status: 'FAILED', error: 'Delivery.ActionNotPermitted' });
    expect(refusing.attempts).toHaveLength(0);
  }, 300_000);
});
