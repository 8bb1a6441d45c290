// Over ~300 lines (476), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryKeys, RELEASED_PK, RELEASED_SK_PREFIX } from '../../src/delivery/journal/keys.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import type { JournalState } from '../../src/domain/delivery/journal-states.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import {
  expectReach,
  placesInLane,
  placesOfSubsystems,
  withRule,
  type ReachRun,
  type ReachScenario,
} from '../support/cut-point-reach.js';
import { seedSourceDirectory } from '../support/delivery-source.js';
import { generateEvents, newInvocationId, openWarehouse, type Warehouse } from '../support/delivery-world.js';
import { publicationManifest, targetDdl } from '../support/publication-world.js';

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

/** A ClickHouse exchange route of its own (a fresh `pub.<table>` holding a stale predecessor row), its manifest in a file. */
let pubTables = 0;
async function exchangeRoute(
  options: { assertion?: string } = {},
): Promise<{ selector: string; manifestText: string; table: string }> {
  const table = `reach_pub_${++pubTables}`;
  await host.ch.client.command({ query: targetDdl(table) });
  await host.ch.client.command({
    query: `INSERT INTO pub.${table} VALUES (99999, '2026-11-02 12:00:00.000', 'stale', 0, 'old generation')`,
  });
  const manifestText = publicationManifest({ ...options, table });
  const file = join(runtime.root, `${table}.yaml`);
  await writeFile(file, manifestText);
  return { selector: `${file}#daily`, manifestText, table };
}

type ExchangeRoute = Awaited<ReturnType<typeof exchangeRoute>>;
const publish = (route: ExchangeRoute, id: string, faults: string): Promise<CliRun> =>
  cli(
    [
      'flow',
      'run',
      'publish-clickhouse',
      '--input',
      JSON.stringify({ invocationId: id, manifestText: route.manifestText, selector: route.selector }),
    ],
    faults,
  );

/** Where an exchange operation is left for a place to act on: the journal state and the capsule state. */
const EXCHANGE_STOPS = {
  /** Dispatched, observation not started: observe (the operator's) and resume act. */
  'PUBLISHED, PREPARED': { faults: 'quality.reader.acquire:fail*', state: 'PUBLISHED', capsule: 'PREPARED' },
  /** Observed COMPLETE, evidence not written: resume finishes it. */
  'PUBLISHED, COMPLETE': { faults: 'delivery.evidence.put:fail*', state: 'PUBLISHED', capsule: 'COMPLETE' },
  /** Extracted and verified, no candidate yet: resume fills it, judges it and dispatches. */
  'VERIFIED_EOF, no candidate': {
    faults: 'publication.candidate.create:fail*',
    state: 'VERIFIED_EOF',
    capsule: undefined,
  },
  /** Prepared, never dispatched: resume dispatches. */
  'VERIFIED_EOF, PREPARED': { faults: 'publication.dispatch.intent:fail*', state: 'VERIFIED_EOF', capsule: 'PREPARED' },
  /** The EXCHANGE applied, its answer and every observation lost: reconcile proves it. */
  'PUBLICATION_UNKNOWN, landed': {
    faults: 'publication.exchange:lose-response,publication.observe:fail@2*',
    state: 'PUBLICATION_UNKNOWN',
    capsule: 'PREPARED',
  },
  /** The EXCHANGE never arrived, its answer lost: reconcile fences it out by renaming the candidate. */
  'PUBLICATION_UNKNOWN, not landed': {
    faults: 'publication.exchange:lose-request,publication.observe:fail@2*',
    state: 'PUBLICATION_UNKNOWN',
    capsule: 'PREPARED',
  },
  /** A chunk's INSERT failing from the second on, the part stopped: reconcile proves a continuable PARTIAL_PROVED (exchangeRecovery). */
  WRITING_UNKNOWN: { faults: 'publication.load.insert:fail@2*', state: 'WRITING_UNKNOWN', capsule: undefined },
  /** Published and governed to the end. */
  CUSTODY_RELEASED: { faults: '', state: 'CUSTODY_RELEASED', capsule: 'COMPLETE' },
} as const;
type ExchangeStop = keyof typeof EXCHANGE_STOPS;

async function exchangeAt(stop: ExchangeStop): Promise<{ id: string; route: ExchangeRoute }> {
  const { faults, state, capsule } = EXCHANGE_STOPS[stop];
  const route = await exchangeRoute();
  const id = newInvocationId();
  const r = await publish(route, id, faults);
  expect((await loadInvocation(runtime.ports, id)).state, r.stderr).toBe(state);
  expect(
    (
      await readCapsule(runtime.ports, {
        targetId: (await loadInvocation(runtime.ports, id)).targetId,
        invocationId: id,
      })
    )?.state,
    r.stderr,
  ).toBe(capsule);
  return { id, route };
}

/** A staged probe that fails on the candidate: REEXTRACT_REQUIRED, retire's to act on. */
async function stagedFailure(): Promise<{ id: string; route: ExchangeRoute }> {
  const route = await exchangeRoute({ assertion: 'SELECT count() FROM {relation} WHERE amount >= 0' });
  const id = newInvocationId();
  const r = await publish(route, id, '');
  expect((await loadInvocation(runtime.ports, id)).state, r.stderr).toBe('REEXTRACT_REQUIRED');
  return { id, route };
}

/**
 * How an observation ends: `complete`; `pending` — the probe inside the reader child fails
 * (armed `fail*` there: its firing is seen in what it leaves, the capsule's last observation
 * naming Cutpoint.EffectFailed, since the child's own output is never printed); `failed` — a
 * row written into the published table before the probes read it (a duplicate key).
 */
type Observation = 'complete' | 'pending' | 'failed';

async function observing(
  id: string,
  route: ExchangeRoute,
  how: Observation,
  faults: string,
  act: (faults: string) => Promise<CliRun>,
): Promise<ReachRun> {
  if (how === 'failed')
    await host.ch.client.command({
      query: `INSERT INTO pub.${route.table} SELECT * FROM pub.${route.table} ORDER BY event_id LIMIT 1`,
    });
  const run = await act(how === 'pending' ? withRule(faults, 'quality.target.probe', 'fail*') : faults);
  const record = await loadInvocation(runtime.ports, id);
  const capsule = await readCapsule(runtime.ports, { targetId: record.targetId, invocationId: id });
  const last = capsule?.schema === 2 ? capsule.lastObservation : undefined;
  expect(last?.outcome, run.stderr).toBe(
    how === 'complete' ? 'COMPLETE' : how === 'pending' ? 'TARGET_PENDING' : 'FAILED',
  );
  return how === 'pending' && last?.errorClass === 'Cutpoint.EffectFailed'
    ? { ...run, alsoFired: ['quality.target.probe'] }
    : run;
}

/** The flow's own observation after Dispatch; `failed` writes the row between the EXCHANGE and the probes (the reader guard's acquire is held back meanwhile). */
function publishObserving(how: Observation): ReachScenario {
  return {
    name: `publish-clickhouse, its observation ${how}`,
    async run(faults) {
      const route = await exchangeRoute();
      const id = newInvocationId();
      if (how !== 'failed') return observing(id, route, how, faults, (f) => publish(route, id, f));
      const running = publish(route, id, withRule(faults, 'quality.reader.acquire', 'delay=3000*'));
      const published = candidateUuidOf(id);
      for (let i = 0; i < 200 && (await host.uuidOf(route.table)) !== published; i++)
        await new Promise((r) => setTimeout(r, 50));
      return observing(id, route, how, faults, () => running);
    },
  };
}

/** The operator's observation (`quality observe`, or the quality-observe flow) of an operation left PUBLISHED with its capsule PREPARED. */
function operatorObserving(how: Observation, by: 'command' | 'flow'): ReachScenario {
  return {
    name: `observe (${by}) from PUBLISHED/PREPARED, ${how}`,
    async run(faults) {
      const { id, route } = await exchangeAt('PUBLISHED, PREPARED');
      return observing(id, route, how, faults, (f) =>
        by === 'command'
          ? cli(['quality', 'observe', id, '--manifest', route.selector, '--yes'], f)
          : cli(
              [
                'flow',
                'run',
                'quality-observe',
                '--input',
                JSON.stringify({
                  invocationId: id,
                  manifestText: route.manifestText,
                  selector: route.selector,
                  yes: true,
                }),
              ],
              f,
            ),
      );
    },
  };
}

/** An exchange operation whose extraction stopped, reconciled: a continuable PARTIAL_PROVED, resume's to continue. */
async function exchangePartial(): Promise<{ id: string; route: ExchangeRoute }> {
  const at = await exchangeAt('WRITING_UNKNOWN');
  const r = await cli(['delivery', 'reconcile', at.id, '--manifest', at.route.selector, '--yes']);
  expect((await loadInvocation(runtime.ports, at.id)).state, r.stderr).toBe('PARTIAL_PROVED');
  return at;
}

/** A recovery action on an exchange operation: from one of EXCHANGE_STOPS, the staged failure (retire), or a stopped extraction (resume). */
function exchangeRecovery(
  action: 'reconcile' | 'resume' | 'retire',
  from: ExchangeStop | 'REEXTRACT_REQUIRED' | 'PARTIAL_PROVED',
  by: 'command' | 'flow',
  how: Observation = 'complete',
): ReachScenario {
  return {
    name: `${action} (${by}) of an exchange operation from ${from}${action === 'resume' && from === 'PUBLISHED, PREPARED' ? `, its observation ${how}` : ''}`,
    async run(faults) {
      const { id, route } =
        from === 'REEXTRACT_REQUIRED'
          ? await stagedFailure()
          : from === 'PARTIAL_PROVED'
            ? await exchangePartial()
            : await exchangeAt(from);
      const act = (f: string) =>
        by === 'command'
          ? cli(['delivery', action, id, '--manifest', route.selector, '--yes'], f)
          : cli(
              [
                'flow',
                'run',
                `delivery-${action}`,
                '--input',
                JSON.stringify({
                  invocationId: id,
                  manifestText: route.manifestText,
                  selector: route.selector,
                  yes: true,
                }),
              ],
              f,
            );
      return action === 'resume' && from === 'PUBLISHED, PREPARED'
        ? observing(id, route, how, faults, act)
        : act(faults);
    },
  };
}

const replay: ReachScenario = {
  name: 'quality replay of a released operation',
  async run(faults) {
    const { id, route } = await exchangeAt('CUSTODY_RELEASED');
    return cli(['quality', 'replay', id, '--manifest', route.selector], faults);
  },
};

/** The same replay by its flow, as `aws stepfunctions start-execution` (or `quality replay --aws`) starts it. */
const replayFlow: ReachScenario = {
  name: 'flow quality-replay of a released operation',
  async run(faults) {
    const { id, route } = await exchangeAt('CUSTODY_RELEASED');
    const input = JSON.stringify({ invocationId: id, manifestText: route.manifestText, selector: route.selector });
    return cli(['flow', 'run', 'quality-replay', '--input', input], faults);
  },
};

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
    const { id, route } = await exchangeAt('PUBLISHED, PREPARED');
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
    publishObserving('complete'),
    publishObserving('pending'),
    publishObserving('failed'),
  ],
  'flow quality-observe': () =>
    (['complete', 'pending', 'failed'] as const).map((how) => operatorObserving(how, 'flow')),
  'quality observe': () => (['complete', 'pending', 'failed'] as const).map((how) => operatorObserving(how, 'command')),
  'quality replay': () => [replay],
  'flow quality-replay': () => [replayFlow],
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
            exchangeRecovery('reconcile', 'PUBLICATION_UNKNOWN, landed', by),
            exchangeRecovery('reconcile', 'PUBLICATION_UNKNOWN, not landed', by),
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
            exchangeRecovery('resume', 'PARTIAL_PROVED', by),
            exchangeRecovery('resume', 'VERIFIED_EOF, no candidate', by),
            exchangeRecovery('resume', 'VERIFIED_EOF, PREPARED', by),
            exchangeRecovery('resume', 'PUBLISHED, COMPLETE', by),
            ...(['complete', 'pending', 'failed'] as const).map((how) =>
              exchangeRecovery('resume', 'PUBLISHED, PREPARED', by, how),
            ),
          ],
        ],
        [
          place('retire'),
          () => [
            recovery('retire', 'PARTIAL_PROVED', by),
            recovery('retire', 'EMPTY_STAGING', by),
            exchangeRecovery('retire', 'REEXTRACT_REQUIRED', by),
          ],
        ],
      ];
    }),
  ),
};
