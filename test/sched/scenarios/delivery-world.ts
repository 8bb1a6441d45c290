import { routeOfEvent } from '../../../src/delivery/deps-provider.js';
import type { PostgresTarget } from '../../../src/adapters/postgres/target.js';
import type { RecoveryDeps } from '../../../src/delivery/recovery/recovery-session.js';
import { invocationIdOfExecution } from '../../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../../src/domain/delivery/manifest.js';
import type { SelectedRoute } from '../../../src/domain/delivery/manifest-types.js';
import type { FlowResult, RunFlowOptions } from '../../../src/local/flow-runner.js';
import type { SourcePort } from '../../../src/ports/source.js';
import {
  eventsTableDdl,
  fixedWindowManifest,
  generateEvents,
  openEventSource,
  openWarehouse,
  windowIdsOf,
  type EventSource,
  type Warehouse,
} from '../../support/delivery-world.js';
import type { Endpoints } from '../../support/sched/stores.js';
import { openStores, type SchedStores } from '../../support/sched/stores.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import { lambdaInvocations } from '../../support/sched/invocations.js';
import { TRANSACTION_MODE } from '../../../src/delivery/transaction-mode.js';

/**
 * The delivery scenario's world, opened once per run (chdb allows one engine per process):
 * a table and bucket whose every effect parks on the running schedule, embedded ClickHouse
 * with `src.events` (10 events a day), and embedded PostgreSQL whose target adapter parks
 * on the schedule too (its load, publish and drop are cut points). Each schedule delivers
 * the route's fixed two-day window (20 rows) into a table of its own, `dwh.s<seed>`:
 * custody and the checkpoint are per target, so schedules never share state.
 */

/**
 * A transaction parked at its COMMIT cut point holds its locks while the others move, as a
 * stalled Lambda would; an actor that needs one of them waits out the target's lock timeout
 * (30 s in production) and fails with it. Short here: the wait is wall time.
 */
const LOCK_TIMEOUT_MS = 50;

export const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
export const SELECTOR = '/config/route.yaml#daily';
const EVENTS = generateEvents(60, 8_640_000);
const WINDOW_IDS = windowIdsOf(EVENTS, WINDOW);

export interface DeliveryWorld {
  stores: SchedStores;
  events: EventSource;
  /** The chdb source, each window read to its end before its first chunk is handed on (see `drainedFirst`). */
  source: SourcePort;
  warehouse: Warehouse;
  target: PostgresTarget;
}

export async function openDeliveryWorld(endpoints: Endpoints): Promise<DeliveryWorld> {
  const stores = await openStores(endpoints, 'dlv');
  const events = await openEventSource(EVENTS);
  try {
    const warehouse = await openWarehouse({
      target: {
        faults: stores.faults,
        lockTimeoutMs: LOCK_TIMEOUT_MS,
        pool: { max: 16, connectionTimeoutMillis: 5_000 },
      },
    });
    return { stores, events, source: drainedFirst(events.source), warehouse, target: warehouse.target };
  } catch (error) {
    await events.close();
    throw error;
  }
}

export async function closeDeliveryWorld(world: DeliveryWorld): Promise<void> {
  await world.warehouse.close();
  await world.events.close();
}

/** One schedule's route: its own target table, its chunking (1-3 chunks), the deterministic execution name and invocation. */
export interface ScheduleRoute {
  table: string;
  manifestText: string;
  route: SelectedRoute;
  chunks: number;
  /** The deliver-window execution's name (a duplicate StartExecution uses the same). */
  executionName: string;
  /** The invocation Begin derives from the execution ARN (what the automatic reconcile derives too). */
  invocationId: string;
  windowIds: readonly string[];
  /** The execution input: what `cutpoint delivery run` starts the flow with. */
  input: { manifestText: string; selector: string };
}

export async function scheduleRoute(world: DeliveryWorld, s: Scheduler): Promise<ScheduleRoute> {
  const table = `s${s.seed}`;
  const chunks = s.rng.int(1, 3);
  const chunkRows = Math.ceil(WINDOW_IDS.length / chunks);
  await world.warehouse.admin.query(`DROP TABLE IF EXISTS dwh.${table}`);
  await world.warehouse.admin.query(eventsTableDdl(table));
  const manifestText = fixedWindowManifest({ daily: { table, chunkRows } });
  const executionName = `dw-${s.seed}`;
  return {
    table,
    manifestText,
    route: selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily'),
    chunks,
    executionName,
    invocationId: invocationIdOfExecution(
      `arn:aws:states:local:000000000000:execution:deliver-window:${executionName}`,
    ),
    windowIds: WINDOW_IDS,
    input: { manifestText, selector: SELECTOR },
  };
}

/**
 * Deps of the in-process recovery actions (the operator's `cutpoint delivery
 * reconcile|resume|retire`): source-free, but for a resume's continue of a proved
 * PARTIAL_PROVED, which reads the unfinished parts' remaining ranges of the route's source
 * as the command does (RecoveryDeps.extract, behind its own guard).
 */
export function operatorDeps(world: DeliveryWorld, r: ScheduleRoute): RecoveryDeps {
  return {
    ports: world.stores.ports,
    target: world.target,
    mode: TRANSACTION_MODE,
    route: r.route,
    extract: { source: world.source },
  };
}

/**
 * A flow execution's options under the scheduler: every Task invocation a child actor that
 * may be a zombie or a duplicate (`label` names them in the trace), Task deps from each
 * Task's input as in Lambda, retry pauses 0.
 */
export function flowOptions(world: DeliveryWorld, s: Scheduler, label: string): Omit<RunFlowOptions, 'executionName'> {
  const { ports } = world.stores;
  const invocations = lambdaInvocations(s, label);
  return {
    ports,
    retryIntervalMs: 0,
    invoke: invocations.invoke,
    stepDeps: (event) =>
      Promise.resolve({
        ports,
        target: world.target,
        mode: TRANSACTION_MODE,
        source: world.source,
        route: routeOfEvent(event),
      }),
  };
}

/**
 * The chdb source with each window's cursor drained before the first chunk is handed on.
 * Embedded chdb holds its engine while a cursor is open, so an extraction parked between
 * two chunks (a zombie) would block every other query — a ClickHouse server serves them
 * side by side. A window here is 20 rows; every query is still the adapter's own.
 */
function drainedFirst(source: SourcePort): SourcePort {
  return {
    describe: (request) => source.describe(request),
    countWindow: (request) => source.countWindow(request),
    countBuckets: (request) => source.countBuckets(request),
    close: () => source.close(),
    async *streamWindow(request) {
      const chunks = [];
      for await (const chunk of source.streamWindow(request)) chunks.push(chunk);
      yield* chunks;
    },
  };
}

export type FlowRun = FlowResult & { label: string };
