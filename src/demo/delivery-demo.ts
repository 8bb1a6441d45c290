import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dateTime64Param, openClickHouse } from '../adapters/clickhouse/client.js';
import { FaultSwitch, inertFaults } from '../adapters/fault-injector.js';
import { openPostgresAdmin, type PostgresAdmin } from '../adapters/postgres/admin.js';
import { openPostgresTarget } from '../adapters/postgres/target.js';
import { awsPorts } from '../adapters/ports.js';
import { provisionLocal } from '../adapters/provision.js';
import { openLocalSource, openLocalTarget } from '../cli/commands/delivery-bindings.js';
import { runDeliverWindow } from '../cli/commands/delivery-run.js';
import { flowProgress } from '../cli/flow-progress.js';
import { printResult, progress } from '../cli/io.js';
import { loadCheckpoint } from '../delivery/checkpoint.js';
import { inspectInvocation } from '../delivery/journal/listing.js';
import { loadInvocation } from '../delivery/journal/records.js';
import { reconcile } from '../delivery/recovery/reconcile.js';
import { resume } from '../delivery/recovery/resume.js';
import { invocationIdFrom, type RecoveryProjection } from '../domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../domain/delivery/manifest.js';
import { CutpointError } from '../domain/errors.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../local/embedded-postgres.js';
import { configForRuntime } from '../local/runtime-config.js';
import { startLocalRuntime } from '../local/runtime.js';
import { forbiddenSource } from '../delivery/source-guard.js';
import { TRANSACTION_MODE } from '../delivery/transaction-mode.js';
import type { TargetPort } from '../ports/target.js';
import { demoEvents, seedDemoEvents } from './source-events.js';

/**
 * `npm start`: one delivery window, ClickHouse → PostgreSQL, with the publication COMMIT's
 * response lost — then the operator's journey (inspect → reconcile → resume) to
 * CUSTODY_RELEASED, on throw-away local components only: DynamoDB Local and the S3
 * emulator, embedded ClickHouse (chdb) and embedded PostgreSQL (the real server; PGlite where it cannot run), all loopback.
 * Progress on stderr; one JSON document on stdout whose last member is the outcome.
 */

/** The variables the demo's bindings name; set in this process only, never printed. */
export const DEMO_CLICKHOUSE_ENV = 'CUTPOINT_DEMO_CLICKHOUSE_URL';
export const DEMO_WAREHOUSE_ENV = 'CUTPOINT_DEMO_WAREHOUSE_URL';
/** Persistent: every retry of the Publish Task loses its COMMIT response too. */
export const DEMO_FAULT = 'delivery.publish.commit:lose-response*';
const ROUTE = 'daily';

export const DEMO_MANIFEST = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${DEMO_CLICKHOUSE_ENV} }
  warehouse: { kind: postgres, url_env: ${DEMO_WAREHOUSE_ENV} }
routes:
  ${ROUTE}:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dwh.events_daily, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id, event_time] }
    chunk_rows: 250
`;

const TARGET_DDL = [
  'CREATE SCHEMA dwh',
  'CREATE TABLE dwh.events_daily (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL, region text NOT NULL, amount numeric(18, 4) NOT NULL, note text)',
];

interface Step {
  command: string;
  projection: RecoveryProjection;
}

export async function deliveryDemo(): Promise<unknown> {
  const root = await mkdtemp(join(tmpdir(), 'cutpoint-demo-'));
  const stops: Array<() => Promise<unknown>> = [() => rm(root, { recursive: true, force: true })];
  try {
    progress('starting DynamoDB Local and the S3 emulator (in-memory, loopback only) …');
    const runtime = await startLocalRuntime();
    stops.unshift(() => runtime.stop());
    const config = configForRuntime(runtime, 'cutpoint-demo');
    await provisionLocal(config);
    const ports = awsPorts(config, inertFaults);

    // The source: ~3 days of synthetic events in embedded ClickHouse.
    progress('starting embedded ClickHouse (chdb) and seeding analytics.events …');
    const chDir = join(root, 'clickhouse');
    const now = ports.clock.now();
    const events = demoEvents(now);
    const ch = await openClickHouse({ kind: 'embedded', dataDir: chDir });
    try {
      await seedDemoEvents(ch, 'analytics', 'events', events);
    } finally {
      await ch.close();
    }
    progress(
      `seeded ${events.length} events over 3 days (${iso(events[0]?.event_time)} … ${iso(events.at(-1)?.event_time)})`,
    );

    // The target: embedded PostgreSQL with the route's table.
    progress('starting embedded PostgreSQL (loopback only) …');
    const pgServer: EmbeddedPostgres = await startEmbeddedPostgres();
    stops.unshift(() => pgServer.stop());
    progress(
      `embedded PostgreSQL up: ${pgServer.engine === 'postgres' ? 'the PostgreSQL 18 server (embedded-postgres)' : 'PGlite over the wire (fallback)'}`,
    );
    const admin: PostgresAdmin = await openPostgresAdmin(pgServer.connectionString);
    stops.unshift(() => admin.close());
    for (const ddl of TARGET_DDL) await admin.exec(ddl);

    // The route manifest names variables; their values live in this process only.
    process.env[DEMO_CLICKHOUSE_ENV] = `chdb:${chDir}`;
    process.env[DEMO_WAREHOUSE_ENV] = pgServer.connectionString;
    const manifestFile = join(root, 'route.yaml');
    await writeFile(manifestFile, DEMO_MANIFEST);
    const selector = `${manifestFile}#${ROUTE}`;
    const route = selectRoute(parseManifest(DEMO_MANIFEST, manifestFile), ROUTE);
    progress(
      `route manifest ${selector} (bindings name ${DEMO_CLICKHOUSE_ENV} and ${DEMO_WAREHOUSE_ENV}; set in-process, never printed)`,
    );

    // 1. The run, with every publication COMMIT response lost.
    const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
    const faults = new FaultSwitch();
    const injector = faults.arm(DEMO_FAULT);
    progress(`armed fault on the target: ${DEMO_FAULT}`);
    progress(
      `$ CUTPOINT_FAULTS='${DEMO_FAULT}' npx cutpoint delivery run --manifest ${selector} --invocation-id ${invocationId} --format json`,
    );
    const runTarget = openPostgresTarget({ connectionString: pgServer.connectionString, faults });
    const source = await openLocalSource(route.sourceBinding);
    let run;
    try {
      run = await runDeliverWindow({
        ports,
        target: runTarget,
        source,
        retryIntervalMs: 50,
        input: { invocationId, session: `run-${invocationId.slice(4, 18)}`, manifestText: DEMO_MANIFEST, selector },
        onEvent: flowProgress,
      });
    } finally {
      faults.disarm();
      await source.close();
      await runTarget.close();
    }
    progress(`execution ${run.status}: ${run.error ?? ''} — ${run.cause ?? ''}`);
    progress(
      `the fault fired ${injector.fired.length}× (the COMMIT applied, its response was lost); fault disarmed; ClickHouse closed: recovery is source-free`,
    );
    const record = await loadInvocation(ports, invocationId);
    const window = record.sealed.window;

    // 2. The operator's journey, with the same use cases the CLI's live actions call.
    const steps: Record<'inspect' | 'reconcile' | 'resume', Step> = {} as never;
    let command = `npx cutpoint delivery inspect ${invocationId} --format json`;
    progress(`$ ${command}`);
    steps.inspect = { command, projection: await inspectInvocation(ports, invocationId) };
    progress(
      `  state ${steps.inspect.projection.state}, diagnostic ${steps.inspect.projection.diagnostic_code}, permitted ${JSON.stringify(steps.inspect.projection.permitted_actions)}`,
    );

    const refusing = forbiddenSource();
    const recoveryTarget: TargetPort = await openLocalTarget(route.targetBinding, inertFaults);
    try {
      for (const action of ['reconcile', 'resume'] as const) {
        command = `npx cutpoint delivery ${action} ${invocationId} --manifest ${selector} --yes --format json`;
        progress(`$ ${command}`);
        const act = action === 'reconcile' ? reconcile : resume;
        const result = await act(
          { invocationId, manifestText: DEMO_MANIFEST, selector },
          { ports, target: recoveryTarget, mode: TRANSACTION_MODE, route, source: refusing },
        );
        steps[action] = { command, projection: result.projection };
        progress(
          `  state ${result.projection.state}, permitted ${JSON.stringify(result.projection.permitted_actions)}`,
        );
      }
    } finally {
      await recoveryTarget.close();
    }

    // 3. What the target holds, against the source window (ClickHouse reopened: recovery is over).
    const chAfter = await openClickHouse({ kind: 'embedded', dataDir: chDir });
    let windowIds: string[];
    try {
      const result = await chAfter.client.query({
        query: `SELECT toString(event_id) AS id FROM analytics.events
                 WHERE event_time >= {start:DateTime64(3)} AND event_time < {end:DateTime64(3)} ORDER BY event_id`,
        query_params: { start: dateTime64Param(new Date(window.start)), end: dateTime64Param(new Date(window.end)) },
        format: 'JSONEachRow',
      });
      windowIds = (await result.json<{ id: string }>()).map((r) => r.id);
    } finally {
      await chAfter.close();
    }
    const [counts] = await admin.rows<{ rows: string; distinct_keys: string; in_window: string; matching: string }>(
      `SELECT count(*)::text AS rows, count(DISTINCT event_id)::text AS distinct_keys,
              count(*) FILTER (WHERE event_time >= $1::timestamptz AND event_time < $2::timestamptz)::text AS in_window,
              count(*) FILTER (WHERE event_id::text = ANY($3::text[]))::text AS matching
         FROM dwh.events_daily`,
      [window.start, window.end, windowIds],
    );
    const [receipts] = await admin.rows<{ n: string }>(
      'SELECT count(*)::text AS n FROM public.cutpoint_receipts WHERE invocation_id = $1',
      [invocationId],
    );
    const after = await loadInvocation(ports, invocationId);
    const checkpoint = await loadCheckpoint(ports, after.targetId, ROUTE);
    const rowsInTarget = Number(counts?.rows);
    const distinctKeys = Number(counts?.distinct_keys);
    const outcome = {
      state: steps.resume.projection.state,
      window,
      rowsInTarget,
      distinctKeys,
      windowRowsInSource: windowIds.length,
      duplicates: rowsInTarget - distinctKeys,
      missing: windowIds.length - Number(counts?.matching),
      rowsOutsideWindow: rowsInTarget - Number(counts?.in_window),
      receipts: Number(receipts?.n),
      checkpointAdvanced: checkpoint?.version ?? 0,
      checkpointWindowEnd: checkpoint?.windowEnd ?? null,
      sourceCallsDuringRecovery: refusing.attempts.length,
      custodyHeld: steps.resume.projection.holds_custody,
    };
    const ok =
      run.status === 'FAILED' &&
      run.error === 'Delivery.NeedsRecovery' &&
      steps.inspect.projection.state === 'PUBLICATION_UNKNOWN' &&
      outcome.state === 'CUSTODY_RELEASED' &&
      !outcome.custodyHeld &&
      outcome.rowsInTarget === outcome.windowRowsInSource &&
      outcome.distinctKeys === outcome.windowRowsInSource &&
      outcome.windowRowsInSource > 0 &&
      outcome.duplicates === 0 &&
      outcome.missing === 0 &&
      outcome.rowsOutsideWindow === 0 &&
      outcome.receipts === 1 &&
      outcome.checkpointAdvanced === 1 &&
      outcome.checkpointWindowEnd === window.end &&
      outcome.sourceCallsDuringRecovery === 0;
    const document = {
      demo: 'delivery',
      route: ROUTE,
      invocationId,
      run: {
        command: `CUTPOINT_FAULTS='${DEMO_FAULT}' npx cutpoint delivery run --manifest ${selector} --invocation-id ${invocationId} --format json`,
        flow: 'deliver-window',
        status: run.status,
        error: run.error,
        cause: run.cause,
        faultsFired: injector.fired.length,
        stateTransitions: run.transitions,
      },
      inspect: steps.inspect,
      reconcile: steps.reconcile,
      resume: steps.resume,
      outcome,
    };
    if (!ok) {
      printResult(document);
      throw new CutpointError(
        'Demo.Failed',
        'demo.invariant_violated',
        'the delivery demo did not end with every window row exactly once and custody released; see the outcome above',
      );
    }
    progress(
      `the target holds each of the ${outcome.windowRowsInSource} window rows exactly once; checkpoint advanced once; ClickHouse was never opened during recovery`,
    );
    return document;
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
    delete process.env[DEMO_CLICKHOUSE_ENV];
    delete process.env[DEMO_WAREHOUSE_ENV];
    progress('emulators and embedded databases stopped');
  }
}

function iso(ms: number | undefined): string {
  return ms === undefined ? '-' : new Date(ms).toISOString();
}
