import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routeOfEvent } from '../../../src/delivery/deps-provider.js';
import { openClickHouse, type ClickHouseHandle } from '../../../src/adapters/clickhouse/client.js';
import { createClickHouseExchangeTarget } from '../../../src/adapters/clickhouse/publication-target.js';
import { createClickHouseStageTarget } from '../../../src/adapters/clickhouse/publication-stage.js';
import { createClickHouseSource } from '../../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../../src/adapters/fault-injector.js';
import { awsPorts } from '../../../src/adapters/ports.js';
import type { DeliveryDeps } from '../../../src/delivery/deps.js';
import { startClickHouseHost, type ClickHouseHost } from '../../../src/local/clickhouse-host.js';
import { runFlow, type FlowResult, type RunFlowOptions } from '../../../src/local/flow-runner.js';
import type { FaultInjector } from '../../../src/ports/faults.js';
import type { Ports } from '../../../src/ports/index.js';
import { seedSourceEvents } from '../../support/delivery-source.js';
import { recordStatements, type StatementRecorder } from '../../support/governance-invariants.js';
import { publicationManifest, sourceRows, targetDdl } from '../../support/publication-world.js';
import { openStores, type Endpoints, type SchedStores } from '../../support/sched/stores.js';
import { exchangeModeOver } from '../../support/exchange-mode.js';

/**
 * The world of the publication scenario (docs/rules.md#exchange-publication), opened once per
 * run: one ClickHouse host (chdb in its own process behind HTTP, so the flows' ObserveTarget
 * runs the real bounded reader child against it) holding the source `src.events` and the
 * database `pub`, and one table + bucket (openStores). The steps' ClickHouse adapters share ONE
 * statement-recording handle (I2: the EXCHANGE statements that reached ClickHouse) and park at
 * their cut points (publication.*, quality.staged.probe) on the same scheduler as the stores'
 * effects. Fault-free ports over the same table serve the checker.
 */

export const SELECTOR = '/config/publish.yaml#daily';

export interface PublicationWorld {
  stores: SchedStores;
  host: ClickHouseHost;
  ch: ClickHouseHandle;
  rec: StatementRecorder;
  /** Never faulted, never parked: what the checker and the settle phase's inspection read through. */
  checkPorts: Ports;
  /** The route's deps from a Task's input, as a Lambda builds them. */
  stepDeps(event: unknown): Promise<DeliveryDeps>;
  /** The manifest of one schedule's target table: the window as one chunk in one part. */
  manifest(table: string): string;
  /** A fresh `pub.<table>` holding one stale row in the window (generation P); returns P. */
  createTarget(table: string): Promise<string>;
  uuidOf(table: string): Promise<string | undefined>;
  run(flow: string, input: unknown, options?: Partial<RunFlowOptions>): Promise<FlowResult>;
  dataDir: string;
  /** The bindings' variables as they were before the world named its host in them (restored on close). */
  savedEnv: Record<'CH_URL' | 'CH_PUB_URL', string | undefined>;
  /** Set by the schedule now running: called after every store effect with its cut point. */
  afterEffect?: (cutPoint: string) => Promise<void>;
}

export async function openPublicationWorld(endpoints: Endpoints): Promise<PublicationWorld> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cutpoint-sched-pub-'));
  const host = await startClickHouseHost({ dataDir });
  const ch = await openClickHouse({ kind: 'http', url: host.url });
  await seedSourceEvents(ch, sourceRows);
  await ch.client.command({ query: 'CREATE DATABASE pub' });
  // The flows' ObserveTarget (readerStep) and resume resolve the target binding from the environment, as a Lambda does.
  const savedEnv = { CH_URL: process.env.CH_URL, CH_PUB_URL: process.env.CH_PUB_URL };
  process.env.CH_URL = host.url;
  process.env.CH_PUB_URL = host.url;
  const base = await openStores(endpoints, 'pub');
  let current: FaultInjector | undefined;
  const chFaults: FaultInjector = { at: (cutPoint, effect) => (current ? current.at(cutPoint, effect) : effect()) };
  const world = {} as PublicationWorld;
  // After each store effect (applied, faulted or refused), the schedule's watcher reads what it may have changed.
  const watched = (f: FaultInjector): FaultInjector => ({
    at: async (cutPoint, effect) => {
      try {
        return await f.at(cutPoint, effect);
      } finally {
        await world.afterEffect?.(cutPoint);
      }
    },
  });
  const stores: SchedStores = {
    ...base,
    use: (f) => {
      base.use(f ? watched(f) : undefined);
      current = f;
    },
  };
  const rec = recordStatements(ch);
  const target = createClickHouseStageTarget(rec.handle, chFaults);
  const exchange = createClickHouseExchangeTarget(rec.handle, chFaults);
  const source = createClickHouseSource(rec.handle, { closeHandle: false });
  const stepDeps = (event: unknown): Promise<DeliveryDeps> =>
    Promise.resolve({
      ports: stores.ports,
      target,
      mode: exchangeModeOver(exchange),
      source,
      route: routeOfEvent(event),
    });
  const uuidOf = async (table: string): Promise<string | undefined> => {
    const result = await ch.client.query({
      query: `SELECT toString(uuid) AS uuid FROM system.tables WHERE database = 'pub' AND name = {name:String}`,
      query_params: { name: table },
      format: 'JSONEachRow',
    });
    return (await result.json<{ uuid: string }>())[0]?.uuid;
  };
  return Object.assign(world, {
    stores,
    host,
    ch,
    rec,
    dataDir,
    savedEnv,
    checkPorts: { ...awsPorts(base.config, new FaultSwitch()), clock: base.clock },
    stepDeps,
    manifest: (table: string) =>
      publicationManifest({ table })
        .replace('chunk_rows: 200', 'chunk_rows: 2000')
        .replace('part_rows: 600', 'part_rows: 2000'),
    async createTarget(table: string) {
      await ch.client.command({ query: targetDdl(table) });
      await ch.client.command({
        query: `INSERT INTO pub.${table} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
      });
      return (await uuidOf(table))!;
    },
    uuidOf,
    run: (flow: string, input: unknown, options: Partial<RunFlowOptions> = {}) =>
      runFlow(flow, input, { ports: stores.ports, retryIntervalMs: 0, stepDeps, ...options }),
  } satisfies Omit<PublicationWorld, 'afterEffect'>);
}

export async function closePublicationWorld(world: PublicationWorld): Promise<void> {
  for (const [name, value] of Object.entries(world.savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await world.ch.close();
  await world.host.stop();
  rmSync(world.dataDir, { recursive: true, force: true });
}
