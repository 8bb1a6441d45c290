// Over ~300 lines (563), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceCheckpoint, loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { acquireCustody, assertCustody } from '../../src/delivery/custody.js';
import { runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { journalOf, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin, type BeginInput, type BeginOutput } from '../../src/delivery/steps/begin.js';
import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { cleanup } from '../../src/delivery/steps/cleanup.js';
import type { StepInput } from '../../src/delivery/steps/common.js';
import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { publish } from '../../src/delivery/steps/publish.js';
import { quality } from '../../src/delivery/steps/quality.js';
import { stagingTableNameOf, targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { FlowResult } from '../../src/local/flow-runner.js';
import type { TargetPort } from '../../src/ports/target.js';
import { itemsMentioning, scanTable, targetSnapshot } from '../support/delivery-snapshot.js';
import {
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { stepsThrough } from '../support/delivery-steps.js';

/**
 * Custody under concurrency (docs/rules.md#custody; issue acceptance): "two concurrent invocations on
 * one target — exactly one holds custody; a zombie step from an old epoch cannot publish,
 * advance the checkpoint or drop stages." Real components only: DynamoDB Local and the S3
 * emulator, embedded ClickHouse (chdb, one engine per process: opened once here) as the
 * source, embedded PostgreSQL as the target. Every scenario has a target table (and so a
 * target id, custody item and route checkpoint) of its own.
 */

const STEP_MS = 144_000; // 600 rows a day
const GENERATED = 3000;
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

/** One route per scenario, each delivering the same window to a table of its own. */
const ROUTES = ['flow', 'race', 'zombie', 'afterpub', 'stalled', 'racing', 'retiring', 'dropfirst'] as const;
type RouteName = (typeof ROUTES)[number];
const manifestText = fixedWindowManifest(
  Object.fromEntries(ROUTES.map((r) => [r, { table: `events_${r}`, chunkRows: 300 }])),
);
const FILE = '/config/route.yaml';
const manifest = parseManifest(manifestText, FILE);
const routeOf = (name: RouteName) => selectRoute(manifest, name);
const tableOf = (name: RouteName) => `events_${name}`;
const targetIdOfRoute = (name: RouteName) => targetIdOf('warehouse', { schema: 'dwh', name: tableOf(name) });

const beginInput = (
  invocationId: string,
  route: RouteName,
  session = `run-${invocationId.slice(4, 14)}`,
): BeginInput => ({
  invocationId,
  session,
  manifestText,
  selector: `${FILE}#${route}`,
});
const recoveryInput = (invocationId: string, route: RouteName): RecoveryInput => ({
  invocationId,
  manifestText,
  selector: `${FILE}#${route}`,
});

const rows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(rows, WINDOW);

let world: DeliveryWorld;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: ROUTES.map(tableOf) });
});

afterAll(() => world?.close());

const depsOf = (route: RouteName): DeliveryDeps => world.deps(routeOf(route));
const recoveryDepsOf = (route: RouteName): RecoveryDeps => world.recoveryDeps(routeOf(route));

async function targetIds(route: RouteName): Promise<string[]> {
  const result = await world.admin.query<{ id: string }>(`SELECT event_id::text AS id FROM dwh.${tableOf(route)}`);
  return result.rows.map((r) => r.id).sort();
}

async function stageExists(invocationId: string): Promise<boolean> {
  const r = await world.admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relname = $1`,
    [stagingTableNameOf(invocationId)],
  );
  return (r.rowCount ?? 0) > 0;
}

/** Everything a zombie could change: the whole authority table and the whole target. */
async function everything(): Promise<string> {
  const [table, tgt] = await Promise.all([
    scanTable(world.stores.config),
    targetSnapshot(world.admin, 'dwh', ROUTES.map(tableOf), { schema: 'dwh', table: 'cutpoint_receipts' }),
  ]);
  return JSON.stringify({ table, tgt });
}

/** Drives a fresh invocation with its own steps to VERIFIED_EOF with quality passed: the moment before publish. */
async function toBeforePublish(route: RouteName): Promise<BeginOutput> {
  const deps = depsOf(route);
  const begun = await begin(beginInput(newInvocationId(), route), deps);
  expect(begun).toMatchObject({ state: 'EMPTY_STAGING', acted: true, fence: { epoch: 1 } });
  await stepsThrough(begun, deps);
  expect(await quality(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true, failures: [] });
  return begun;
}

/**
 * The world's real target, except that every call of `method` first reports that it was
 * entered and then waits for `gate`: a scheduling hook that holds one party at an exact
 * point (a publisher past its custody check, a retirement about to drop), nothing faked.
 */
function held(method: 'publish' | 'dropStaging', gate: Promise<void>, entered: () => void): TargetPort {
  const real = world.target;
  return new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== method) return (value as (...a: unknown[]) => unknown).bind(real);
      return async (...args: unknown[]) => {
        entered();
        await gate;
        return (value as (...a: unknown[]) => Promise<unknown>).apply(real, args);
      };
    },
  });
}

/** A promise and its resolver. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  return { promise, fire };
}

/**
 * A zombie publisher of epoch 1, past its custody check and held just before its target
 * transaction; then a recovery resume (epoch 2) finds the stage no longer matching its
 * chunk receipts (one row moved to another chunk: the count the publication checks is
 * unchanged) and journals REEXTRACT_REQUIRED, which offers retire.
 */
async function zombieHeldAtPublish(route: RouteName) {
  const zombie = await toBeforePublish(route);
  const zombieStep: StepInput = { invocationId: zombie.invocationId, fence: zombie.fence };
  const gate = signal();
  const entered = signal();
  let outcome: { name?: string; code?: string; resolved?: unknown } | undefined;
  const run = refusal(
    publish(zombieStep, { ...depsOf(route), target: held('publish', gate.promise, entered.fire) }),
  ).then((o) => (outcome = o));
  await entered.promise;
  const stage = `dwh.${stagingTableNameOf(zombie.invocationId)}`;
  await world.admin.query(
    `UPDATE ${stage} SET _cutpoint_seq = 1 WHERE event_id = (SELECT min(event_id) FROM ${stage} WHERE _cutpoint_seq = 0)`,
  );
  await expect(resume(recoveryInput(zombie.invocationId, route), recoveryDepsOf(route))).rejects.toMatchObject({
    code: 'delivery.resume_incomplete',
    state: 'REEXTRACT_REQUIRED',
  });
  expect((await loadInvocation(world.stores.ports, zombie.invocationId)).state).toBe('REEXTRACT_REQUIRED');
  expect(outcome).toBeUndefined();
  return { zombie, release: gate.fire, finished: run };
}

/** A rejection's stable identity. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    (v) => ({ resolved: v }),
    (e: unknown) => ({ name: (e as Error).name, code: (e as { code?: string }).code }),
  );

const FENCED = { name: 'Delivery.Fenced', code: 'delivery.custody_fenced' };

describe('two concurrent invocations on one target: exactly one holds custody', () => {
  it('flow level: two deliver-window executions at once — one CUSTODY_RELEASED, the other StepRefused (Delivery.CustodyHeld at Begin) having written nothing', async () => {
    const route: RouteName = 'flow';
    const targetId = targetIdOfRoute(route);
    const ids = [newInvocationId(), newInvocationId()] as const;
    const run = (input: BeginInput): Promise<FlowResult> => world.runFlow('deliver-window', input);
    const results = await Promise.all(ids.map((id) => run(beginInput(id, route))));

    const won = results.findIndex((r) => r.status === 'SUCCEEDED');
    const lost = 1 - won;
    expect(
      results.map((r) => r.status).sort(),
      JSON.stringify(results.map((r) => [r.status, r.error, r.cause])),
    ).toEqual(['FAILED', 'SUCCEEDED']);
    const winner = ids[won] as string;
    const loser = ids[lost] as string;
    const w = results[won] as FlowResult;
    const l = results[lost] as FlowResult;
    expect(w.output).toMatchObject({ invocationId: winner, state: 'CUSTODY_RELEASED' });
    // The loser: the flow's StepRefused fail state, whose cause is the caught step error's
    // message — custody held by the winner, nothing written.
    expect(l).toMatchObject({ status: 'FAILED', error: 'Delivery.StepRefused' });
    expect(l.cause).toContain(`in the custody of invocation ${winner}`);
    const failed = l.events.filter((e) => e.error !== undefined && e.error !== 'Delivery.StepRefused');
    expect(failed.map((e) => e.error)).toEqual(expect.arrayContaining(['Delivery.CustodyHeld']));
    expect(new Set(failed.map((e) => e.error))).toEqual(new Set(['Delivery.CustodyHeld']));
    // No Task after Begin ran for the loser.
    expect(l.events.filter((e) => e.type === 'StateEntered').map((e) => e.state)).toEqual(['Begin', 'StepRefused']);

    // Nothing of the loser anywhere in the authority table; not a stage, not a receipt.
    expect(itemsMentioning(await scanTable(world.stores.config), loser)).toEqual([]);
    expect(itemsMentioning(await scanTable(world.stores.config), winner).length).toBeGreaterThan(0);
    await expect(loadInvocation(world.stores.ports, loser)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_unavailable',
    });
    expect(await world.receiptsOf(loser)).toBe(0);
    expect(await stageExists(loser)).toBe(false);

    // The window exactly once, one receipt, the stage gone, the checkpoint advanced once.
    expect(await targetIds(route)).toEqual(windowIds);
    expect(await world.receiptsOf(winner)).toBe(1);
    expect(await stageExists(winner)).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, targetId, route)).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId: winner,
      version: 1,
    });
    expect((await loadInvocation(world.stores.ports, winner)).facts.checkpoint).toMatchObject({ moved: true });
    expect(await loadCustody(world.stores.ports, targetId)).toMatchObject({
      state: 'RELEASED',
      invocationId: winner,
      epoch: 1,
    });
  }, 120_000);

  it('use-case level: eight concurrent begins (distinct invocations and sessions) — exactly one custody grant, seven Delivery.CustodyHeld naming it, nothing of theirs written', async () => {
    const route: RouteName = 'race';
    const targetId = targetIdOfRoute(route);
    const deps = depsOf(route);
    const ids = Array.from({ length: 8 }, () => newInvocationId());
    const before = await scanTable(world.stores.config);
    const results = await Promise.allSettled(ids.map((id) => begin(beginInput(id, route), deps)));
    const granted = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    expect(granted).toHaveLength(1);
    const grant = granted[0] as BeginOutput;
    expect(grant).toMatchObject({
      state: 'EMPTY_STAGING',
      acted: true,
      fence: { owner: grant.invocationId, epoch: 1 },
    });
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(r.reason).toMatchObject({ name: 'Delivery.CustodyHeld', code: 'delivery.custody_held' });
        expect((r.reason as Error).message).toContain(grant.invocationId);
      }
    }
    expect(await loadCustody(world.stores.ports, targetId)).toMatchObject({
      state: 'HELD',
      epoch: 1,
      fence: grant.fence,
    });
    const after = await scanTable(world.stores.config);
    for (const id of ids.filter((i) => i !== grant.invocationId)) expect(itemsMentioning(after, id)).toEqual([]);
    // Exactly the winner's begin transaction was added: custody, record, pointer, held-index item, journal record and claim.
    const added = (JSON.parse(after) as unknown[]).length - (JSON.parse(before) as unknown[]).length;
    expect(added).toBe(6);
    // A late ninth invocation is refused the same way while the winner holds custody.
    await expect(begin(beginInput(newInvocationId(), route), deps)).rejects.toMatchObject({
      name: 'Delivery.CustodyHeld',
    });
    expect(await scanTable(world.stores.config)).toBe(after);
  });
});

describe('a zombie step from an old epoch', () => {
  it('before publish (VERIFIED_EOF, quality passed) and taken over: publish is Delivery.Fenced, checkpoint and cleanup have nothing to act on, and nothing changes; the holder then resumes to exactly-once', async () => {
    const route: RouteName = 'zombie';
    const deps = depsOf(route);
    const zombie = await toBeforePublish(route);
    const ref: InvocationRef = { targetId: zombie.targetId, invocationId: zombie.invocationId };
    const zombieStep: StepInput = { invocationId: zombie.invocationId, fence: zombie.fence };
    // A recovery session takes custody: epoch + 1.
    const takeover = await acquireCustody(world.stores.ports, ref, 'recovery-takeover');
    expect(takeover.fence.epoch).toBe(zombie.fence.epoch + 1);
    expect(await stageExists(zombie.invocationId)).toBe(true);
    const before = await everything();

    expect(await refusal(publish(zombieStep, deps))).toEqual(FENCED);
    // The zombie's own use case for the checkpoint is fenced first (before the state check).
    expect(await refusal(advanceCheckpoint(world.stores.ports, ref, zombie.fence))).toEqual(FENCED);
    // The steps act only in their own state (PUBLISHED / SUCCEEDED): here they do nothing.
    expect(await checkpoint(zombieStep, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: false });
    expect(await cleanup(zombieStep, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: false });
    // Quality probes custody before reading the stage; the whole remaining run is fenced at the first step that acts.
    expect(await refusal(quality(zombieStep, deps))).toEqual(FENCED);
    expect(await refusal(runDeliverySteps(zombieStep, deps))).toEqual(FENCED);
    await expect(assertCustody(world.stores.ports, ref.targetId, zombie.fence)).rejects.toMatchObject(FENCED);

    expect(await everything()).toBe(before);
    expect(await targetIds(route)).toEqual([]);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(0);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toBeUndefined();
    expect(await stageExists(zombie.invocationId)).toBe(true);
    expect((await loadInvocation(world.stores.ports, zombie.invocationId)).state).toBe('VERIFIED_EOF');

    // The legitimate holder (a recovery resume: yet another session) finishes.
    expect(await resume(recoveryInput(zombie.invocationId, route), recoveryDepsOf(route))).toMatchObject({
      state: 'CUSTODY_RELEASED',
    });
    expect(await targetIds(route)).toEqual(windowIds);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await stageExists(zombie.invocationId)).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId: zombie.invocationId,
      version: 1,
    });
    expect(await world.journalTransitions(zombie.invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    // After release the zombie finds nothing to do, and still changes nothing.
    const done = await everything();
    expect(await publish(zombieStep, deps)).toMatchObject({ state: 'CUSTODY_RELEASED', acted: false });
    // Its checkpoint use case finds the invocation's advance already claimed (exact reload
    // by transition id, before any fence check) and reports it, writing nothing.
    expect(await advanceCheckpoint(world.stores.ports, ref, zombie.fence)).toMatchObject({
      alreadyApplied: true,
      moved: true,
    });
    expect(await everything()).toBe(done);
  }, 120_000);

  it('after PUBLISHED and taken over: it cannot advance the checkpoint, drop the stage or release custody; the holder completes with the checkpoint advanced once', async () => {
    const route: RouteName = 'afterpub';
    const deps = depsOf(route);
    const zombie = await toBeforePublish(route);
    const ref: InvocationRef = { targetId: zombie.targetId, invocationId: zombie.invocationId };
    const zombieStep: StepInput = { invocationId: zombie.invocationId, fence: zombie.fence };
    expect(await publish(zombieStep, deps)).toMatchObject({ state: 'PUBLISHED', acted: true });
    expect(await persistEvidence(zombieStep, deps)).toMatchObject({ state: 'PUBLISHED' });
    expect((await loadInvocation(world.stores.ports, zombie.invocationId)).facts.evidence).toBeDefined();
    const takeover = await acquireCustody(world.stores.ports, ref, 'recovery-afterpub');
    const holder: StepInput = { invocationId: zombie.invocationId, fence: takeover.fence };

    // PUBLISHED: the zombie's checkpoint step is fenced; its cleanup has nothing to act on.
    let before = await everything();
    expect(await refusal(checkpoint(zombieStep, deps))).toEqual(FENCED);
    expect(await cleanup(zombieStep, deps)).toMatchObject({ state: 'PUBLISHED', acted: false });
    expect(await everything()).toBe(before);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toBeUndefined();
    expect(await stageExists(zombie.invocationId)).toBe(true);

    // The holder advances the checkpoint (→ SUCCEEDED).
    expect(await checkpoint(holder, deps)).toMatchObject({ state: 'SUCCEEDED', acted: true, moved: true });

    // SUCCEEDED: the zombie can neither drop the stage nor release custody (cleanup is
    // fenced before the target is touched), and its checkpoint step has nothing to do.
    before = await everything();
    expect(await refusal(cleanup(zombieStep, deps))).toEqual(FENCED);
    expect(await checkpoint(zombieStep, deps)).toMatchObject({ state: 'SUCCEEDED', acted: false });
    // The advance is already claimed by the holder: the zombie gets that claim back (alreadyApplied), and no write.
    expect(await advanceCheckpoint(world.stores.ports, ref, zombie.fence)).toMatchObject({
      alreadyApplied: true,
      moved: true,
    });
    expect(await everything()).toBe(before);
    expect(await stageExists(zombie.invocationId)).toBe(true);

    // The holder drops the stage and releases custody with the proof, in one step; the zombie then has nothing to act on.
    expect(await cleanup(holder, deps)).toMatchObject({
      state: 'CUSTODY_RELEASED',
      acted: true,
      drop: 'ABSENT_PROVED',
    });
    before = await everything();
    expect(await cleanup(zombieStep, deps)).toMatchObject({ state: 'CUSTODY_RELEASED', acted: false });
    expect(await everything()).toBe(before);
    expect(await targetIds(route)).toEqual(windowIds);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await stageExists(zombie.invocationId)).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId: zombie.invocationId,
      version: 1,
    });
    expect(await loadCustody(world.stores.ports, ref.targetId)).toMatchObject({
      state: 'RELEASED',
      epoch: takeover.fence.epoch,
    });
    const journal = await journalOf(world.stores.ports.authority, zombie.invocationId).read();
    expect(journal.filter((e) => e.transitionId === 'sys:checkpoint')).toHaveLength(1);
  }, 120_000);

  it('stalled inside the publish transaction across a takeover: its COMMIT lands but PUBLISHED is Delivery.Fenced; resume resolves the exact receipt without publishing again — rows once, one receipt, checkpoint once', async () => {
    const route: RouteName = 'stalled';
    const deps = depsOf(route);
    const zombie = await toBeforePublish(route);
    const ref: InvocationRef = { targetId: zombie.targetId, invocationId: zombie.invocationId };
    const zombieStep: StepInput = { invocationId: zombie.invocationId, fence: zombie.fence };

    // The zombie is held inside its publish transaction (before COMMIT) until the takeover is done.
    const held = world.holdTarget('delivery.publish.commit');
    const zombieRun = refusal(publish(zombieStep, deps));
    // The zombie has passed its custody check and holds an open target transaction.
    await held.reached;
    const takeover = await acquireCustody(world.stores.ports, ref, 'recovery-stalled');
    expect(takeover.fence.epoch).toBe(2);
    held.release();
    const outcome = await zombieRun;
    expect(outcome).toEqual(FENCED);
    // The target write is not fenced by the authority: it committed, with its receipt. The
    // journal did not move, so nothing claims the publication yet.
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await targetIds(route)).toEqual(windowIds);
    expect((await loadInvocation(world.stores.ports, zombie.invocationId)).state).toBe('VERIFIED_EOF');
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toBeUndefined();

    const neverPublish = world.targetFaults.arm('delivery.publish.commit:fail*');
    try {
      expect(await resume(recoveryInput(zombie.invocationId, route), recoveryDepsOf(route))).toMatchObject({
        state: 'CUSTODY_RELEASED',
      });
    } finally {
      world.targetFaults.disarm();
    }
    expect(neverPublish.fired).toHaveLength(0);
    expect(await targetIds(route)).toEqual(windowIds);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await stageExists(zombie.invocationId)).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toMatchObject({
      windowEnd: WINDOW.end,
      version: 1,
    });
    expect(await world.journalTransitions(zombie.invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
  }, 120_000);
  it("retire racing a stalled zombie publisher (issue 8): the zombie commits window + receipt after retire's first probe; the drop, under the publication lock, re-probes, finds the receipt and drops nothing — INCIDENT_RETAINED, never RETIRED, custody held", async () => {
    const route: RouteName = 'retiring';
    const { zombie, release, finished } = await zombieHeldAtPublish(route);
    // Retire (epoch 3): its first receipt probe sees nothing; just before its drop the
    // zombie is let go and commits its publication (the target does not know epochs).
    const atDrop = signal();
    const retiring = refusal(
      retire(recoveryInput(zombie.invocationId, route), {
        ...recoveryDepsOf(route),
        target: held('dropStaging', atDrop.promise, () => {
          release();
          void finished.then(() => atDrop.fire());
        }),
      }),
    );
    const zombieOutcome = await finished;
    // Its journal write is fenced: the publication exists only in the target.
    expect(zombieOutcome).toEqual(FENCED);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await targetIds(route)).toEqual(windowIds);

    expect(await retiring).toEqual({ name: 'Delivery.RecoveryRetained', code: 'delivery.retire_publication_found' });
    const record = await loadInvocation(world.stores.ports, zombie.invocationId);
    expect(record.state).toBe('INCIDENT_RETAINED');
    expect((await world.journalTransitions(zombie.invocationId)).filter((t) => t.endsWith('>RETIRED'))).toEqual([]);
    expect((await world.journalTransitions(zombie.invocationId)).at(-1)).toBe('REEXTRACT_REQUIRED>INCIDENT_RETAINED');
    expect(await stageExists(zombie.invocationId)).toBe(true);
    expect(await loadCustody(world.stores.ports, zombie.targetId)).toMatchObject({
      state: 'HELD',
      invocationId: zombie.invocationId,
    });
    expect(await loadCheckpoint(world.stores.ports, zombie.targetId, route)).toBeUndefined();
  }, 120_000);

  it('a stalled zombie publisher let go after retire dropped the stage: its publication finds the stage gone and publishes nothing', async () => {
    const route: RouteName = 'dropfirst';
    const { zombie, release, finished } = await zombieHeldAtPublish(route);
    expect(await retire(recoveryInput(zombie.invocationId, route), recoveryDepsOf(route))).toMatchObject({
      state: 'RETIRED',
    });
    expect(await stageExists(zombie.invocationId)).toBe(false);
    release();
    // The publication transaction rechecks the exact stage under the publication lock: gone.
    expect(await finished).toEqual({
      name: 'Cutpoint.StagingBindingChanged',
      code: 'delivery.staging_binding_changed',
    });
    expect(await world.receiptsOf(zombie.invocationId)).toBe(0);
    expect(await targetIds(route)).toEqual([]);
    expect((await loadInvocation(world.stores.ports, zombie.invocationId)).state).toBe('RETIRED');
    expect(await loadCustody(world.stores.ports, zombie.targetId)).toMatchObject({ state: 'RELEASED' });
  }, 120_000);

  it('stalled inside the publish transaction while a recovery resume runs concurrently: the publications are serialized (one receipt, rows once) and the zombie writes nothing to the journal', async () => {
    const route: RouteName = 'racing';
    const deps = depsOf(route);
    const zombie = await toBeforePublish(route);
    const ref: InvocationRef = { targetId: zombie.targetId, invocationId: zombie.invocationId };
    const zombieStep: StepInput = { invocationId: zombie.invocationId, fence: zombie.fence };

    const bySession = async (session: string) =>
      (await journalOf(world.stores.ports.authority, zombie.invocationId).read())
        .filter((e) => (e.data.by as { session?: string } | undefined)?.session === session)
        .map((e) => e.transitionId);
    // Held inside its publish transaction (before COMMIT) while the takeover runs; then it
    // stalls 3 s more there, racing the resume started below.
    const held = world.holdTarget('delivery.publish.commit');
    world.targetFaults.arm('delivery.publish.commit:delay=3000');
    let outcomes: [{ name?: string; code?: string; resolved?: unknown }, unknown];
    let zombieEntries: string[];
    try {
      let zombieSettled = false;
      const zombieRun = refusal(publish(zombieStep, deps)).finally(() => {
        zombieSettled = true;
      });
      await held.reached;
      zombieEntries = await bySession(zombie.fence.session);
      // A recovery session takes custody while the zombie is still inside its publish
      // (its transaction open, or at most its journal write under way). Nothing is read
      // from the target here: the embedded PostgreSQL (PGlite) serves one transaction at a
      // time, so any target query waits for the zombie's COMMIT.
      expect((await acquireCustody(world.stores.ports, ref, 'recovery-racing')).fence.epoch).toBe(2);
      expect(zombieSettled).toBe(false);
      held.release();
      // ...and a resume (epoch 3) publishes without waiting for the zombie.
      const recovery = resume(recoveryInput(zombie.invocationId, route), recoveryDepsOf(route));
      outcomes = await Promise.all([zombieRun, recovery]);
    } finally {
      world.targetFaults.disarm();
    }
    // The zombie's own COMMIT is the one publication (the recovery's publish waits on the
    // invocation's publication lock, then finds that receipt). Its journal write then
    // either fails its fence (Delivery.Fenced) or, when the recovery journaled the same
    // session-independent transition id first, reloads that claim (acted: false) — a race
    // between the two, either way without a write of its own.
    const zombieOutcome = outcomes[0];
    if ('resolved' in zombieOutcome) expect(zombieOutcome.resolved).toMatchObject({ acted: false });
    else expect(zombieOutcome).toEqual(FENCED);
    expect(await bySession(zombie.fence.session)).toEqual(zombieEntries);
    expect(outcomes[1]).toMatchObject({ state: 'CUSTODY_RELEASED' });
    expect(await targetIds(route)).toEqual(windowIds);
    expect(await world.receiptsOf(zombie.invocationId)).toBe(1);
    expect(await stageExists(zombie.invocationId)).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, route)).toMatchObject({
      windowEnd: WINDOW.end,
      version: 1,
    });
    expect(await loadCustody(world.stores.ports, ref.targetId)).toMatchObject({ state: 'RELEASED' });
    expect((await world.journalTransitions(zombie.invocationId)).filter((t) => t.endsWith('>PUBLISHED'))).toEqual([
      'VERIFIED_EOF>PUBLISHED',
    ]);
  }, 120_000);
});
