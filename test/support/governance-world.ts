import { beforeAll } from 'vitest';
import { createClickHouseExchangeTarget } from '../../src/adapters/clickhouse/publication-target.js';
import { createClickHouseStageTarget } from '../../src/adapters/clickhouse/publication-stage.js';
import { createClickHouseSource } from '../../src/adapters/clickhouse/source.js';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import type { RecoveryDeps } from '../../src/delivery/recovery/recovery-session.js';
import type { GuardedSource } from '../../src/delivery/source-guard.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { RequestMeter } from '../../src/adapters/request-meter.js';
import { exchangeNamesOf } from '../../src/domain/publication/candidate.js';
import { targetReaderOf, type TargetReader } from '../../src/quality/observe-reader.js';
import { probeReader } from '../../src/adapters/reader-process/probe-reader.js';
import { exchangeModeOver } from './exchange-mode.js';
import { useObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { recordStatements, type GovernanceView, type StatementRecorder } from './governance-invariants.js';
import { publicationManifest, targetDdl, WINDOW } from './publication-world.js';

/**
 * The fault matrices' world (F1, F2: docs/testing.md#governance-acceptance): the observe world
 * (a ClickHouse host in its own process behind HTTP, so the real bounded reader child runs;
 * DynamoDB Local; the S3 emulator), with every adapter of the steps built over ONE
 * statement-recording handle (I2: the EXCHANGE statements that reached ClickHouse). One world
 * per file; one target table per case. The route loads the window as one chunk in one part
 * (the smallest data that crosses every cut point once).
 */

export const SELECTOR = '/config/publish.yaml#daily';

export interface GovernanceWorld {
  observe: ObserveWorld;
  rec: StatementRecorder;
  /** Unfaulted ports (the invariant checker reads through these). */
  view: GovernanceView;
  /** Adapters and ports of one case, with the case's own fault switches: cases on separate tables can run at once. */
  lane(): GovernanceLane;
  manifest(table: string, assertion?: string): string;
  /** A fresh `pub.<table>` holding one stale row in the window (generation P); returns P. */
  createTarget(table: string): Promise<string>;
  /** Event ids (text, sorted) the target holds inside the window, duplicates kept. */
  windowIds(table: string): Promise<string[]>;
  /** Names of this operation's stage, candidate or tombstone still in `pub`. */
  leftovers(invocationId: string, table: string): Promise<string[]>;
}

export interface GovernanceLane {
  /** ClickHouse adapters' faults (publication.*), and the authority/object stores' (delivery.*, quality.*). */
  chFaults: FaultSwitch;
  storeFaults: FaultSwitch;
  /** The switch a cut point's fault is armed on. */
  switchOf(cutPoint: string): FaultSwitch;
  deps(manifestText: string, source?: GuardedSource): DeliveryDeps;
  recoveryDeps(deps: DeliveryDeps, source: GuardedSource): RecoveryDeps;
  /** The bounded reader (a forked child), with this lane's store faults at quality.worker.reap. */
  reader(deps: DeliveryDeps, budgetMs?: number): Promise<TargetReader>;
}

/** The cut points whose effect is on ClickHouse (the stage, the candidate, the EXCHANGE, the stage's drop at cleanup); every other one is on the stores. */
const ON_CLICKHOUSE =
  /^(publication\.(candidate|load|exchange|observe|fence|predecessor)|quality\.staged|delivery\.target\.drop-staging)\b/;

export function useGovernanceWorld(): GovernanceWorld {
  const world = {} as GovernanceWorld;
  // resume's ObserveTarget resolves the target binding from the environment, as a Lambda does.
  const base = useObserveWorld();
  beforeAll(async () => {
    const observe = base.world;
    const rec = recordStatements(observe.ch);
    const env = { CH_PUB_URL: observe.host.url, CH_URL: observe.host.url };
    const uuid = async (table: string) => observe.uuidOf(table);
    const select = async <T>(query: string, params: Record<string, string>): Promise<T[]> =>
      (await observe.ch.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
    const lane = (): GovernanceLane => {
      const chFaults = new FaultSwitch();
      const storeFaults = new FaultSwitch();
      const ports = awsPorts(observe.stores.config, storeFaults, new RequestMeter());
      const target = createClickHouseStageTarget(rec.handle, chFaults);
      const exchange = createClickHouseExchangeTarget(rec.handle, chFaults);
      const source = createClickHouseSource(rec.handle, { closeHandle: false });
      return {
        chFaults,
        storeFaults,
        switchOf: (cutPoint) => (ON_CLICKHOUSE.test(cutPoint) ? chFaults : storeFaults),
        deps: (manifestText, guarded) => ({
          ports,
          target,
          mode: exchangeModeOver(exchange),
          source: guarded ?? source,
          route: selectRoute(parseManifest(manifestText, '/config/publish.yaml'), 'daily'),
        }),
        recoveryDeps: (deps, guarded) => ({ ports, target, mode: deps.mode, route: deps.route, source: guarded }),
        reader: (deps, budgetMs) =>
          targetReaderOf(deps, probeReader(), {
            env,
            faults: storeFaults,
            ...(budgetMs !== undefined ? { remainingMs: () => budgetMs + 1_000, reserveMs: 1_000 } : {}),
          }),
      };
    };
    Object.assign(world, {
      observe,
      rec,
      view: { ports: observe.stores.ports, ch: observe.ch },
      lane,
      manifest: (table: string, assertion?: string) =>
        publicationManifest({ table, ...(assertion ? { assertion } : {}) })
          .replace('chunk_rows: 200', 'chunk_rows: 2000')
          .replace('part_rows: 600', 'part_rows: 2000'),
      async createTarget(table: string) {
        await observe.ch.client.command({ query: targetDdl(table) });
        await observe.ch.client.command({
          query: `INSERT INTO pub.${table} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
        });
        return (await uuid(table))!;
      },
      async windowIds(table: string) {
        const rows = await select<{ id: string }>(
          `SELECT toString(event_id) AS id FROM pub.${table} WHERE event_time >= parseDateTime64BestEffort({s:String}, 3) AND event_time < parseDateTime64BestEffort({e:String}, 3)`,
          { s: WINDOW.start, e: WINDOW.end },
        );
        return rows.map((r) => r.id).sort();
      },
      async leftovers(invocationId: string, table: string) {
        const names = exchangeNamesOf(invocationId, { database: 'pub', table });
        const rows = await select<{ name: string }>(
          'SELECT name FROM system.tables WHERE database = {db:String} AND name IN ({s:String}, {c:String}, {x:String})',
          {
            db: 'pub',
            s: names.stage,
            c: names.candidate,
            x: names.tombstone,
          },
        );
        return rows.map((r) => r.name);
      },
    } satisfies GovernanceWorld);
  }, 180_000);
  return world;
}
