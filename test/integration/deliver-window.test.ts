import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliverWindow, runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys, journalOf } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { begin } from '../../src/delivery/steps/begin.js';
import { listHeads, listReceipts } from '../../src/delivery/parts/part-store.js';
import { evidenceDocument } from '../../src/delivery/steps/evidence.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { readVerified } from '../../src/objects/exact-object.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { newInvocationId, type DeliveryWorld } from '../support/delivery-world.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { beginInput, manifestText, openWindowWorld, WINDOW, windowIds } from '../support/deliver-window-fixture.js';

/**
 * The deliver-window steps end to end on real components (test/support/delivery-world.ts):
 * DynamoDB Local and the S3 emulator (journal, custody, chunk and evidence objects),
 * embedded ClickHouse (chdb) as the source and embedded PostgreSQL as the target. chdb
 * allows one engine per process: this file opens it once.
 */

let world: DeliveryWorld;
let deps: DeliveryDeps;

beforeAll(async () => {
  ({ world, deps } = await openWindowWorld());
});

afterAll(() => world?.close());

/** Everything a delivery can change, as one comparable text. */
async function snapshot(invocationId: string): Promise<string> {
  const a = world.stores.ports.authority;
  const record = await loadInvocation(world.stores.ports, invocationId);
  const parts = await Promise.all([
    a.query(`target#${record.targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(record.targetId), 'inv#'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
    a.query(deliveryKeys.journal(invocationId), 'tx#'),
    a.query(deliveryKeys.partsOf(invocationId), 'part#'),
    a.query(deliveryKeys.partsOf(invocationId), 'batch#'),
    world.stores.ports.objects.list(`delivery/daily/${invocationId}/`),
  ]);
  // One pg client: its queries run one after another.
  const events = (await world.admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows;
  const receipts = (await world.admin.query('SELECT * FROM dwh.cutpoint_receipts ORDER BY invocation_id')).rows;
  return JSON.stringify([...parts, events, receipts, await world.stagesLeft()]);
}

const first = newInvocationId();

describe('deliver one window in process', () => {
  it('delivers the fixed window: every row exactly once, receipt, checkpoint, evidence, stage dropped, custody released', async () => {
    expect(windowIds.length).toBe(1202);
    const run = await deliverWindow(beginInput(first), deps);
    expect(run).toMatchObject({ invocationId: first, state: 'CUSTODY_RELEASED', window: WINDOW });
    expect(run.stoppedAt).toBeUndefined();
    expect(run.steps.every((s) => s.acted)).toBe(true);

    // The target: the window's rows exactly once, the stale in-window row gone, outside rows kept.
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    const outside = await world.admin.query(
      `SELECT event_id::text AS id, region FROM dwh.events WHERE event_time < $1::timestamptz OR event_time >= $2::timestamptz`,
      [WINDOW.start, WINDOW.end],
    );
    expect(outside.rows).toEqual([{ id: '1', region: 'old' }]);
    const sample = await world.admin.query(
      `SELECT amount::text AS amount, note, region FROM dwh.events WHERE event_id = 601`,
    );
    expect(sample.rows).toEqual([{ amount: '75.1250', note: 'note 601', region: 'us' }]);

    // The durable receipt row, written in the publication transaction.
    const receipts = await world.admin.query(
      `SELECT invocation_id, rows::text AS rows, digest FROM dwh.cutpoint_receipts`,
    );
    expect(receipts.rows).toHaveLength(1);
    const record = await loadInvocation(world.stores.ports, first);
    expect(receipts.rows[0]).toEqual({ invocation_id: first, rows: '1202', digest: record.facts.publication?.digest });

    // The parts: the plan cut the window into parts of at most ~600 rows; each part's
    // receipts are in its own items, contiguous, and add up to the window.
    const heads = await listHeads(world.stores.ports, first);
    expect(heads.length).toBeGreaterThanOrEqual(2);
    expect(heads.every((h) => h.eof && h.rows <= 600)).toBe(true);
    expect(heads.reduce((n, h) => n + h.rows, 0)).toBe(1202);
    expect(record.facts.parts).toMatchObject({
      parts: heads.length,
      rows: 1202,
      chunks: heads.reduce((n, h) => n + h.chunks, 0),
    });
    expect(record.facts.plan).toMatchObject({ parts: heads.length, partRows: 600 });
    const chunkReceipts = await listReceipts(world.stores.ports, first);
    expect(chunkReceipts).toHaveLength(record.facts.parts?.chunks ?? -1);
    // The journal: state transitions per window only; part receipts never touch it.
    const ids = (await journalOf(world.stores.ports.authority, first).read()).map((e) =>
      e.transitionId.replace(`.${first}`, ''),
    );
    expect(ids).toEqual([
      'sys:begin',
      'create-staging',
      'extract-start',
      'verify-eof',
      'publish',
      'evidence',
      'sys:checkpoint',
      'release',
    ]);

    // Checkpoint advanced once, to the sealed window end.
    const cp = await loadCheckpoint(world.stores.ports, record.targetId, 'daily');
    expect(cp).toMatchObject({ windowStart: WINDOW.start, windowEnd: WINDOW.end, invocationId: first, version: 1 });
    expect(record.facts.checkpoint?.moved).toBe(true);

    // Staging absent, custody released.
    expect(await world.stagesLeft()).toBe(0);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({
      state: 'RELEASED',
      invocationId: first,
    });

    // Evidence: an object generation, verified on read, the safe document the journal implies.
    const evidence = record.facts.evidence;
    expect(evidence).toBeDefined();
    const stored = await readVerified(world.stores.ports.objects, evidence!.key, evidence!.sha256);
    const doc = JSON.parse(Buffer.from(stored.bytes).toString('utf8')) as ReturnType<typeof evidenceDocument>;
    expect(doc).toEqual(JSON.parse(JSON.stringify(evidenceDocument(record, deps))));
    expect(doc).toMatchObject({
      invocation_id: first,
      window: WINDOW,
      parts: { count: heads.length, rows: 1202 },
      publication: { rows: 1202 },
    });
    const text = Buffer.from(stored.bytes).toString('utf8');
    for (const secret of ['PG_URL', 'PG_PASSWORD', 'postgres://', world.pgServer.connectionString])
      expect(text).not.toContain(secret);

    // Chunk objects: one generation per receipt, each verifiable against it.
    for (const chunk of chunkReceipts) await readVerified(world.stores.ports.objects, chunk.key, chunk.sha256);
  });

  it('running the whole delivery again with the same invocation changes nothing', async () => {
    const before = await snapshot(first);
    const run = await deliverWindow(beginInput(first), deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(run.steps.some((s) => s.acted)).toBe(false);
    expect(await snapshot(first)).toBe(before);
  });

  it('a second invocation for the window while another holds custody is Delivery.CustodyHeld; the holder then completes without moving the checkpoint back', async () => {
    const holder = newInvocationId();
    const begun = await begin(beginInput(holder), deps);
    expect(begun).toMatchObject({ state: 'EMPTY_STAGING', acted: true, window: WINDOW });

    const intruder = newInvocationId();
    await expect(deliverWindow(beginInput(intruder), deps)).rejects.toMatchObject({
      name: 'Delivery.CustodyHeld',
      code: 'delivery.custody_held',
    });
    await expect(loadInvocation(world.stores.ports, intruder)).rejects.toMatchObject({
      code: 'delivery.recovery_journal_unavailable',
    });

    // The holder re-delivers the same window: still exactly once, the checkpoint not moved again.
    const run = await runDeliverySteps(begun, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    const record = await loadInvocation(world.stores.ports, holder);
    expect(record.facts.checkpoint?.moved).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({
      invocationId: first,
      version: 1,
    });
    expect(await world.stagesLeft()).toBe(0);
  });

  it('a lost publish acknowledgement journals PUBLICATION_UNKNOWN; the next run reconciles the exact receipt and completes without the source', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps, 'extract-load-parts');
    world.targetFaults.arm('delivery.publish.commit:lose-response');
    let run;
    try {
      run = await runDeliverySteps(begun, deps);
    } finally {
      world.targetFaults.disarm();
    }
    expect(run).toMatchObject({ state: 'PUBLICATION_UNKNOWN', stoppedAt: 'publish' });
    // The COMMIT applied: the receipt is there, but the journal does not claim it yet.
    const receipt = await world.admin.query(
      'SELECT rows::text AS rows FROM dwh.cutpoint_receipts WHERE invocation_id = $1',
      [invocationId],
    );
    expect(receipt.rows).toEqual([{ rows: '1202' }]);

    // Source-free: every call to the source is refused, and none is made.
    const fenced = forbiddenSource();
    const resumed = await runDeliverySteps(begun, { ...deps, source: fenced });
    expect(resumed.state).toBe('CUSTODY_RELEASED');
    expect(fenced.attempts).toHaveLength(0);
    // Step names only: ids that may recur carry their journal position (`publish-unknown.<seq>`).
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) =>
      e.transitionId.replace(`.${invocationId}`, '').replace(/\.\d+$/, ''),
    );
    expect(ids.slice(ids.indexOf('verify-eof'))).toEqual([
      'verify-eof',
      'publish-unknown',
      'publish-reconciled',
      'evidence',
      'sys:checkpoint',
      'release',
    ]);
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(await world.stagesLeft()).toBe(0);
  });

  it('crashes and lost responses at every kind of effect are absorbed by step reruns: one journal record per step, every row once', async () => {
    const invocationId = newInvocationId();
    const spec = [
      'delivery.custody.acquire:lose-response',
      'delivery.staging.record:crash-after',
      'delivery.chunk.put:crash-after@3',
      'delivery.plan.put:lose-response',
      'delivery.target.load-chunk:crash-after@2',
      'delivery.part.receipt:crash-before@2',
      'delivery.publish.commit:crash-after',
      'delivery.evidence.put:lose-response',
      'delivery.checkpoint.advance:lose-response',
      'delivery.target.drop-staging:crash-after',
      'delivery.custody.release:lose-response',
    ].join(',');
    const storeFaults = world.stores.faults.arm(spec);
    const sqlFaults = world.targetFaults.arm(spec);
    let run;
    try {
      run = await deliverWindow(beginInput(invocationId), deps);
    } finally {
      world.stores.faults.disarm();
      world.targetFaults.disarm();
    }
    expect(run.state).toBe('CUSTODY_RELEASED');
    // Every armed fault fired once, in the store adapters or the target adapter.
    const fired = [...storeFaults.fired, ...sqlFaults.fired].map((f) => `${f.cutPoint}:${f.kind}`).sort();
    expect(fired).toEqual(
      spec
        .split(',')
        .map((r) => r.replace(/@\d+$/, ''))
        .sort(),
    );
    // Step names only: ids that may recur carry their journal position (`publish-unknown.<seq>`).
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) =>
      e.transitionId.replace(`.${invocationId}`, '').replace(/\.\d+$/, ''),
    );
    expect(ids).toEqual([
      'sys:begin',
      'create-staging',
      'extract-start',
      'verify-eof',
      'publish',
      'evidence',
      'sys:checkpoint',
      'release',
    ]);
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(
      (await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]))
        .rowCount,
    ).toBe(1);
    expect(await world.stagesLeft()).toBe(0);
    // One object per chunk, the plan and the evidence.
    const chunks = (await loadInvocation(world.stores.ports, invocationId)).facts.parts?.chunks ?? -1;
    expect(await world.stores.ports.objects.list(`delivery/daily/${invocationId}/`)).toHaveLength(chunks + 2);
  });

  it('a stage that fails a quality rule becomes REEXTRACT_REQUIRED: nothing published, custody and stage retained for retirement', async () => {
    const strictText = manifestText
      .replace('daily:', 'strict:')
      .replace('table: dwh.events,', 'table: dwh.events_strict,')
      .replace('no_negative_amounts', 'all_negative_amounts')
      .replace('WHERE amount < 0', 'WHERE amount >= 0');
    const strict = selectRoute(parseManifest(strictText, '/config/strict.yaml'), 'strict');
    await world.admin.query('CREATE TABLE dwh.events_strict (LIKE dwh.events INCLUDING ALL)');
    const strictDeps: DeliveryDeps = { ...deps, route: strict };
    const invocationId = newInvocationId();
    const run = await deliverWindow(
      { ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' },
      strictDeps,
    );
    expect(run).toMatchObject({
      state: 'REEXTRACT_REQUIRED',
      stoppedAt: 'quality',
      reasons: ['assertion:all_negative_amounts'],
    });
    expect((await world.admin.query('SELECT count(*)::int AS n FROM dwh.events_strict')).rows).toEqual([{ n: 0 }]);
    expect(
      (await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]))
        .rowCount,
    ).toBe(0);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    expect(await world.stagesLeft()).toBe(1);
    // Running it again changes nothing: the state needs the retire command.
    const again = await deliverWindow(
      { ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' },
      strictDeps,
    );
    expect(again).toMatchObject({ state: 'REEXTRACT_REQUIRED', stoppedAt: 'create-staging' });
    expect(again.steps.some((s) => s.acted)).toBe(false);
  });
});
