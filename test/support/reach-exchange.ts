import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import type { ObserveWorld } from '../fixtures/quality/observe-world.js';
import type { CliRun, CliRuntime } from './cli-runtime.js';
import { withRule, type ReachRun, type ReachScenario } from './cut-point-reach.js';
import { newInvocationId } from './delivery-world.js';
import { publicationManifest, targetDdl } from './publication-world.js';

/** What the exchange scenarios run in: the CLI runtime, the ClickHouse host, the CLI with the lane's environment. */
export interface ExchangeReachWorld {
  runtime: CliRuntime;
  host: ObserveWorld;
  cli(argv: string[], faults?: string): Promise<CliRun>;
}

/**
 * The ClickHouse exchange scenarios of the delivery reach test
 * (test/integration/cut-point-reach-delivery.test.ts): each on an exchange route of its own
 * (a fresh `pub.<table>` holding a stale predecessor row), the operation brought to the
 * state a place acts on the way it happens — a publish-clickhouse run stopped by an armed
 * fault — then the place's flow or command.
 */
export function exchangeScenarios({ runtime, host, cli }: ExchangeReachWorld) {
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
    'VERIFIED_EOF, PREPARED': {
      faults: 'publication.dispatch.intent:fail*',
      state: 'VERIFIED_EOF',
      capsule: 'PREPARED',
    },
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
            : runConfirmed('quality-observe', id, route, f),
        );
      },
    };
  }

  /** `flow run` of an operator's confirmed action on the operation (`yes: true`, as --yes). */
  function runConfirmed(flow: string, id: string, route: ExchangeRoute, faults: string): Promise<CliRun> {
    const input = { invocationId: id, manifestText: route.manifestText, selector: route.selector, yes: true };
    return cli(['flow', 'run', flow, '--input', JSON.stringify(input)], faults);
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
            : runConfirmed(`delivery-${action}`, id, route, f);
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

  return { exchangeAt, publishObserving, operatorObserving, exchangeRecovery, replay, replayFlow };
}
