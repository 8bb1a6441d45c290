import { createHash } from 'node:crypto';
import { targetIdOf } from '../../../src/domain/delivery/identifiers.js';
import { invocationIdFrom } from '../../../src/domain/delivery/identifiers.js';
import type { FlowResult } from '../../../src/local/flow-runner.js';
import { replayGovernance, type ReplayInput } from '../../../src/quality/replay.js';
import { inspectOp } from '../../support/quality-history.js';
import { lambdaInvocations } from '../../support/sched/invocations.js';
import type { Scenario } from '../../support/sched/scenario.js';
import { FAULT_CHOICES, type Scheduler } from '../../support/sched/scheduler.js';
import { checkPublication, type PublicationRun } from './publication-check.js';
import { closePublicationWorld, openPublicationWorld, SELECTOR, type PublicationWorld } from './publication-world.js';
import { OperationWatch } from './publication-watch.js';
import { exchangeOf } from '../../../src/publication/exchange-deps.js';

/**
 * The publish-clickhouse flow and the quality-observe flow (docs/rules.md#exchange-publication,
 * docs/rules.md#bounded-reader) under the scheduler. Each schedule publishes the fixed window
 * into its own fresh table `pub.s<seed>` (one stale row: generation P) with an operation id
 * derived from the seed. Actors:
 * - the execution, every Task invocation of it possibly a zombie or a duplicate;
 * - (half the schedules) a duplicate StartExecution of the same publication: a client retry
 *   that minted a new execution name (Step Functions dedups a same-name start), same input;
 * - (half) the operator's `quality observe` (the quality-observe flow): it polls inspect,
 *   every 2-5 moves, until observe is offered (PUBLISHED, capsule PREPARED/TARGET_PENDING),
 *   racing the flow's own ObserveTarget for the reader guard;
 * - the recovery dispatcher: each execution that fails starts delivery-reconcile once with
 *   {recoveryOf, originalInput}, under the scheduler too.
 * Settle (faults off): the runbook — inspect, then the first permitted action of reconcile,
 * observe, resume, retire, each as its flow — until the operation is final or retained with
 * nothing permitted for a stated reason; then, once COMPLETE, one `quality replay`.
 * The checker: publication-check.ts.
 */

/** The operator's wait, one move (a park with no effect: never faulted). */
const POLL = 'sched.operator.poll';
const FINAL = new Set(['CUSTODY_RELEASED', 'RETIRED', 'INCIDENT_RETAINED']);
const DRIVE: ReadonlyArray<[string, string]> = [
  ['reconcile', 'delivery-reconcile'],
  ['observe', 'quality-observe'],
  ['resume', 'delivery-resume'],
  ['retire', 'delivery-retire'],
];

export const publicationScenario: Scenario<PublicationWorld> = {
  name: 'publication',
  actors: [
    'zombie',
    'duplicate-invocation',
    'duplicate-start',
    'operator-race',
    'operator-early',
    'recovery',
    'replay',
  ],
  options: { faultsAt: (cutPoint) => (cutPoint === POLL ? [] : FAULT_CHOICES) },
  open: (endpoints) => openPublicationWorld(endpoints),
  close: (world) => closePublicationWorld(world),
  async plan(world, s) {
    const table = `s${s.seed}`;
    const invocationId = invocationIdFrom(
      createHash('sha256').update(`cutpoint.sched.publication/${s.seed}`).digest().subarray(0, 16),
    );
    const manifestText = world.manifest(table);
    const predecessorUuid = await world.createTarget(table);
    world.rec.statements.splice(0);
    const ref = { targetId: targetIdOf('pub_ch', { schema: 'pub', name: table }), invocationId };
    const watch = new OperationWatch(world.checkPorts, ref);
    world.afterEffect = (cutPoint) => watch.after(cutPoint);
    const request = { invocationId, manifestText, selector: SELECTOR };
    const run: PublicationRun = { table, ref, predecessorUuid, request, watch, flows: [] };
    const input = { ...request, session: `run-${invocationId.slice(4, 14)}` };

    const flow = async (
      label: string,
      name: string,
      flowInput: unknown,
      executionName: string,
    ): Promise<FlowResult> => {
      const invocations = lambdaInvocations(s, label);
      const result = await world.run(name, flowInput, { executionName, invoke: invocations.invoke });
      run.flows.push({ label, flow: name, result });
      const refused = result.events.find((e) => e.type === 'TaskFailed' && e.error)?.cause;
      s.note(
        `${label} ended ${result.status}${result.error ? ` ${result.error}` : ''}${result.status === 'FAILED' && refused ? ` (${refused.slice(0, 160)})` : ''}`,
      );
      return result;
    };
    const execution = (label: string, executionName: string) =>
      s.spawn(label, async () => {
        const result = await flow(label, 'publish-clickhouse', input, executionName);
        if (result.status === 'FAILED') dispatchRecovery(label, result);
      });
    // The dispatcher's rule: one delivery-reconcile per failed execution, named after it.
    const dispatchRecovery = (label: string, failed: FlowResult) => {
      s.count('recovery', `the dispatcher starts delivery-reconcile for ${label}`);
      void s.spawn(`recovery:${label}`, () =>
        flow(
          `recovery:${label}`,
          'delivery-reconcile',
          { recoveryOf: failed.executionArn, originalInput: JSON.stringify(input) },
          `recover-${label}-${s.seed}`,
        ),
      );
    };

    void execution('exec', `publish-${s.seed}`);
    if (s.rng.chance(0.5)) {
      s.count('duplicate-start', 'a second StartExecution of the same publication (new execution name, same input)');
      void execution('exec:dup-start', `publish-${s.seed}-retry`);
    }
    if (s.rng.chance(0.5)) {
      // The flow reaches PUBLISHED after ~40-70 moves of all actors: the operator waits up to
      // 20-90 moves, inspecting every 2-5 (an inspect is ~10 reads: polled every move, it
      // was most of a schedule's requests), so it usually gets there, at most a few moves late.
      const moves = s.rng.int(20, 90);
      const every = s.rng.int(2, 5);
      void s.spawn('operator:observe', async () => {
        let observing = false;
        for (let move = 0; move < moves && !observing; move++) {
          if (move % every === 0) {
            const seen = await inspectOp(world.checkPorts, ref).catch(() => undefined);
            observing = seen?.actions.includes('observe') ?? false;
          }
          if (!observing) await s.faults.at(POLL, async () => undefined);
        }
        s.count(
          observing ? 'operator-race' : 'operator-early',
          `the operator runs quality observe (${observing ? 'observe offered' : 'not offered yet'})`,
        );
        await flow('operator:observe', 'quality-observe', { ...request, yes: true }, `observe-${s.seed}`);
      });
    }
    return {
      settle: () => settle(world, s, run),
      check: () => checkPublication(world, s, run),
    };
  },
};

/** The runbook, faults off: the permitted actions to a final state; then one replay of a COMPLETE governance. */
async function settle(world: PublicationWorld, s: Scheduler, run: PublicationRun): Promise<void> {
  const { ref, request } = run;
  for (let round = 0; round < 8; round++) {
    const seen = await inspectOp(world.checkPorts, ref);
    if (FINAL.has(seen.state)) break;
    const next = DRIVE.find(([action]) => seen.actions.includes(action));
    if (!next) {
      run.stuck = { state: seen.state, diagnostic: seen.diagnostic, actions: seen.actions };
      break;
    }
    const result = await world.run(
      next[1],
      { ...request, yes: true },
      { executionName: `settle-${next[0]}-${round}-${s.seed}` },
    );
    run.flows.push({ label: `settle:${next[0]}`, flow: next[1], result });
    s.note(
      `settle: ${seen.state} (${seen.diagnostic}) → ${next[1]} ${result.status}${result.error ? ` ${result.error}` : ''}`,
    );
  }
  await run.watch.sample('settle');
  const seen = await inspectOp(world.checkPorts, ref);
  run.final = { state: seen.state, diagnostic: seen.diagnostic, actions: seen.actions };
  if (seen.actions.includes('replay')) await replay(world, s, run);
}

/** `quality replay` of the completed governance: read-only, its own receipt, the dispatch count unchanged. */
async function replay(world: PublicationWorld, s: Scheduler, run: PublicationRun): Promise<void> {
  const mark = world.rec.statements.length;
  const deps = await world.stepDeps(run.request);
  const input: ReplayInput = run.request;
  s.count('replay', 'quality replay of the COMPLETE governance');
  run.replay = {
    receipt: await replayGovernance(input, {
      ports: world.checkPorts,
      target: deps.target,
      exchange: exchangeOf(deps),
      route: deps.route,
    }),
    statements: world.rec.statements.slice(mark),
  };
}
