import { describe, expect, it } from 'vitest';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { assertFlowRoute, flowOfTask } from '../../src/publication/flow-route.js';

const manifest = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  pub_ch: { kind: clickhouse, url_env: CH_PUB_URL }
  warehouse: { kind: postgres, url_env: PG_URL }
routes:
  exchange:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: pub_ch, table: pub.events, key_columns: [event_id], mode: exchange }
    quality: { capsule: v2 }
  sql:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
`;
const route = (name: string) => selectRoute(parseManifest(manifest, '/config/r.yaml'), { route: name });

describe('which flow publishes which route', () => {
  it('publish-clickhouse takes an exchange route and refuses a SQL one; deliver-window the reverse; each with its stable code', () => {
    expect(() => assertFlowRoute('publish-clickhouse', route('exchange'))).not.toThrow();
    expect(() => assertFlowRoute('deliver-window', route('sql'))).not.toThrow();
    expect(() => assertFlowRoute('publish-clickhouse', route('sql'))).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'publication.sql_route_refused' }),
    );
    expect(() => assertFlowRoute('deliver-window', route('exchange'))).toThrow(
      expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'delivery.exchange_route_refused' }),
    );
  });

  it('reads the flow only from a flow Task (`{executionInput, flow}`), never from the execution input, and refuses an unknown one', () => {
    expect(flowOfTask({ executionInput: { flow: 'publish-clickhouse' }, flow: 'deliver-window' })).toBe(
      'deliver-window',
    );
    expect(flowOfTask({ flow: 'publish-clickhouse', manifestText: 'x' })).toBeUndefined();
    expect(flowOfTask({ executionInput: {} })).toBeUndefined();
    expect(() => flowOfTask({ executionInput: {}, flow: 'stream-append' })).toThrow(
      expect.objectContaining({ code: 'delivery.step_input_invalid' }),
    );
    // Outside a flow (in-process callers) nothing is checked.
    expect(() => assertFlowRoute(undefined, route('exchange'))).not.toThrow();
  });
});
