import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_TRANSITION_ID, loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { custodyGuardLeg, journaledWrite } from '../../src/delivery/journal/journaled-write.js';
import { publish } from '../../src/delivery/steps/publish.js';
import { quality, stagingFactsByPart } from '../../src/delivery/steps/quality.js';
import { checkpoint } from '../../src/delivery/steps/checkpoint.js';
import { cleanup } from '../../src/delivery/steps/cleanup.js';
import { stagingRefOf } from '../../src/delivery/steps/common.js';
import { recordFacts } from '../../src/delivery/journal/transition.js';
import { deliverWindow, runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys, journalOf } from '../../src/delivery/journal/keys.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep } from '../../src/delivery/steps/plan-parts.js';
import { listHeads } from '../../src/delivery/parts/part-store.js';
import { persistEvidence } from '../../src/delivery/steps/evidence.js';
import { seqRangeOf } from '../../src/domain/delivery/parts.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { newInvocationId, type DeliveryWorld } from '../support/delivery-world.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { extractLoadPart } from '../../src/delivery/parts/extract-load-part.js';
import { readPlan } from '../../src/delivery/steps/plan-parts.js';
import { beginInput, manifestText, openWindowWorld, WINDOW, windowIds } from '../support/deliver-window-fixture.js';

/**
 * What the deliver-window steps read and write besides the end-to-end run
 * (deliver-window.test.ts): the requests of a happy-path window, a step carrying a stale
 * state, journals written by the previous version (checkpoint and SUCCEEDED, cleanup proof
 * and release in separate transactions), and quality probed part by part. Real
 * components, one world per file (test/support/deliver-window-fixture.ts).
 */

let world: DeliveryWorld;
let deps: DeliveryDeps;

beforeAll(async () => {
  ({ world, deps } = await openWindowWorld());
});

afterAll(() => world?.close());

describe('a journal from the version before the checkpoint completed the invocation', () => {
  it('PUBLISHED with its checkpoint recorded (the old two-transaction checkpoint, stopped between them): the checkpoint step journals SUCCEEDED on its own, the checkpoint not moved again', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps);
    for (const step of [quality, publish, persistEvidence]) await step(begun, deps);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record).toMatchObject({ state: 'PUBLISHED', facts: { evidence: expect.anything() } });
    // What the old checkpoint advance wrote: the checkpoint and its fact, the state left PUBLISHED.
    const ref = { targetId: record.targetId, invocationId };
    await journaledWrite(world.stores.ports, {
      cutPoint: DELIVERY_CUT_POINTS.checkpointAdvance,
      ref,
      transitionId: CHECKPOINT_TRANSITION_ID,
      type: 'checkpoint',
      op: {},
      plan: async ({ invocation, custody, at }) => {
        const current = await loadCheckpoint(world.stores.ports, ref.targetId, 'daily');
        const key = deliveryKeys.checkpoint(ref.targetId, 'daily');
        const next = {
          targetId: ref.targetId,
          route: 'daily',
          windowStart: WINDOW.start,
          windowEnd: WINDOW.end,
          invocationId,
          advancedAt: at,
        };
        return {
          set: { facts: { ...invocation.facts, checkpoint: { windowEnd: WINDOW.end, moved: true, at } } },
          custody: custodyGuardLeg(custody as never),
          legs: [
            current
              ? { kind: 'update', key, expect: { version: current.version }, set: next }
              : { kind: 'put', item: { ...key, ...next }, expect: 'absent' },
          ],
          journal: { windowEnd: WINDOW.end, moved: true },
        };
      },
    });
    const checkpointBefore = await loadCheckpoint(world.stores.ports, ref.targetId, 'daily');
    const run = await runDeliverySteps(begun, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, 'daily')).toEqual(checkpointBefore);
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId);
    expect(ids.slice(ids.indexOf('sys:checkpoint'))).toEqual([
      'sys:checkpoint',
      `succeed.${invocationId}`,
      `release.${invocationId}`,
    ]);
  });
});

describe('a journal from the version before cleanup released custody itself', () => {
  it('SUCCEEDED with the cleanup proof journaled on its own (stopped before the release): cleanup releases custody with no second drop', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps);
    for (const step of [quality, publish, persistEvidence, checkpoint]) await step(begun, deps);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('SUCCEEDED');
    const staging = stagingRefOf(record);
    // What the old cleanup step did: drop, then journal the proof under cleanup-proved.
    expect((await world.target.dropStaging(staging)).status).toBe('ABSENT_PROVED');
    const ref = { targetId: record.targetId, invocationId };
    await recordFacts(world.stores.ports, ref, {
      state: 'SUCCEEDED',
      fence: begun.fence,
      transitionId: `cleanup-proved.${invocationId}`,
      patch: { absence: { table: staging.table, objectId: staging.objectId } },
    });
    let drops = 0;
    const counting = new Proxy(world.target, {
      get: (target, prop, receiver) =>
        prop === 'dropStaging'
          ? (...args: unknown[]) => (drops++, target.dropStaging(...(args as [never])))
          : Reflect.get(target, prop, receiver),
    });
    expect(await cleanup(begun, { ...deps, target: counting })).toMatchObject({
      state: 'CUSTODY_RELEASED',
      acted: true,
    });
    expect(drops).toBe(0);
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId);
    expect(ids.slice(-2)).toEqual([`cleanup-proved.${invocationId}`, `release.${invocationId}`]);
  });
});

describe('quality at scale', () => {
  it('probes the stage part by part; keys without the source time column are checked across parts by one whole-stage query', async () => {
    // Its own target table: the invocation keeps its custody (its stage is tampered with below).
    const partsText = manifestText
      .replace('daily:', 'probed:')
      .replace('table: dwh.events,', 'table: dwh.events_probed,');
    const probed = selectRoute(parseManifest(partsText, '/config/probed.yaml'), 'probed');
    await world.admin.query('CREATE TABLE dwh.events_probed (LIKE dwh.events INCLUDING ALL)');
    const probedDeps: DeliveryDeps = { ...deps, route: probed };
    const invocationId = newInvocationId();
    const begun = await begin(
      { ...beginInput(invocationId), manifestText: partsText, selector: '/config/probed.yaml#probed' },
      probedDeps,
    );
    await stepsThrough(begun, probedDeps);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.plan?.parts).toBeGreaterThan(1);
    const staging = record.facts.staging?.table;
    const stage = `${staging?.schema}.${staging?.table}`;
    const timed = {
      ...probed,
      route: { ...probed.route, target: { ...probed.route.target, keyColumns: ['event_id', 'event_time'] } },
    };
    expect(await stagingFactsByPart(probedDeps, record)).toMatchObject({
      rows: windowIds.length,
      duplicateKeys: 0,
      nulls: { event_id: 0, event_time: 0 },
    });

    // A row of part 0 again under part 1's range, one second later: the same event_id in two parts.
    const copy = (seq: number, shift: string) =>
      world.admin.query(
        `INSERT INTO ${stage} (event_id, event_time, region, amount, note, _cutpoint_seq)
         SELECT event_id, event_time + interval '${shift}', region, amount, note, $1 FROM ${stage} WHERE _cutpoint_seq = 0 ORDER BY event_id LIMIT 1`,
        [seq],
      );
    await copy(seqRangeOf(1).from, '1 second');
    expect((await stagingFactsByPart(probedDeps, record)).duplicateKeys).toBe(1);
    // Keyed with the time column too, it is another key: part-local probes are exact.
    expect((await stagingFactsByPart({ ...probedDeps, route: timed }, record)).duplicateKeys).toBe(0);
    // The same row twice within part 0 is a duplicate either way.
    await copy(0, '0 seconds');
    expect((await stagingFactsByPart({ ...probedDeps, route: timed }, record)).duplicateKeys).toBe(1);
    expect((await stagingFactsByPart(probedDeps, record)).duplicateKeys).toBe(1);
  });
});

describe('requests of a delivery', () => {
  it('the happy path reads only what no step can carry, and writes one transaction per journaled step, part claim and receipt batch', async () => {
    const invocationId = newInvocationId();
    const before = world.stores.meter.snapshot();
    const run = await deliverWindow(beginInput(invocationId), deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    const after = world.stores.meter.snapshot();
    const used = (op: string) => (after[op] ?? 0) - (before[op] ?? 0);
    const heads = await listHeads(world.stores.ports, invocationId);
    const chunks = heads.reduce((n, h) => n + h.chunks, 0);
    // A batch per 16 chunks of a part, the last one (at EOF) possibly empty.
    const batches = heads.reduce((n, h) => n + Math.floor(h.chunks / 16) + 1, 0);
    expect(heads.length).toBeGreaterThan(1);
    // Reads: whether the invocation exists and the target's custody (begin), and the route
    // checkpoint — nothing a step carries is read again.
    expect(used('dynamodb.GetItem')).toBe(3);
    // Begin, stage, plan, EOF, publish, evidence, checkpoint (with SUCCEEDED), release (with the cleanup proof); a claim per part; the batches.
    expect(used('dynamodb.TransactWriteItems')).toBe(8 + heads.length + batches);
    // VerifyEof: the heads once, each part's batches once.
    expect(used('dynamodb.Query')).toBe(1 + heads.length);
    // Every chunk once, the plan and the evidence.
    expect(used('s3.PutObject')).toBe(chunks + 2);
  });

  it("a step carrying a state that is no longer current (its first attempt's response was lost) decides from the journal: nothing twice", async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    expect(begun.known?.invocation.version).toBe(1);
    const staged = await createStaging(begun, deps);
    expect(staged).toMatchObject({ state: 'EMPTY_STAGING', acted: true });
    // Begin's output again: its record has no stage. The write conflicts on the version,
    // the next round finds the step's own claim.
    const again = await createStaging(begun, deps);
    expect(again).toMatchObject({ state: 'EMPTY_STAGING', acted: false });
    // It decided from the journal and did nothing: it hands on no state it did not hold, so the next step reads.
    expect(again.known).toBeNull();
    // Planning on begin's stale record (no stage) is refused on it, then decided on the journal.
    const planned = await planPartsStep(begun, deps);
    expect(planned).toMatchObject({ state: 'WRITING_UNKNOWN', acted: true });
    const journal = await journalOf(world.stores.ports.authority, invocationId).read();
    expect(journal.map((e) => e.transitionId)).toEqual([
      'sys:begin',
      `create-staging.${invocationId}`,
      `extract-start.${invocationId}`,
    ]);
    const run = await runDeliverySteps(staged, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
  });
});

describe('a part on a carried invocation that is no longer current', () => {
  it('the claim refuses the stale version, the part reads the invocation once and claims again, then loads: no part is lost or loaded twice', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await createStaging(begun, deps);
    const planned = await planPartsStep(begun, deps);
    const carried = planned.known?.invocation;
    expect(carried?.state).toBe('WRITING_UNKNOWN');
    // Another journaled write moves the invocation's version and leaves its state.
    const record = await loadInvocation(world.stores.ports, invocationId);
    await recordFacts(
      world.stores.ports,
      { targetId: record.targetId, invocationId },
      {
        state: 'WRITING_UNKNOWN',
        fence: begun.fence,
        transitionId: `facts-again.${invocationId}`,
        patch: { staging: record.facts.staging, ownedStagesRecorded: true },
      },
    );
    expect((await loadInvocation(world.stores.ports, invocationId)).version).toBeGreaterThan(
      carried?.version ?? Infinity,
    );
    const [part] = await readPlan(deps, record);
    const reads = () => world.stores.meter.snapshot()['dynamodb.GetItem'] ?? 0;
    const before = reads();
    expect(await extractLoadPart({ ...planned, part }, deps)).toMatchObject({ part: 0, acted: true });
    // The one read: the invocation, after the claim's CONFLICT on its version.
    expect(reads() - before).toBe(1);
    const [head] = await listHeads(world.stores.ports, invocationId);
    expect(head).toMatchObject({ part: 0, eof: true });
    expect(head?.chunks).toBeGreaterThan(0);
  });
});
