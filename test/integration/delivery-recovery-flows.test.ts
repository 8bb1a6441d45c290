// Over ~300 lines (306), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { INCIDENT_NOTICE_KIND } from '../../src/delivery/recovery/incident-notice.js';
import { invocationIdOfExecution, stagingTableNameOf } from '../../src/domain/delivery/identifiers.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import type { SourcePort } from '../../src/ports/source.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import { newInvocationId, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';

/**
 * The recovery flows (statemachines/delivery-{reconcile,resume,retire}.asl.json) run by
 * the local runner over the handlers Lambda runs, on real components: DynamoDB Local, the
 * S3 emulator, embedded ClickHouse for the original run, embedded PostgreSQL as the
 * target. Recovery flows get a refusing source: they must never call it. The automatic
 * reconcile is started with exactly the input the EventBridge rule builds from a failed
 * deliver-window execution ({recoveryOf, originalInput: <the execution's input as text>}).
 */

const BASE = Date.parse('2026-11-01T00:00:00.000Z');
const STEP_MS = 144_000;
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

/** One route per scenario, each with its own target table: custody is per target. */
const ROUTES = ['lost', 'incident', 'retired'] as const;
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
${ROUTES.map(
  (r) => `  ${r}:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events_${r}, key_columns: [event_id], mode: replace_window }
    chunk_rows: 200`,
).join('\n')}
`;
const selectorOf = (route: string) => `/config/route.yaml#${route}`;

const rows = Array.from({ length: 3000 }, (_, k) => ({
  event_id: k + 1,
  event_time: BASE + (k + 1) * STEP_MS,
  region: 'eu',
  amount: 1,
  note: null,
}));
const windowIds = windowIdsOf(rows, WINDOW);

let world: DeliveryWorld;
/** What every recovery flow step gets as its source: any call is recorded and refused. */
const refusing: GuardedSource = forbiddenSource();

beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: ROUTES.map((r) => `events_${r}`) });
});

afterAll(() => world?.close());

const deliveryInput = (invocationId: string, route: string) => ({
  invocationId,
  session: `flow-${invocationId.slice(4, 14)}`,
  manifestText,
  selector: selectorOf(route),
});
const actionInput = (invocationId: string, route: string, yes = true) => ({
  invocationId,
  manifestText,
  selector: selectorOf(route),
  yes,
});
/** The input the EventBridge rule gives delivery-reconcile for a failed deliver-window execution. */
const automaticInput = (
  original: object,
  recoveryOf = 'arn:aws:states:eu-west-1:111111111111:execution:deliver-window:x',
) => ({
  recoveryOf,
  originalInput: JSON.stringify(original),
});

function deliver(input: object, faults?: string): Promise<FlowResult> {
  if (faults) world.targetFaults.arm(faults);
  return world.runFlow('deliver-window', input).finally(() => world.targetFaults.disarm());
}

function recover(
  flow: 'delivery-reconcile' | 'delivery-resume' | 'delivery-retire',
  input: object,
): Promise<FlowResult> {
  return world.runFlow(flow, input, refusing);
}

async function windowRows(route: string): Promise<string[]> {
  const result = await world.admin.query<{ id: string }>(
    `SELECT event_id::text AS id FROM dwh.events_${route} ORDER BY event_id`,
  );
  return result.rows.map((r) => r.id).sort();
}

/** Owned stages of one invocation left in the target (0 or 1). */
async function stagesOf(invocationId: string): Promise<number> {
  const result = await world.admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname = $1`,
    [stagingTableNameOf(invocationId)],
  );
  return result.rowCount ?? 0;
}

/** The invocation's whole journal (record, custody, entries) as one comparable text. */
async function journalText(invocationId: string): Promise<string> {
  const record = await loadInvocation(world.stores.ports, invocationId);
  const a = world.stores.ports.authority;
  const parts = await Promise.all([
    a.query(`target#${record.targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(record.targetId), 'inv#'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
  ]);
  return JSON.stringify(parts);
}

const why = (result: FlowResult) => JSON.stringify(result.events.filter((e) => e.error));

describe('delivery recovery flows (local runner)', () => {
  it('a console start (no invocation id) with a lost publication COMMIT: deliver-window fails, EventBridge-started reconcile finds the invocation from the execution ARN and proves PUBLISHED, resume needs yes and then releases custody; every row once, source never called', async () => {
    // What an operator types into the console, or a schedule sends: the route, nothing else.
    const original = { manifestText, selector: selectorOf('lost') };
    const failed = await deliver(original, 'delivery.publish.commit:lose-response');
    expect(failed, why(failed)).toMatchObject({ status: 'FAILED', error: 'Delivery.NeedsRecovery' });
    const invocationId = invocationIdOfExecution(failed.executionArn);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLICATION_UNKNOWN');

    const reconciled = await recover('delivery-reconcile', automaticInput(original, failed.executionArn));
    expect(reconciled, why(reconciled)).toMatchObject({
      status: 'SUCCEEDED',
      output: {
        action: 'reconcile',
        state: 'PUBLISHED',
        retained: false,
        projection: { state: 'PUBLISHED', permitted_actions: ['resume'] },
      },
    });
    expect(reconciled.events.filter((e) => e.type === 'StateEntered').map((e) => e.state)).toEqual([
      'IsAutomatic',
      'UnwrapFailedDelivery',
      'Inspect',
      'AfterInspect',
      // The target is up: one probe, no wait (delivery-reconcile-backoff.test.ts waits).
      'StartBackoff',
      'ProbeTarget',
      'AfterProbe',
      'Reconcile',
      'AfterReconcile',
      'Done',
    ]);

    // Without the confirmation nothing is touched, not even custody.
    const before = await journalText(invocationId);
    const unconfirmed = await recover('delivery-resume', actionInput(invocationId, 'lost', false));
    expect(unconfirmed).toMatchObject({ status: 'FAILED', error: 'Delivery.ConfirmationRequired' });
    expect(await journalText(invocationId)).toBe(before);

    const resumed = await recover('delivery-resume', actionInput(invocationId, 'lost'));
    expect(resumed, why(resumed)).toMatchObject({
      status: 'SUCCEEDED',
      output: { action: 'resume', state: 'CUSTODY_RELEASED', projection: { permitted_actions: [] } },
    });
    expect(await windowRows('lost')).toEqual(windowIds);
    expect(
      (await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]))
        .rowCount,
    ).toBe(1);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED' });
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'lost')).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId,
    });
    expect(refusing.attempts).toHaveLength(0);

    // Repeating after the outage is safe: the action is no longer permitted, nothing moves.
    const repeated = await recover('delivery-resume', actionInput(invocationId, 'lost'));
    expect(repeated).toMatchObject({ status: 'FAILED', error: 'Delivery.ActionNotPermitted' });
    expect(await windowRows('lost')).toEqual(windowIds);
  });

  it('contradicting evidence: reconcile journals INCIDENT_RETAINED, notifies the incident topic once per run with the projection only, and fails Delivery.IncidentRetained; a delivery refused for custody has nothing to reconcile', async () => {
    const invocationId = newInvocationId();
    const original = deliveryInput(invocationId, 'incident');
    expect(await deliver(original, 'delivery.publish.commit:lose-response')).toMatchObject({
      status: 'FAILED',
      error: 'Delivery.NeedsRecovery',
    });
    // Someone altered the durable receipt: it no longer matches what the journal sealed.
    await world.admin.query('UPDATE dwh.cutpoint_receipts SET rows = rows + 1 WHERE invocation_id = $1', [
      invocationId,
    ]);

    const reconciled = await recover('delivery-reconcile', actionInput(invocationId, 'incident'));
    expect(reconciled, why(reconciled)).toMatchObject({ status: 'FAILED', error: 'Delivery.IncidentRetained' });
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('INCIDENT_RETAINED');
    expect(reconciled.notices).toHaveLength(1);
    const [notice] = reconciled.notices;
    expect(notice!.subject).toContain('incident retained');
    expect(notice!.message).toMatchObject({
      kind: INCIDENT_NOTICE_KIND,
      notice_id: `incident.${invocationId}`,
      flow: 'reconcile',
      projection: {
        invocation_id: invocationId,
        state: 'INCIDENT_RETAINED',
        holds_custody: true,
        permitted_actions: [],
      },
    });
    expect(JSON.stringify(notice)).not.toContain(world.pgServer.connectionString);
    expect(JSON.stringify(notice)).not.toContain('postgres://');

    // The automatic reconcile of the same failure finds the incident and notifies again (same notice id).
    const again = await recover('delivery-reconcile', automaticInput(original));
    expect(again).toMatchObject({ status: 'FAILED', error: 'Delivery.IncidentRetained' });
    expect(again.notices.map((n) => n.message.notice_id)).toEqual([`incident.${invocationId}`]);

    // Custody stays with the incident: another delivery to the target is refused, journals
    // nothing, and its automatic reconcile ends without touching anything.
    const other = newInvocationId();
    const refused = await deliver(deliveryInput(other, 'incident'));
    expect(refused).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(refused.cause).toContain('is in the custody of invocation');
    const nothing = await recover('delivery-reconcile', automaticInput(deliveryInput(other, 'incident')));
    expect(nothing, why(nothing)).toMatchObject({ status: 'SUCCEEDED' });
    expect(nothing.events.some((e) => e.state === 'NothingJournaled')).toBe(true);
    expect(nothing.notices).toHaveLength(0);
    expect(refusing.attempts).toHaveLength(0);
  });

  it('an extraction that keeps failing: reconcile proves the partial stage, a repeat only reports it; retire needs yes, drops exactly it, RETIRED, checkpoint unmoved', async () => {
    const invocationId = newInvocationId();
    const original = deliveryInput(invocationId, 'retired');
    // The source answers Begin's read-only check (table and columns) and the plan's count,
    // then is down for every extraction attempt of this run.
    const down = forbiddenSource();
    const extractionDown: SourcePort = {
      describe: (r) => world.source.describe(r),
      countBuckets: (r) => world.source.countBuckets(r),
      streamWindow: (r) => down.streamWindow(r),
      countWindow: (r) => down.countWindow(r),
      close: async () => {},
    };
    const failed = await world.runFlow('deliver-window', original, extractionDown);
    expect(failed.status).toBe('FAILED');
    const stopped = await loadInvocation(world.stores.ports, invocationId);
    expect(stopped.state).toBe('WRITING_UNKNOWN');
    expect(await stagesOf(invocationId)).toBe(1);

    const reconciled = await recover('delivery-reconcile', automaticInput(original));
    expect(reconciled, why(reconciled)).toMatchObject({
      status: 'SUCCEEDED',
      output: {
        action: 'reconcile',
        state: 'PARTIAL_PROVED',
        retained: false,
        // Continuing is proved safe (the journaled chunks intact): resume is offered besides retire.
        projection: { permitted_actions: ['retire', 'resume'] },
      },
    });
    // The same failure reconciled again (EventBridge retries a delivery): nothing left to
    // observe, so the flow only reports the state and its permitted action.
    const before = await journalText(invocationId);
    const observed = await recover('delivery-reconcile', automaticInput(original));
    expect(observed, why(observed)).toMatchObject({
      status: 'SUCCEEDED',
      output: { state: 'PARTIAL_PROVED', permitted_actions: ['retire', 'resume'], reconcile_permitted: false },
    });
    expect(observed.events.some((e) => e.state === 'Reconcile')).toBe(false);
    expect(await journalText(invocationId)).toBe(before);
    expect(await stagesOf(invocationId)).toBe(1);

    expect(await recover('delivery-retire', actionInput(invocationId, 'retired', false))).toMatchObject({
      status: 'FAILED',
      error: 'Delivery.ConfirmationRequired',
    });
    expect(await stagesOf(invocationId)).toBe(1);

    const retired = await recover('delivery-retire', actionInput(invocationId, 'retired'));
    expect(retired, why(retired)).toMatchObject({
      status: 'SUCCEEDED',
      output: { action: 'retire', state: 'RETIRED' },
    });
    expect(await stagesOf(invocationId)).toBe(0);
    expect(await windowRows('retired')).toEqual([]);
    expect(await loadCheckpoint(world.stores.ports, stopped.targetId, 'retired')).toBeUndefined();
    expect(await loadCustody(world.stores.ports, stopped.targetId)).toMatchObject({ state: 'RELEASED' });

    // The flow started again on RETIRED (an operator re-running a retire that died) is the
    // repeated action: SUCCEEDED, RETIRED, the journal byte-identical.
    const journalRetired = await journalText(invocationId);
    const again = await recover('delivery-retire', actionInput(invocationId, 'retired'));
    expect(again, why(again)).toMatchObject({
      status: 'SUCCEEDED',
      output: { action: 'retire', state: 'RETIRED', retained: false },
    });
    expect(await journalText(invocationId)).toBe(journalRetired);
    expect(refusing.attempts).toHaveLength(0);
  });
});
