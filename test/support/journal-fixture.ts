import { randomBytes } from 'node:crypto';
import { invocationIdFrom, targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { sealAuthority } from '../../src/domain/delivery/sealed-authority.js';
import type { SealedWindow } from '../../src/domain/delivery/window.js';

/**
 * A journal-only delivery route for tests that begin invocations against DynamoDB Local
 * without a source or a target: one `daily` route, ClickHouse into SQL Server, sealed for a
 * fixed day. Each call of `newTarget` names a target of its own (custody is per target).
 */
export const JOURNAL_MANIFEST = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: mssql, url_env: MSSQL_URL }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dbo.events_daily, key_columns: [event_id], mode: replace_window }
`;
export const JOURNAL_ROUTE = selectRoute(parseManifest(JOURNAL_MANIFEST, '/config/route.yaml'), 'daily');
export const DAY1: SealedWindow = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' };

export const newInvocationId = (): string => invocationIdFrom(new Uint8Array(randomBytes(16)));

let targets = 0;
export const newTarget = (prefix: string): string =>
  targetIdOf('warehouse', { schema: 'dbo', name: `${prefix}_${process.pid}_${++targets}` });

export const sealFor = (invocationId: string, window: SealedWindow = DAY1) =>
  sealAuthority({
    invocationId,
    manifestText: JOURNAL_MANIFEST,
    selector: '/config/route.yaml#daily',
    route: JOURNAL_ROUTE,
    targetIdentity: { server: 'sql-1', database: 'dwh', principal: 'cutpoint' },
    workRoot: '/var/lib/cutpoint/work',
    window,
  });

/** A beginInvocation request for `targetId`: a fresh invocation id and its session unless given. */
export const beginRequest = (
  targetId: string,
  invocationId = newInvocationId(),
  session = `s-${invocationId.slice(4, 12)}`,
) => ({ invocationId, route: 'daily', targetId, sealed: sealFor(invocationId), session });
