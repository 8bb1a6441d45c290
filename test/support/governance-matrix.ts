// Over ~300 lines (324), kept whole — one job: the governance matrix's case — the forward run, the permitted actions, the invariants.
import { expect } from 'vitest';
import type { ArmedFaultInjector } from '../../src/adapters/fault-injector.js';
import { runDeliverySteps, type DeliveryRun, type StepList } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { loadCustody, loadInvocation, type InvocationRecord } from '../../src/delivery/journal/records.js';
import { LIVE_ACTION_RUNNERS } from '../../src/delivery/recovery/actions.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import { JOURNAL_STATES } from '../../src/domain/delivery/journal-states.js';
import { permittedActions } from '../../src/domain/delivery/action-guide.js';
import type { QualityAction } from '../../src/domain/quality/actions.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { rerunTransient } from '../../src/engine/rerun.js';
import { PUBLICATION_STEPS } from '../../src/publication/publication-steps.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { inspectQuality, NotGovernedError } from '../../src/quality/inspect.js';
import { replayGovernance } from '../../src/quality/replay.js';
import { observeTarget } from '../../src/quality/steps/observe-target.js';
import { newInvocationId } from './delivery-world.js';
import {
  checkGovernanceInvariants,
  governanceSnapshot,
  type GovernanceOp,
  type GovernanceSnapshot,
} from './governance-invariants.js';
import { SELECTOR, type GovernanceLane, type GovernanceWorld } from './governance-world.js';
import { windowIds as WINDOW_IDS } from './publication-world.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

/**
 * One case of the governance fault matrices (F1 publish-clickhouse, F2 governance): an
 * operation on its own target table is brought to an entry point (`prelude`), a fault is
 * armed persistently (`cut:kind*`) while `faulted` runs (the forward path, or the action
 * that crosses the cut point), then — the fault disarmed — only the actions inspect
 * permits are applied (reconcile, resume, observe, retire: the use cases, in-process, with
 * a source that refuses and records every call) until a final state: CUSTODY_RELEASED with
 * the capsule COMPLETE and retired (the window exactly once on the target = C, dispatch
 * count 1, the checkpoint once), RETIRED with the target still P, or a stop the spec leaves
 * to the operator (a held reader guard: INCOMPLETE, quiescence; or FAILED) where inspect
 * offers nothing. Then I1–I10 (governance-invariants.ts).
 *
 * Unlike the delivery matrix (delivery-matrix.ts), the permitted actions are the quality
 * guide's (docs/rules.md#quality-state-to-action: `observe` on PUBLISHED, replay listed,
 * nothing under a held guard) and the end is judged on ClickHouse UUIDs, so the loop is its
 * own. `GOV_TIMING=1` prints each case's trail with the milliseconds every action took.
 */

export type Stop = 'CUSTODY_RELEASED' | 'RETIRED' | 'GUARD_HELD' | 'FAILED';

export interface CaseContext {
  world: GovernanceWorld;
  lane: GovernanceLane;
  table: string;
  deps: DeliveryDeps;
  op: GovernanceOp;
  beginInput: BeginInput;
  /** The forward path (begin, then publish-clickhouse's steps, observe with the world's reader): how it ended. */
  forward(list?: StepList): Promise<string>;
  /** One permitted action, in process; returns what it said. */
  act(action: QualityAction): Promise<string>;
  /** The budget `observe` gives its reader (0: the deadline is now — TARGET_PENDING without starting the reader). */
  observeBudgetMs?: number;
  /**
   * Applies permitted actions (replay first whenever it is offered, then reconcile, resume,
   * observe, retire) until a stop, `limit` actions, or — with `untilError` — the first
   * action that throws. Records every state and action in the case's history.
   */
  drive(options?: { limit?: number; untilError?: boolean }): Promise<Stop | undefined>;
}

export interface GovernanceCase {
  world: GovernanceWorld;
  table: string;
  /** `cut:kind[=ms]*`, armed on the cut point's switch (or the environment, for the reader child's cut point). */
  spec: string;
  assertion?: string;
  /** Unfaulted (or its own faults) before the armed phase. */
  prelude?: (ctx: CaseContext) => Promise<void>;
  /** What runs under the fault; default the forward path. */
  faulted?: (ctx: CaseContext) => Promise<string>;
  /** The armed cut point is inside the reader child (the child inherits CUTPOINT_FAULTS): its firing is not visible here. */
  inChild?: boolean;
}

export interface CaseResult {
  stop: Stop;
  trail: string;
  exchangeCount: number;
}

const ORDER: readonly QualityAction[] = ['reconcile', 'resume', 'observe', 'retire'];

export const stepsThroughCheckpoint: StepList = PUBLICATION_STEPS.filter(([name]) => name !== 'cleanup');

export async function runGovernanceCase(c: GovernanceCase): Promise<CaseResult> {
  const { world, table } = c;
  const predecessor = await world.createTarget(table);
  const manifestText = world.manifest(table, c.assertion);
  const lane = world.lane();
  const deps = lane.deps(manifestText);
  const source: GuardedSource = forbiddenSource();
  // Source-free, but for a continue of a proved PARTIAL_PROVED, which reads the unfinished
  // parts' remaining ranges through its own guard (RecoveryDeps.extract), as the command does.
  const recovery: RecoveryDeps = { ...lane.recoveryDeps(deps, source), extract: { source: deps.source! } };
  const sourceFree = lane.deps(manifestText, source);
  const invocationId = newInvocationId();
  const beginInput: BeginInput = {
    invocationId,
    session: `run-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: SELECTOR,
  };
  const recoveryInput: RecoveryInput = { invocationId, manifestText, selector: SELECTOR };
  const op: GovernanceOp = { targetId: '', invocationId, route: 'daily', database: 'pub', table };

  const history: string[] = [];
  const attempt = async (what: () => Promise<string>): Promise<void> => {
    const t0 = Date.now();
    try {
      history.push(await what());
    } catch (error) {
      history.push(`threw ${(error as Error).name}: ${(error as Error).message.slice(0, 120)}`);
    }
    if (process.env.GOV_TIMING) history[history.length - 1] += ` (${Date.now() - t0} ms)`;
  };
  const ctx: CaseContext = {
    world,
    lane,
    table,
    deps,
    op,
    beginInput,
    async forward(list = PUBLICATION_STEPS) {
      const run = await forwardRun(lane, deps, beginInput, list, (targetId) => (op.targetId = targetId));
      return `forward → ${run.state}`;
    },
    async act(action) {
      if (action === 'observe') {
        // The observation runs as the operation's custody holder (the flow's own later identical invocation, or the session that took custody over).
        const custody = await loadCustody(world.view.ports, op.targetId);
        if (!custody?.fence) throw new Error('observe offered without custody held');
        const out = await observeTarget(
          { invocationId, fence: custody.fence },
          sourceFree,
          await lane.reader(sourceFree, ctx.observeBudgetMs),
        );
        return `observe → ${out.capsuleState ?? out.state}`;
      }
      if (action === 'replay') {
        const receipt = await replayGovernance(recoveryInput, {
          ports: deps.ports,
          target: recovery.target,
          exchange: exchangeOf(recovery),
          route: deps.route,
          faults: lane.storeFaults,
        });
        return `replay → ${receipt ? 'receipt' : 'none'}`;
      }
      return `${action} → ${(await LIVE_ACTION_RUNNERS[action](recoveryInput, recovery)).state}`;
    },
    async drive({ limit = 8, untilError = false } = {}) {
      for (let i = 0; ; i++) {
        const record = await loadInvocation(world.view.ports, invocationId);
        const { state } = record;
        const capsule = (await readCapsule(world.view.ports, op)) as CapsuleV2 | undefined;
        history.push(`${state}/${capsule?.state ?? '-'}${capsule?.reader ? '+guard' : ''}`);
        expect(JOURNAL_STATES).toContain(state);
        const offered = await offeredActions(world, record, capsule);
        expect(offered.sort(), `inspect at ${history.join(' → ')}`).toEqual(specActions(record, capsule).sort());
        if (state === 'CUSTODY_RELEASED' || state === 'RETIRED') return state;
        if (capsule?.reader && state === 'PUBLISHED') return 'GUARD_HELD';
        if (capsule?.state === 'FAILED') return 'FAILED';
        if (i >= limit) {
          expect(untilError, `no convergence: ${history.join(' → ')}`).toBe(true);
          return undefined;
        }
        const threw = (): boolean => history.at(-1)!.startsWith('threw');
        if (offered.includes('replay')) {
          await attempt(() => ctx.act('replay'));
          if (untilError && threw()) return undefined;
        }
        const action = ORDER.find((a) => offered.includes(a));
        if (action) await attempt(() => ctx.act(action));
        else {
          expect(['EMPTY_STAGING', 'WRITING_UNKNOWN'], `stuck with no action: ${history.join(' → ')}`).toContain(state);
          await attempt(() => ctx.forward());
        }
        if (untilError && threw()) return undefined;
      }
    },
  };

  if (c.prelude) {
    await c.prelude(ctx);
    history.push('prelude');
  }
  const before: GovernanceSnapshot[] = [];
  if (op.targetId) before.push(await governanceSnapshot(world.view, op));

  const cut = c.spec.slice(0, c.spec.indexOf(':'));
  let injector: ArmedFaultInjector | undefined;
  if (c.inChild) process.env.CUTPOINT_FAULTS = c.spec;
  else injector = lane.switchOf(cut).arm(c.spec);
  try {
    await attempt(() => (c.faulted ?? ((x: CaseContext) => x.forward()))(ctx));
  } finally {
    if (c.inChild) delete process.env.CUTPOINT_FAULTS;
    lane.switchOf(cut).disarm();
    delete ctx.observeBudgetMs;
  }
  if (injector) expect(injector.fired.length, `${c.spec} was not hit: ${history.join(' → ')}`).toBeGreaterThan(0);

  const record = await tryLoad(world, invocationId);
  if (!record) {
    // Begin never happened: the same invocation, run again, proceeds.
    await attempt(() => ctx.forward());
  }
  op.targetId = (await loadInvocation(world.view.ports, invocationId)).targetId;
  before.push(await governanceSnapshot(world.view, op));

  const stop = await ctx.drive();
  expect(stop, `no stop: ${history.join(' → ')}`).toBeDefined();

  const trail = history.join(' → ');
  if (process.env.GOV_TIMING) console.log(trail);
  const exchangeCount = world.rec.exchangeCount(op);
  const end = await checkGovernanceInvariants(world.view, op, {
    exchangeCount,
    before,
    predecessorUuid: predecessor,
    source,
    ...(stop === 'GUARD_HELD' ? { guard: 'held' as const } : {}),
  });
  const C = end.capsule?.generation.candidateUuid;
  if (stop === 'CUSTODY_RELEASED') {
    expect(end.capsule, trail).toMatchObject({ state: 'COMPLETE', retiredAt: expect.any(String) });
    expect(end.targetUuid, trail).toBe(C);
    expect(await world.windowIds(table), trail).toEqual(WINDOW_IDS);
    expect(end.journal.facts.dispatch?.count, trail).toBe(1);
    expect(exchangeCount, trail).toBe(1);
    await attempt(() => ctx.act('replay'));
    expect(history.at(-1), trail).toMatch(/^replay → receipt/);
  } else if (stop === 'RETIRED') {
    expect(end.targetUuid, trail).toBe(predecessor);
    expect(await world.windowIds(table), trail).toEqual(['99999']);
  } else {
    // A stop the spec leaves to the operator: nothing offered (checked above), custody kept, nothing published twice.
    expect(end.journal.state, trail).toBe('PUBLISHED');
    expect(end.targetUuid, trail).toBe(C);
  }
  if (stop !== 'GUARD_HELD' && stop !== 'FAILED') expect(await world.leftovers(invocationId, table), trail).toEqual([]);
  return { stop: stop!, trail, exchangeCount };
}

/** Begin, then the steps in flow order (ObserveTarget with the world's reader: its reap runs at the stores' faults). */
export async function forwardRun(
  lane: GovernanceLane,
  deps: DeliveryDeps,
  input: BeginInput,
  list: StepList = PUBLICATION_STEPS,
  begun?: (targetId: string) => void,
): Promise<DeliveryRun> {
  const out = await rerunTransient(() => begin(input, deps));
  begun?.(out.targetId);
  const tr = await lane.reader(deps);
  const steps: StepList = list.map(([name, step]) =>
    name === 'observe-target' ? ([name, (i, d) => observeTarget(i, d, tr)] as const) : ([name, step] as const),
  );
  return runDeliverySteps(out, deps, [], steps);
}

/** What inspect offers now: the quality projection once the operation is governed, the delivery one before. */
async function offeredActions(
  world: GovernanceWorld,
  record: InvocationRecord,
  capsule: CapsuleV2 | undefined,
): Promise<QualityAction[]> {
  try {
    const projection = await inspectQuality(world.view.ports, record.invocationId);
    expect(projection.journal_state).toBe(record.state);
    expect(projection.reader_guard.held).toBe(capsule?.reader !== undefined);
    return [...projection.permitted_actions];
  } catch (error) {
    if (!(error instanceof NotGovernedError)) throw error;
    const projection = await inspectInvocation(world.view.ports, record.invocationId);
    return [...projection.permitted_actions];
  }
}

/**
 * The guide of docs/rules.md#quality-state-to-action, restated independently for the states the
 * matrices reach.
 */
export function specActions(record: InvocationRecord, capsule: CapsuleV2 | undefined): QualityAction[] {
  const { state, facts } = record;
  if (capsule?.reader) return [];
  if (!capsule && !facts.candidate && !facts.dispatch) return permittedActions(state, facts);
  switch (state) {
    case 'VERIFIED_EOF':
      return ['resume'];
    case 'REEXTRACT_REQUIRED':
      return facts.ownedStagesRecorded ? ['retire'] : [];
    case 'PUBLICATION_UNKNOWN':
      return ['reconcile'];
    case 'PUBLISHED':
      if (capsule?.state === 'PREPARED' || capsule?.state === 'TARGET_PENDING') return ['observe'];
      if (capsule?.state === 'FAILED') return [];
      return capsule?.completion?.evidence ? ['replay', 'resume'] : ['resume'];
    case 'SUCCEEDED':
      return capsule?.completion?.evidence ? ['replay', 'resume'] : ['resume'];
    case 'CUSTODY_RELEASED':
      return capsule?.replay.closedAt ? [] : ['replay'];
    default:
      return permittedActions(state, facts);
  }
}

async function tryLoad(world: GovernanceWorld, invocationId: string): Promise<InvocationRecord | undefined> {
  try {
    return await loadInvocation(world.view.ports, invocationId);
  } catch (error) {
    if ((error as { code?: string }).code === 'delivery.recovery_journal_unavailable') return undefined;
    throw error;
  }
}
