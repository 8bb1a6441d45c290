import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import {
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';

/**
 * The deliver-window flow (statemachines/deliver-window.asl.json) run by the local runner
 * over the same handlers Lambda runs, on real components: DynamoDB Local and the S3
 * emulator, embedded ClickHouse (chdb, one engine per process: opened once here) as the
 * source and embedded PostgreSQL as the target.
 */

const STEP_MS = 144_000; // 600 rows a day
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

/** Two routes over the same window and target, differing only in chunk size. */
const routeYaml = (chunkRows: number) => `
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
    chunk_rows: ${chunkRows}`;
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  small:${routeYaml(50)}
  large:${routeYaml(600)}
`;

const flowInput = (invocationId: string, route: string): BeginInput => ({
  invocationId,
  session: `flow-${invocationId.slice(4, 14)}`,
  manifestText,
  selector: `/config/route.yaml#${route}`,
});

const GENERATED = 3000;
const rows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(rows, WINDOW);

let world: DeliveryWorld;
beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: ['events'] });
});
afterAll(() => world?.close());

/** The flow over the embedded source and target; the route comes from each Task's input, as in Lambda. */
const run = (input: BeginInput): Promise<FlowResult> => world.runFlow('deliver-window', input);

describe('deliver-window flow (local runner)', () => {
  const transitions: Record<string, number> = {};

  it.each([
    ['small', 24],
    ['large', 2],
  ])('route %s: CUSTODY_RELEASED, every row exactly once, one receipt', async (route, chunks) => {
    const invocationId = newInvocationId();
    const result = await run(flowInput(invocationId, route));
    expect(result, JSON.stringify(result.events.filter((e) => e.error))).toMatchObject({
      status: 'SUCCEEDED',
      output: { invocationId, state: 'CUSTODY_RELEASED' },
    });
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(
      (await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]))
        .rowCount,
    ).toBe(1);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.parts?.chunks).toBe(chunks);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    transitions[route] = result.transitions;
  });

  it('state transitions per window do not depend on row count or chunk size', () => {
    console.log(
      `deliver-window transitions per window: chunk_rows 50 -> ${transitions.small}, chunk_rows 600 -> ${transitions.large}`,
    );
    expect(transitions.small).toBeGreaterThan(0);
    expect(transitions.small).toBe(transitions.large);
  });

  it('a lost publish commit ends the execution at PUBLICATION_UNKNOWN with Delivery.NeedsRecovery; custody stays held', async () => {
    const invocationId = newInvocationId();
    const armed = world.targetFaults.arm('delivery.publish.commit:lose-response');
    let result: FlowResult;
    try {
      result = await run(flowInput(invocationId, 'small'));
    } finally {
      world.targetFaults.disarm();
    }
    expect(armed.fired.map((f) => `${f.cutPoint}:${f.kind}`)).toEqual(['delivery.publish.commit:lose-response']);
    expect(result).toMatchObject({ status: 'FAILED', error: 'Delivery.NeedsRecovery' });
    expect(result.cause).toContain('PUBLICATION_UNKNOWN');
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('PUBLICATION_UNKNOWN');
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    // The COMMIT applied: the rows are there exactly once, the receipt awaits reconcile.
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(
      (await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]))
        .rowCount,
    ).toBe(1);
  });
});
