import { randomBytes } from 'node:crypto';
import { acquireCustody, loadCustody } from '../../src/delivery/custody.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { LIVE_ACTION_RUNNERS } from '../../src/delivery/recovery/actions.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { begin } from '../../src/delivery/steps/begin.js';
import type { LiveAction } from '../../src/domain/delivery/action-guide.js';
import type { AuthorityItem, ItemKey } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import { PUBLICATION_STEPS } from '../../src/publication/publication-steps.js';
import { qualityKeys } from '../../src/quality/capsule-store.js';
import { observeTargetOnce } from '../../src/quality/observe-target.js';
import { replayGovernance } from '../../src/quality/replay.js';
import { observeTarget } from '../../src/quality/steps/observe-target.js';
import { newInvocationId } from './delivery-world.js';
import { inspectOp, messageOf, nameOf, SELECTOR, type History, type Op, type TableModel } from './quality-history.js';
import { exchangeOf } from '../../src/publication/exchange-deps.js';

/**
 * What one step of the governance history does (test/faults/quality-history.random.test.ts):
 * the flow's next step, an operator action the projection permits, a zombie observer, a
 * successor's Begin. Each returns normally whatever the use case answered (its answer is
 * noted in the trace); what must hold afterwards is checked by quality-history-checks.ts.
 */

/** Errors a use case may leave with when a fault fired or an action refused on purpose. */
const stable = (error: unknown): boolean => /^(Cutpoint|Delivery|Quality|Publication)\./.test(nameOf(error));

async function attempt(h: History, what: string, body: () => Promise<string>): Promise<unknown> {
  try {
    h.note(`${what} → ${await body()}`);
    return undefined;
  } catch (error) {
    h.note(`${what} threw ${messageOf(error)}`);
    h.check(stable(error), `${what} threw an unexpected error: ${messageOf(error)}`);
    return error;
  }
}

/** Runs with CUTPOINT_FAULTS set for the reader child (one observation) when the history armed one. */
async function withChildFault<T>(h: History, body: () => Promise<T>): Promise<T> {
  const spec = h.childFault;
  h.childFault = undefined;
  if (spec) process.env.CUTPOINT_FAULTS = spec;
  try {
    return await body();
  } finally {
    if (spec) delete process.env.CUTPOINT_FAULTS;
  }
}

const EARLY = new Set(['EMPTY_STAGING', 'WRITING_UNKNOWN']);

/** Journal states where the flow's Choice states end the execution. */
const FLOW_ENDS = new Set(['CUSTODY_RELEASED', 'RETIRED', 'INCIDENT_RETAINED', 'REEXTRACT_REQUIRED', 'PARTIAL_PROVED']);

/** The flow's next step (publish-clickhouse, in process). A throw ends the execution, or (a Retry) leaves the step to run again. */
export async function flowStep(h: History, op: Op): Promise<void> {
  // The extraction (create-staging … verify-eof, the delivery's own steps) is one history step.
  const extraction = PUBLICATION_STEPS.findIndex(([n]) => n === 'fill-candidate');
  do {
    const [name, step] = PUBLICATION_STEPS[op.next!]!;
    h.hw.actor.current = `flow:${name}`;
    let ended = false;
    const error = await attempt(h, `${op.name} flow ${name}`, async () =>
      withChildFault(h, async () => {
        const out = await step({ invocationId: op.invocationId, fence: op.fence, known: null }, op.deps);
        ended = FLOW_ENDS.has(out.state);
        return `${out.state}${out.acted ? '' : ' (not acted)'}`;
      }),
    );
    if (error === undefined) op.next = op.next! + 1 < PUBLICATION_STEPS.length && !ended ? op.next! + 1 : undefined;
    else if (!h.rng.chance(0.5)) op.next = undefined;
    if (error !== undefined) return;
  } while (op.next !== undefined && op.next < extraction);
}

/** `cutpoint quality observe --yes`: a new session takes custody (fencing the flow's), then one observation. */
export async function operatorObserve(h: History, op: Op, actor = 'observe'): Promise<string> {
  const ref = { targetId: op.targetId, invocationId: op.invocationId };
  const grant = await acquireCustody(op.deps.ports, ref, `observe-${randomBytes(6).toString('hex')}`);
  const deps = { ...op.deps, source: forbiddenSource() };
  h.hw.actor.current = actor;
  const out = await withChildFault(h, async () =>
    observeTarget(
      { invocationId: op.invocationId, fence: grant.fence, known: null },
      deps,
      await h.hw.world.reader(deps),
    ),
  );
  h.check(deps.source.attempts.length === 0, `observe of ${op.name} opened the source (I8)`);
  return `${out.state}/${out.capsuleState ?? '-'}${out.acted ? '' : ' (not acted)'}`;
}

/** `cutpoint quality replay`: read-only; nothing it touches may change. */
async function operatorReplay(h: History, op: Op): Promise<string> {
  const ref = { targetId: op.targetId, invocationId: op.invocationId };
  const capsuleBefore = await h.hw.checkPorts.authority.get(qualityKeys.capsule(op.targetId, op.invocationId));
  const journalBefore = await readInvocation(h.hw.checkPorts, ref);
  h.hw.actor.current = 'replay';
  const receipt = await replayGovernance(
    { invocationId: op.invocationId, manifestText: op.manifestText, selector: SELECTOR },
    {
      ports: op.deps.ports,
      target: op.deps.target,
      exchange: exchangeOf(op.deps),
      route: op.deps.route,
      faults: h.hw.world.stores.faults,
    },
  );
  const capsuleAfter = await h.hw.checkPorts.authority.get(qualityKeys.capsule(op.targetId, op.invocationId));
  h.check(capsuleAfter?.version === capsuleBefore?.version, `replay of ${op.name} changed the capsule version`);
  h.check(
    (await readInvocation(h.hw.checkPorts, ref)).version === journalBefore.version,
    `replay of ${op.name} wrote the journal`,
  );
  h.check(
    capsuleAfter?.state === 'COMPLETE',
    `replay of ${op.name} issued a receipt for a ${String(capsuleAfter?.state)} capsule (I9)`,
  );
  return `receipt (dispatch count ${String((receipt as unknown as { dispatch_count?: number }).dispatch_count ?? '?')})`;
}

/** A live recovery action (reconcile / resume / retire), source-free. */
async function recovery(h: History, op: Op, action: LiveAction): Promise<string> {
  const source = forbiddenSource();
  h.hw.actor.current = action;
  const result = await withChildFault(h, () =>
    LIVE_ACTION_RUNNERS[action](
      { invocationId: op.invocationId, manifestText: op.manifestText, selector: SELECTOR },
      { ports: op.deps.ports, target: op.deps.target, mode: op.deps.mode, route: op.deps.route, source },
    ),
  );
  h.check(source.attempts.length === 0, `${action} of ${op.name} opened the source (I8)`);
  return result.state;
}

/** One action among those the projection permits (none permitted: nothing happens). */
export async function operatorAction(
  h: History,
  op: Op,
  prefer?: readonly string[],
  patient = false,
): Promise<string | undefined> {
  const seen = await inspectOp(h.hw.checkPorts, op);
  // An operator mostly lets a running flow finish its extraction before retiring it.
  if (patient && op.next !== undefined && EARLY.has(seen.state) && h.rng.chance(0.75)) {
    h.note(`${op.name} ${seen.state}: the operator waits for the flow`);
    return undefined;
  }
  const candidates = prefer ? prefer.filter((a) => seen.actions.includes(a)).slice(0, 1) : seen.actions;
  if (candidates.length === 0) {
    h.note(`${op.name} ${seen.state}: nothing permitted (${seen.diagnostic})`);
    return undefined;
  }
  const action = h.rng.pick(candidates);
  await attempt(h, `${op.name} ${seen.state} operator ${action}`, () => {
    if (action === 'observe') return operatorObserve(h, op);
    if (action === 'replay') return operatorReplay(h, op);
    return recovery(h, op, action as LiveAction);
  });
  return action;
}

/** Ports whose reads of one capsule return an old copy of it (a zombie's stale view); everything else passes. */
function staleView(ports: Ports, key: ItemKey, stale: AuthorityItem): Ports {
  const authority = new Proxy(ports.authority, {
    get(target, property) {
      if (property === 'get')
        return async (k: ItemKey) => (k.pk === key.pk && k.sk === key.sk ? structuredClone(stale) : target.get(k));
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...ports, authority };
}

/**
 * A zombie observer of `op`: the flow's (maybe fenced) session with the capsule as it was
 * first seen PREPARED, late (alone) or concurrently with an operator observe. Its writes
 * must be refused by the capsule version and the custody fence; it never releases a guard
 * it does not hold (the checks compare the guard before and after).
 */
export async function zombieObserve(h: History, op: Op): Promise<void> {
  const key = qualityKeys.capsule(op.targetId, op.invocationId);
  const before = await h.hw.checkPorts.authority.get(key);
  // Stale only when the capsule moved since: an unchanged one is a plain late observe.
  const stale = op.staleCapsule !== undefined && before !== undefined && before.version !== op.staleCapsule.version;
  const deps = {
    ...op.deps,
    source: forbiddenSource(),
    ...(stale ? { ports: staleView(op.deps.ports, key, op.staleCapsule!) } : {}),
  };
  // The flow's session (maybe fenced out since), or the session holding custody now (a Task
  // retried while its first attempt still runs has the same input): then only the capsule
  // version refuses the zombie's writes.
  const custody = await loadCustody(h.hw.checkPorts, op.targetId);
  const current =
    custody?.state === 'HELD' && custody.invocationId === op.invocationId && h.rng.chance(0.5)
      ? custody.fence
      : undefined;
  const fence = current ?? op.fence;
  const zombie = async (): Promise<string> => {
    h.hw.actor.current = 'zombie';
    const out = await observeTargetOnce(
      { invocationId: op.invocationId, fence, known: null },
      deps,
      await h.hw.world.reader(deps),
    );
    return `${out.state}/${out.capsuleState ?? '-'}${out.acted ? ' ACTED' : ' (not acted)'}`;
  };
  if (h.rng.chance(0.5)) {
    await attempt(
      h,
      `${op.name} zombie observer (late${stale ? ', stale view' : ''}${current ? ', current fence' : ''})`,
      zombie,
    );
    const after = await h.hw.checkPorts.authority.get(key);
    if (stale)
      h.check(
        JSON.stringify(after) === JSON.stringify(before),
        `${op.name}: a zombie observer with a stale capsule view (v${String(op.staleCapsule!.version)}, current v${before.version}) changed the capsule: ${JSON.stringify(before)} → ${JSON.stringify(after)}`,
      );
  } else {
    const permitted = (await inspectOp(h.hw.checkPorts, op)).actions.includes('observe');
    await Promise.all([
      attempt(
        h,
        `${op.name} zombie observer (concurrent${stale ? ', stale view' : ''}${current ? ', current fence' : ''})`,
        zombie,
      ),
      permitted
        ? attempt(h, `${op.name} operator observe (concurrent)`, () => operatorObserve(h, op, 'observe'))
        : Promise.resolve(),
    ]);
  }
  h.check(deps.source.attempts.length === 0, `zombie observer of ${op.name} opened the source (I8)`);
}

/**
 * A successor's Begin on `table`: refused (Delivery.CustodyHeld / Quality.SuccessorBlocked,
 * nothing written) while the last operation's governance is unfinished; begun after its
 * cleanup and retirement, closing its replay window with a boundary (I7).
 */
export async function successorBegin(h: History, table: TableModel): Promise<Op | undefined> {
  const prev = table.ops.at(-1)!;
  const ports = h.hw.checkPorts;
  const custodyBefore = await loadCustody(ports, table.targetId);
  const invocationId = newInvocationId();
  const { deps, manifestText } = h.hw.depsOf(table.name);
  const input = { invocationId, session: `run-${invocationId.slice(4, 14)}`, manifestText, selector: SELECTOR };
  h.hw.actor.current = 'successor';
  let begun: Awaited<ReturnType<typeof begin>> | undefined;
  let refusal: unknown;
  for (let i = 0; i < 3 && !begun; i++) {
    try {
      begun = await begin(input, deps);
    } catch (error) {
      refusal = error;
      h.note(`${table.name} successor begin (after ${prev.name}) threw ${messageOf(error)}`);
      h.check(stable(error), `successor begin threw ${messageOf(error)}`);
      if (nameOf(error) === 'Delivery.CustodyHeld' || nameOf(error) === 'Quality.SuccessorBlocked') break;
    }
  }
  if (!begun) {
    h.check(
      ['Delivery.CustodyHeld', 'Quality.SuccessorBlocked'].includes(nameOf(refusal)) || h.hw.fired(),
      `successor begin failed with no fault: ${messageOf(refusal)}`,
    );
    const journal = await readInvocation(ports, { targetId: table.targetId, invocationId }).catch(() => undefined);
    h.check(journal === undefined, `a refused successor begin left a journal record (${journal?.state})`);
    const custodyAfter = await loadCustody(ports, table.targetId);
    h.check(custodyAfter?.version === custodyBefore?.version, `a refused successor begin changed custody`);
    return undefined;
  }
  h.note(`${table.name} successor begin (after ${prev.name}) → ${begun.state}`);
  const op = h.newOp(table, invocationId, begun.fence, begun.targetId);
  h.successors.push({ op, prev, epoch: begun.fence.epoch });
  return op;
}
