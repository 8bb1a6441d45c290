import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { extractLoadParts } from '../../src/delivery/parts/extract-load-parts.js';
import { listHeads } from '../../src/delivery/parts/part-store.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep, readPlan } from '../../src/delivery/steps/plan-parts.js';
import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { CHUNK_TEXT_LIMIT, chunkSeqOf } from '../../src/domain/delivery/parts.js';
import { CHUNK_COLUMN } from '../../src/domain/delivery/target-rules.js';
import { EffectFailedError } from '../../src/domain/errors.js';
import type { SourcePort } from '../../src/ports/source.js';
import type { TargetPort } from '../../src/ports/target.js';
import {
  fixedWindowManifest,
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';

/**
 * A stopped window resumes its unfinished parts (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"): a 20-part
 * window whose part k stays down stops in WRITING_UNKNOWN; reconcile proves PARTIAL_PROVED
 * with the continuation proof journaled and `resume` offered; resume continues part k
 * alone, after its last journaled chunk — the source yields only that part's remaining
 * rows — then VerifyEof and publication as usual. Where the journal cannot prove continuing
 * safe, no resume is offered and inspect says why. Real components
 * (test/support/delivery-world.ts): DynamoDB Local, the S3 emulator, chdb, PostgreSQL.
 */

const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const rows = generateEvents(1_500, 144_000); // 600 a day: 1,200 in the window
const windowIds = windowIdsOf(rows, WINDOW);
const TABLES = ['events_continue', 'events_mismatch', 'events_foreign', 'events_flow'] as const;
type Table = (typeof TABLES)[number];
/**
 * 20 parts of up to 47 rows in chunks of 2 (about 24 a part: receipts are journaled 16 at a
 * time, so a part stopped after its 17th chunk has 16 journaled); all 20 parts run at once,
 * so one failing part stops no other.
 */
const manifestOf = (table: Table) =>
  fixedWindowManifest({ daily: { table, chunkRows: 2, partRows: 47, maxConcurrency: 20 } });
const selector = '/config/route.yaml#daily';
const routeOf = (table: Table) => selectRoute(parseManifest(manifestOf(table), '/config/route.yaml'), 'daily');
const inputOf = (invocationId: string, table: Table) => ({ invocationId, manifestText: manifestOf(table), selector });
const beginInput = (invocationId: string, table: Table) => ({
  ...inputOf(invocationId, table),
  session: `c-${invocationId.slice(4, 14)}`,
});
const FAILING_PART = 7;

let world: DeliveryWorld;
beforeAll(async () => {
  world = await openDeliveryWorld({ rows, tables: TABLES });
}, 120_000);
afterAll(() => world?.close());

/** The world's chdb source, counting the rows and the stream requests it serves. */
function countingSource(): SourcePort & { rows: number; streams: number; chunkTexts: Array<number | undefined> } {
  const { source } = world;
  const counting = {
    rows: 0,
    streams: 0,
    chunkTexts: [] as Array<number | undefined>,
    describe: source.describe.bind(source),
    countWindow: source.countWindow.bind(source),
    countBuckets: source.countBuckets.bind(source),
    close: async () => {},
    async *streamWindow(request: Parameters<SourcePort['streamWindow']>[0]) {
      counting.streams++;
      counting.chunkTexts.push(request.chunkText);
      for await (const chunk of source.streamWindow(request)) {
        counting.rows += chunk.rows.length;
        yield chunk;
      }
    },
  };
  return counting;
}

/** The world's target, its loads of `parts` failing from each part's 18th chunk on while `down` holds. */
function partDown(target: TargetPort, ...parts: number[]): TargetPort & { down: boolean } {
  const failing = Object.create(target) as TargetPort & { down: boolean };
  failing.down = true;
  const isDown = (seq: number) => parts.some((p) => seq >= chunkSeqOf(p, 17) && seq < chunkSeqOf(p + 1, 0));
  failing.loadChunk = (request) =>
    failing.down && isDown(request.seq)
      ? Promise.reject(new EffectFailedError('delivery.target.load-chunk', `parts ${parts.join(', ')} stay down`))
      : target.loadChunk(request);
  return failing;
}

describe('continue: a stopped window resumes its unfinished parts', () => {
  it('20 parts, part 7 down: reconcile offers resume; resume re-extracts only part 7’s remaining rows; every row once, one receipt, checkpoint once', async () => {
    const invocationId = newInvocationId();
    const route = routeOf('events_continue');
    const target = partDown(world.target, FAILING_PART);
    const first = countingSource();
    await expect(
      deliverWindow(beginInput(invocationId, 'events_continue'), { ...world.deps(route, first), target }),
    ).rejects.toMatchObject({
      name: 'Cutpoint.EffectFailed',
    });
    target.down = false;
    const stopped = await loadInvocation(world.stores.ports, invocationId);
    expect(stopped.state).toBe('WRITING_UNKNOWN');
    const plan = await readPlan(world.deps(route), stopped);
    expect(plan).toHaveLength(20);
    const heads = await listHeads(world.stores.ports, invocationId);
    expect(heads.filter((h) => !h.eof).map((h) => h.part)).toEqual([FAILING_PART]);
    const failing = heads.find((h) => h.part === FAILING_PART)!;
    const partRows = windowIdsOf(rows, plan[FAILING_PART]!).length;
    // Its first 16 chunks are journaled (one receipt batch): the continue goes on after them.
    expect(failing.chunks).toBe(16);
    expect(failing.rows).toBe(32);
    expect(failing.rows).toBeLessThan(partRows);

    const reconciled = await reconcile(inputOf(invocationId, 'events_continue'), world.recoveryDeps(route));
    expect(reconciled).toMatchObject({
      state: 'PARTIAL_PROVED',
      projection: { diagnostic_code: 'delivery.partial_proved', permitted_actions: ['retire', 'resume'] },
    });
    expect((await loadInvocation(world.stores.ports, invocationId)).facts.continuable).toEqual({
      unfinishedParts: 1,
      rowsProved: windowIds.length - partRows + failing.rows,
    });
    expect(await inspectInvocation(world.stores.ports, invocationId)).toMatchObject({
      permitted_actions: ['retire', 'resume'],
    });

    // Without the source, resume of PARTIAL_PROVED is refused before custody is taken.
    const custodyBefore = (await loadInvocation(world.stores.ports, invocationId)).custodyEpoch;
    await expect(resume(inputOf(invocationId, 'events_continue'), world.recoveryDeps(route))).rejects.toMatchObject({
      name: 'Delivery.SourceForbidden',
    });
    expect((await loadInvocation(world.stores.ports, invocationId)).custodyEpoch).toBe(custodyBefore);

    const again = countingSource();
    const resumed = await resume(inputOf(invocationId, 'events_continue'), {
      ...world.recoveryDeps(route),
      extract: { source: again },
    });
    expect(resumed).toMatchObject({ state: 'CUSTODY_RELEASED', projection: { permitted_actions: [] } });
    // The source was asked once, for part 7 after its last journaled chunk: its remaining rows only.
    expect(again.streams).toBe(1);
    expect(again.rows).toBe(partRows - failing.rows);
    expect(await world.targetWindowIds('events_continue', WINDOW)).toEqual(windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.continuable).toBeUndefined();
    expect(record.facts.checkpoint?.moved).toBe(true);
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId,
      version: 1,
    });
    const moves = await world.journalTransitions(invocationId);
    expect(moves).toContain('PARTIAL_PROVED>WRITING_UNKNOWN');
    expect(moves.filter((m) => m.endsWith('>SUCCEEDED'))).toHaveLength(1);
  }, 120_000);

  it('every part at EOF but the stage short of its receipts: PARTIAL_PROVED offers retire only, and inspect says why', async () => {
    const invocationId = newInvocationId();
    const route = routeOf('events_mismatch');
    const deps = world.deps(route);
    const begun = await begin(beginInput(invocationId, 'events_mismatch'), deps);
    await createStaging(begun, deps);
    await planPartsStep(begun, deps);
    await extractLoadParts(begun, deps);
    const { staging } = (await loadInvocation(world.stores.ports, invocationId)).facts;
    await world.admin.query(
      `DELETE FROM "${staging!.table.schema}"."${staging!.table.table}" WHERE "${CHUNK_COLUMN}" = $1`,
      [chunkSeqOf(3, 1)],
    );
    expect(await verifyEof(begun, deps)).toMatchObject({ state: 'PARTIAL_PROVED' });
    const projection = await inspectInvocation(world.stores.ports, invocationId);
    expect(projection).toMatchObject({
      diagnostic_code: 'delivery.partial_not_continuable',
      diagnostic_reason: expect.stringContaining('every part reached EOF'),
      permitted_actions: ['retire'],
    });
    await expect(
      resume(inputOf(invocationId, 'events_mismatch'), {
        ...world.recoveryDeps(route),
        extract: { source: countingSource() },
      }),
    ).rejects.toMatchObject({ name: 'Delivery.ActionNotPermitted' });
    expect(await retire(inputOf(invocationId, 'events_mismatch'), world.recoveryDeps(route))).toMatchObject({
      state: 'RETIRED',
    });
  }, 120_000);

  it('a stage row no receipt explains: reconcile retains an incident, no resume is offered', async () => {
    const invocationId = newInvocationId();
    const route = routeOf('events_foreign');
    const target = partDown(world.target, FAILING_PART);
    await expect(
      deliverWindow(beginInput(invocationId, 'events_foreign'), { ...world.deps(route), target }),
    ).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    const { staging } = (await loadInvocation(world.stores.ports, invocationId)).facts;
    // One more row under a journaled seq of part 0: its receipt no longer explains it.
    const table = `"${staging!.table.schema}"."${staging!.table.table}"`;
    await world.admin.query(`INSERT INTO ${table} SELECT * FROM ${table} WHERE "${CHUNK_COLUMN}" = $1 LIMIT 1`, [
      chunkSeqOf(0, 0),
    ]);
    await expect(reconcile(inputOf(invocationId, 'events_foreign'), world.recoveryDeps(route))).rejects.toMatchObject({
      code: 'delivery.reconcile_ambiguous',
    });
    expect(await inspectInvocation(world.stores.ports, invocationId)).toMatchObject({
      state: 'INCIDENT_RETAINED',
      permitted_actions: [],
    });
  }, 120_000);

  it('the delivery-resume flow continues every unfinished part on its Distributed Map in one execution, then proves EOF and resumes to CUSTODY_RELEASED', async () => {
    const invocationId = newInvocationId();
    const route = routeOf('events_flow');
    const target = partDown(world.target, 3, 12);
    await expect(
      deliverWindow(beginInput(invocationId, 'events_flow'), { ...world.deps(route), target }),
    ).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    target.down = false;
    expect(await reconcile(inputOf(invocationId, 'events_flow'), world.recoveryDeps(route))).toMatchObject({
      state: 'PARTIAL_PROVED',
      projection: { permitted_actions: ['retire', 'resume'] },
    });
    expect((await loadInvocation(world.stores.ports, invocationId)).facts.continuable).toMatchObject({
      unfinishedParts: 2,
    });
    const source = countingSource();
    const heads = await listHeads(world.stores.ports, invocationId);
    const run = await world.runFlow('delivery-resume', { ...inputOf(invocationId, 'events_flow'), yes: true }, source);
    expect(run).toMatchObject({ status: 'SUCCEEDED', output: { state: 'CUSTODY_RELEASED' } });
    // One writer restart; the Map ran the part Task over all 20 parts, and only the two
    // unfinished ones read the source, each after its last journaled chunk.
    const moves = await world.journalTransitions(invocationId);
    expect(moves.filter((m) => m === 'PARTIAL_PROVED>WRITING_UNKNOWN')).toHaveLength(1);
    expect(run.mapRuns).toMatchObject([{ state: 'ContinueParts', items: 20, succeeded: 20, failed: 0 }]);
    expect(source.streams).toBe(2);
    expect(source.rows).toBe(windowIds.length - heads.reduce((n, h) => n + h.rows, 0));
    // Each part is cut by the plan's text limit as well as by chunk_rows (parts.ts CHUNK_TEXT_LIMIT).
    expect(source.chunkTexts).toEqual([CHUNK_TEXT_LIMIT, CHUNK_TEXT_LIMIT]);
    expect(await world.targetWindowIds('events_flow', WINDOW)).toEqual(windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
  }, 120_000);
});
