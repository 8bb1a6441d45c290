import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryKeys, RELEASED_PK, RELEASED_SK_PREFIX } from '../../src/delivery/journal/keys.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import type { JournalState } from '../../src/domain/delivery/journal-states.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { expectReach, placesInLane, placesOfSubsystems, type ReachScenario } from '../support/cut-point-reach.js';
import { seedSourceDirectory } from '../support/delivery-source.js';
import { generateEvents, newInvocationId, openWarehouse, type Warehouse } from '../support/delivery-world.js';
import { exchangeScenarios } from '../support/reach-exchange.js';

/**
 * Every delivery, publication and quality cut point `cutpoint faults list` names for a
 * flow or command fires when armed through it (test/support/cut-point-reach.ts): SQL routes
 * (embedded PostgreSQL target, a chdb source directory) and ClickHouse exchange routes (a
 * ClickHouse host reached over HTTP by the steps and the bounded reader), each flow run by
 * `flow run`, each command as an operator types it, from the states those places act on.
 * A state a scenario needs is reached the way it happens: a run stopped by an armed fault.
 */

const CH_ENV = 'REACH_CLICKHOUSE';
const PG_ENV = 'REACH_WAREHOUSE';
let runtime: CliRuntime;
let warehouse: Warehouse;
let host: ObserveWorld;
let chDir = '';
let manifestFile = '';
let routes = 0;
/** The exchange scenarios (test/support/reach-exchange.ts), once the world is up. */
let exchange: ReturnType<typeof exchangeScenarios>;

/** A SQL route of its own per scenario (its own target table): a fixed window is delivered once per table. */
function sqlRoute(name: string, table: string): string {
  return `  ${name}:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-03T00:00:00Z" }
    target: { binding: warehouse, table: dwh.${table}, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id] }
    chunk_rows: 200
    part_rows: 400`;
}
const ROUTES = 26;
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
${Array.from({ length: ROUTES }, (_, i) => sqlRoute(`r${i + 1}`, `reach_${i + 1}`)).join('\n')}
`;

beforeAll(async () => {
  [runtime, warehouse, host] = await Promise.all([
    startCliRuntime('reach-delivery', manifestText),
    openWarehouse({ tables: Array.from({ length: ROUTES }, (_, i) => `reach_${i + 1}`) }),
    openObserveWorld(),
  ]);
  manifestFile = runtime.manifestFile;
  exchange = exchangeScenarios({ runtime, host, cli });
  chDir = join(runtime.root, 'clickhouse');
  await seedSourceDirectory(chDir, generateEvents(900, 240_000));
}, 240_000);

afterAll(async () => {
  await Promise.all([warehouse?.close(), host?.close()]);
  await runtime?.stop();
});

const env = () => ({
  CUTPOINT_STATE_DIR: runtime.stateDir,
  [CH_ENV]: `chdb:${chDir}`,
  [PG_ENV]: warehouse.pgServer.connectionString,
  CH_URL: host.host.url,
  CH_PUB_URL: host.host.url,
});
const cli = (argv: string[], faults = ''): Promise<CliRun> =>
  runCutpointInProcess(argv, { cwd: runtime.root, env: { ...env(), CUTPOINT_FAULTS: faults } });

/** The next unused SQL route's selector. */
function nextRoute(): string {
  if (routes >= ROUTES) throw new Error('test bug: more SQL scenarios than routes');
  return `${manifestFile}#r${++routes}`;
}

/** A `delivery run` stopped by `faults`, which must leave its invocation in `state`. */
async function stoppedAt(faults: string, state: JournalState): Promise<{ id: string; selector: string }> {
  const selector = nextRoute();
  const id = newInvocationId();
  const r = await cli(['delivery', 'run', '--manifest', selector, '--invocation-id', id], faults);
  expect(r.code, r.stderr).toBe(1);
  expect((await loadInvocation(runtime.ports, id)).state, r.stderr).toBe(state);
  return { id, selector };
}

/** A SQL invocation in `state`, after `reconcile` where the state needs it. */
async function sqlState(state: JournalState): Promise<{ id: string; selector: string }> {
  switch (state) {
    case 'PUBLICATION_UNKNOWN':
      return stoppedAt('delivery.publish.commit:lose-response*', state);
    case 'WRITING_UNKNOWN':
      return stoppedAt('delivery.target.load-chunk:lose-response@2*', state);
    case 'VERIFIED_EOF':
      return stoppedAt('delivery.publish.commit:fail*', state);
    case 'PUBLISHED':
      return stoppedAt('delivery.evidence.put:fail*', state);
    // The stage created, its journal record refused: a stage the journal does not name.
    case 'EMPTY_STAGING':
      return stoppedAt('delivery.staging.record:fail*', state);
    case 'PARTIAL_PROVED': {
      const at = await sqlState('WRITING_UNKNOWN');
      const r = await cli(['delivery', 'reconcile', at.id, '--manifest', at.selector, '--yes']);
      expect((await loadInvocation(runtime.ports, at.id)).state, r.stderr).toBe('PARTIAL_PROVED');
      return at;
    }
    default:
      throw new Error(`test bug: no scenario reaches ${state}`);
  }
}

/** A recovery action on a SQL invocation in `state`: by its command, or by its flow. */
function recovery(
  action: 'reconcile' | 'resume' | 'retire',
  state: JournalState,
  by: 'command' | 'flow',
): ReachScenario {
  return {
    name: `${action} from ${state} (${by})`,
    async run(faults) {
      const { id, selector } = await sqlState(state);
      if (by === 'command') return cli(['delivery', action, id, '--manifest', selector, '--yes'], faults);
      const input = JSON.stringify({ invocationId: id, manifestText, selector, yes: true });
      return cli(['flow', 'run', `delivery-${action}`, '--input', input], faults);
    },
  };
}

const deliverWindow: ReachScenario = {
  name: 'a SQL window delivered to CUSTODY_RELEASED',
  run: (faults) =>
    cli(['flow', 'run', 'deliver-window', '--input', JSON.stringify({ manifestText, selector: nextRoute() })], faults),
};
const deliveryRun: ReachScenario = {
  name: 'delivery run to CUSTODY_RELEASED',
  run: (faults) => cli(['delivery', 'run', '--manifest', nextRoute()], faults),
};

/**
 * A delivery finished long enough ago to expire: delivered, then its released-index entry
 * moved back two days, which is what time does to it (the index is sorted by release time).
 */
async function finishedTwoDaysAgo(): Promise<void> {
  const r = await cli(['delivery', 'run', '--manifest', nextRoute()]);
  expect(r.code, r.stderr).toBe(0);
  const [entry] = await runtime.ports.authority.query(RELEASED_PK, RELEASED_SK_PREFIX);
  if (!entry) throw new Error('the delivery left no released-index entry');
  const releasedAt = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const { pk: _pk, sk: _sk, version: _version, ...fields } = entry;
  const moved = { ...deliveryKeys.released(releasedAt, String(entry.invocationId)), ...fields, releasedAt };
  expect((await runtime.ports.authority.put('test.setup', moved, 'absent')).status).toBe('APPLIED');
  const { pk, sk } = entry;
  expect((await runtime.ports.authority.delete('test.setup', { pk, sk }, { version: entry.version })).status).toBe(
    'APPLIED',
  );
}
const expiring = (by: 'flow' | 'command'): ReachScenario => ({
  name: 'a delivery finished two days ago, expired with a one-day retention',
  run: async (faults) => {
    await finishedTwoDaysAgo();
    return by === 'flow'
      ? cli(['flow', 'run', 'delivery-expire', '--input', JSON.stringify({ retentionDays: 1 })], faults)
      : cli(['delivery', 'expire', '--retention-days', '1'], faults);
  },
});

describe('every delivery, publication and quality cut point fires where faults list says', () => {
  it('covers every place of those subsystems', () => {
    expect(Object.keys(PLACES).sort()).toEqual(placesOfSubsystems(['delivery', 'quality', 'local']));
  });

  it('quality.worker.reap armed fail through `quality observe`: the reader end is not proved, INCOMPLETE, the guard kept (the operator can rehearse it)', async () => {
    const { id, route } = await exchange.exchangeAt('PUBLISHED, PREPARED');
    const r = await cli(['quality', 'observe', id, '--manifest', route.selector, '--yes'], 'quality.worker.reap:fail');
    expect({ code: r.code, stdout: r.stdout }, r.stderr).toEqual({ code: 1, stdout: '' });
    expect(r.stderr).toContain('fault fired: quality.worker.reap fail (hit 1)');
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^quality\.incomplete: /);
    const record = await loadInvocation(runtime.ports, id);
    const capsule = await readCapsule(runtime.ports, { targetId: record.targetId, invocationId: id });
    expect(capsule?.schema === 2 && capsule.reader !== undefined, 'the reader guard is kept').toBe(true);
  }, 120_000);

  for (const [place, scenarios] of placesInLane(PLACES)) {
    it(place, async () => expectReach(place, scenarios()), 300_000);
  }
});

/** Each place and its scenarios (built when the test runs). */
const PLACES: Record<string, () => ReachScenario[]> = {
  'flow deliver-window': () => [deliverWindow],
  'delivery run': () => [deliveryRun],
  'flow publish-clickhouse': () => [
    exchange.publishObserving('complete'),
    exchange.publishObserving('pending'),
    exchange.publishObserving('failed'),
  ],
  'flow quality-observe': () =>
    (['complete', 'pending', 'failed'] as const).map((how) => exchange.operatorObserving(how, 'flow')),
  'quality observe': () =>
    (['complete', 'pending', 'failed'] as const).map((how) => exchange.operatorObserving(how, 'command')),
  'quality replay': () => [exchange.replay],
  'flow quality-replay': () => [exchange.replayFlow],
  'flow delivery-expire': () => [expiring('flow')],
  'delivery expire': () => [expiring('command')],
  ...Object.fromEntries(
    (['flow', 'command'] as const).flatMap((by) => {
      const place = (action: string) => (by === 'flow' ? `flow delivery-${action}` : `delivery ${action}`);
      return [
        [
          place('reconcile'),
          () => [
            recovery('reconcile', 'PUBLICATION_UNKNOWN', by),
            recovery('reconcile', 'WRITING_UNKNOWN', by),
            exchange.exchangeRecovery('reconcile', 'PUBLICATION_UNKNOWN, landed', by),
            exchange.exchangeRecovery('reconcile', 'PUBLICATION_UNKNOWN, not landed', by),
          ],
        ],
        [
          place('resume'),
          () => [
            // A continue: the unfinished parts claimed, extracted, loaded and journaled, then published.
            recovery('resume', 'PARTIAL_PROVED', by),
            recovery('resume', 'VERIFIED_EOF', by),
            recovery('resume', 'PUBLISHED', by),
            // A continue of an exchange operation: its parts loaded into the ClickHouse stage by INSERT.
            exchange.exchangeRecovery('resume', 'PARTIAL_PROVED', by),
            exchange.exchangeRecovery('resume', 'VERIFIED_EOF, no candidate', by),
            exchange.exchangeRecovery('resume', 'VERIFIED_EOF, PREPARED', by),
            exchange.exchangeRecovery('resume', 'PUBLISHED, COMPLETE', by),
            ...(['complete', 'pending', 'failed'] as const).map((how) =>
              exchange.exchangeRecovery('resume', 'PUBLISHED, PREPARED', by, how),
            ),
          ],
        ],
        [
          place('retire'),
          () => [
            recovery('retire', 'PARTIAL_PROVED', by),
            recovery('retire', 'EMPTY_STAGING', by),
            exchange.exchangeRecovery('retire', 'REEXTRACT_REQUIRED', by),
          ],
        ],
      ];
    }),
  ),
};
