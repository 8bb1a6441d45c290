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
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planParts } from '../../src/delivery/steps/plan-parts.js';
import { listHeads, listReceipts } from '../../src/delivery/parts/part-store.js';
import { evidenceDocument, persistEvidence } from '../../src/delivery/steps/evidence.js';
import { seqRangeOf } from '../../src/domain/delivery/parts.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { readVerified } from '../../src/objects/exact-object.js';
import { forbiddenSource } from '../../src/delivery/source-guard.js';
import { generateEvents, newInvocationId, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';
import { stepsThrough } from '../support/delivery-steps.js';

/**
 * The deliver-window steps end to end on real components (test/support/delivery-world.ts):
 * DynamoDB Local and the S3 emulator (journal, custody, chunk and evidence objects),
 * embedded ClickHouse (chdb) as the source and embedded PostgreSQL as the target. chdb
 * allows one engine per process: this file opens it once.
 */

const STEP_MS = 144_000; // 600 rows a day
const GENERATED = 3000; // five days
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
const START_MS = Date.parse(WINDOW.start);
const END_MS = Date.parse(WINDOW.end);

const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CH_URL }
  warehouse: { kind: postgres, url_env: PG_URL, password_env: PG_PASSWORD }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2026-11-02T00:00:00Z", end: "2026-11-04T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    quality:
      unique_keys: true
      not_null: [event_id, event_time]
      assertions:
        - name: no_negative_amounts
          sql: "SELECT COUNT(*) FROM {staging} WHERE amount < 0"
          expect: 0
    chunk_rows: 50
    part_rows: 600
`;
const selector = '/config/route.yaml#daily';
const route = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');

const beginInput = (invocationId: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector,
});

const sourceRows = generateEvents(GENERATED, STEP_MS);
// Rows on both bounds, to the millisecond.
for (const [id, t] of [[10_001, START_MS - 1], [10_002, START_MS], [10_003, END_MS - 1], [10_004, END_MS]] as const) {
  sourceRows.push({ event_id: id, event_time: t, region: 'eu', amount: 1.5, note: 'bound' });
}
const windowIds = windowIdsOf(sourceRows, WINDOW);

let world: DeliveryWorld;
let deps: DeliveryDeps;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows, tables: ['events'] });
  // Rows outside the window that must survive, and a stale row inside it that replace_window must remove.
  await world.admin.query(`INSERT INTO dwh.events VALUES (1, '2026-11-01T00:02:24Z', 'old', 1, 'outside'), (99999, '2026-11-02T12:00:00Z', 'stale', 0, 'inside')`);
  deps = world.deps(route);
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
    const outside = await world.admin.query(`SELECT event_id::text AS id, region FROM dwh.events WHERE event_time < $1::timestamptz OR event_time >= $2::timestamptz`, [WINDOW.start, WINDOW.end]);
    expect(outside.rows).toEqual([{ id: '1', region: 'old' }]);
    const sample = await world.admin.query(`SELECT amount::text AS amount, note, region FROM dwh.events WHERE event_id = 601`);
    expect(sample.rows).toEqual([{ amount: '75.1250', note: 'note 601', region: 'us' }]);

    // The durable receipt row, written in the publication transaction.
    const receipts = await world.admin.query(`SELECT invocation_id, rows::text AS rows, digest FROM dwh.cutpoint_receipts`);
    expect(receipts.rows).toHaveLength(1);
    const record = await loadInvocation(world.stores.ports, first);
    expect(receipts.rows[0]).toEqual({ invocation_id: first, rows: '1202', digest: record.facts.publication?.digest });

    // The parts: the plan cut the window into parts of at most ~600 rows; each part's
    // receipts are in its own items, contiguous, and add up to the window.
    const heads = await listHeads(world.stores.ports, first);
    expect(heads.length).toBeGreaterThanOrEqual(2);
    expect(heads.every((h) => h.eof && h.rows <= 600)).toBe(true);
    expect(heads.reduce((n, h) => n + h.rows, 0)).toBe(1202);
    expect(record.facts.parts).toMatchObject({ parts: heads.length, rows: 1202, chunks: heads.reduce((n, h) => n + h.chunks, 0) });
    expect(record.facts.plan).toMatchObject({ parts: heads.length, partRows: 600 });
    const chunkReceipts = await listReceipts(world.stores.ports, first);
    expect(chunkReceipts).toHaveLength(record.facts.parts?.chunks ?? -1);
    // The journal: state transitions per window only; part receipts never touch it.
    const ids = (await journalOf(world.stores.ports.authority, first).read()).map((e) => e.transitionId.replace(`.${first}`, ''));
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
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId: first });

    // Evidence: an object generation, verified on read, the safe document the journal implies.
    const evidence = record.facts.evidence;
    expect(evidence).toBeDefined();
    const stored = await readVerified(world.stores.ports.objects, evidence!.key, evidence!.sha256);
    const doc = JSON.parse(Buffer.from(stored.bytes).toString('utf8')) as ReturnType<typeof evidenceDocument>;
    expect(doc).toEqual(JSON.parse(JSON.stringify(evidenceDocument(record, deps))));
    expect(doc).toMatchObject({ invocation_id: first, window: WINDOW, parts: { count: heads.length, rows: 1202 }, publication: { rows: 1202 } });
    const text = Buffer.from(stored.bytes).toString('utf8');
    for (const secret of ['PG_URL', 'PG_PASSWORD', 'postgres://', world.pgServer.connectionString]) expect(text).not.toContain(secret);

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
    await expect(deliverWindow(beginInput(intruder), deps)).rejects.toMatchObject({ name: 'Delivery.CustodyHeld', code: 'delivery.custody_held' });
    await expect(loadInvocation(world.stores.ports, intruder)).rejects.toMatchObject({ code: 'delivery.recovery_journal_unavailable' });

    // The holder re-delivers the same window: still exactly once, the checkpoint not moved again.
    const run = await runDeliverySteps(begun, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    const record = await loadInvocation(world.stores.ports, holder);
    expect(record.facts.checkpoint?.moved).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({ invocationId: first, version: 1 });
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
    const receipt = await world.admin.query('SELECT rows::text AS rows FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId]);
    expect(receipt.rows).toEqual([{ rows: '1202' }]);

    // Source-free: every call to the source is refused, and none is made.
    const fenced = forbiddenSource();
    const resumed = await runDeliverySteps(begun, { ...deps, source: fenced });
    expect(resumed.state).toBe('CUSTODY_RELEASED');
    expect(fenced.attempts).toHaveLength(0);
    // Step names only: ids that may recur carry their journal position (`publish-unknown.<seq>`).
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId.replace(`.${invocationId}`, '').replace(/\.\d+$/, ''));
    expect(ids.slice(ids.indexOf('verify-eof'))).toEqual(['verify-eof', 'publish-unknown', 'publish-reconciled', 'evidence', 'sys:checkpoint', 'release']);
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
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId.replace(`.${invocationId}`, '').replace(/\.\d+$/, ''));
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
    expect((await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount).toBe(1);
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
    const run = await deliverWindow({ ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' }, strictDeps);
    expect(run).toMatchObject({ state: 'REEXTRACT_REQUIRED', stoppedAt: 'quality', reasons: ['assertion:all_negative_amounts'] });
    expect((await world.admin.query('SELECT count(*)::int AS n FROM dwh.events_strict')).rows).toEqual([{ n: 0 }]);
    expect((await world.admin.query('SELECT 1 FROM dwh.cutpoint_receipts WHERE invocation_id = $1', [invocationId])).rowCount).toBe(0);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    expect(await world.stagesLeft()).toBe(1);
    // Running it again changes nothing: the state needs the retire command.
    const again = await deliverWindow({ ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' }, strictDeps);
    expect(again).toMatchObject({ state: 'REEXTRACT_REQUIRED', stoppedAt: 'create-staging' });
    expect(again.steps.some((s) => s.acted)).toBe(false);
  });
});

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
        const next = { targetId: ref.targetId, route: 'daily', windowStart: WINDOW.start, windowEnd: WINDOW.end, invocationId, advancedAt: at };
        return {
          set: { facts: { ...invocation.facts, checkpoint: { windowEnd: WINDOW.end, moved: true, at } } },
          custody: custodyGuardLeg(custody as never),
          legs: [current ? { kind: 'update', key, expect: { version: current.version }, set: next } : { kind: 'put', item: { ...key, ...next }, expect: 'absent' }],
          journal: { windowEnd: WINDOW.end, moved: true },
        };
      },
    });
    const checkpointBefore = await loadCheckpoint(world.stores.ports, ref.targetId, 'daily');
    const run = await runDeliverySteps(begun, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
    expect(await loadCheckpoint(world.stores.ports, ref.targetId, 'daily')).toEqual(checkpointBefore);
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId);
    expect(ids.slice(ids.indexOf('sys:checkpoint'))).toEqual(['sys:checkpoint', `succeed.${invocationId}`, `release.${invocationId}`]);
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
    await recordFacts(world.stores.ports, ref, { state: 'SUCCEEDED', fence: begun.fence, transitionId: `cleanup-proved.${invocationId}`, patch: { absence: { table: staging.table, objectId: staging.objectId } } });
    let drops = 0;
    const counting = new Proxy(world.target, {
      get: (target, prop, receiver) => (prop === 'dropStaging' ? (...args: unknown[]) => (drops++, target.dropStaging(...(args as [never]))) : Reflect.get(target, prop, receiver)),
    });
    expect(await cleanup(begun, { ...deps, target: counting })).toMatchObject({ state: 'CUSTODY_RELEASED', acted: true });
    expect(drops).toBe(0);
    const ids = (await journalOf(world.stores.ports.authority, invocationId).read()).map((e) => e.transitionId);
    expect(ids.slice(-2)).toEqual([`cleanup-proved.${invocationId}`, `release.${invocationId}`]);
  });
});

describe('quality at scale', () => {
  it('probes the stage part by part; keys without the source time column are checked across parts by one whole-stage query', async () => {
    // Its own target table: the invocation keeps its custody (its stage is tampered with below).
    const partsText = manifestText.replace('daily:', 'probed:').replace('table: dwh.events,', 'table: dwh.events_probed,');
    const probed = selectRoute(parseManifest(partsText, '/config/probed.yaml'), 'probed');
    await world.admin.query('CREATE TABLE dwh.events_probed (LIKE dwh.events INCLUDING ALL)');
    const probedDeps: DeliveryDeps = { ...deps, route: probed };
    const invocationId = newInvocationId();
    const begun = await begin({ ...beginInput(invocationId), manifestText: partsText, selector: '/config/probed.yaml#probed' }, probedDeps);
    await stepsThrough(begun, probedDeps);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.plan?.parts).toBeGreaterThan(1);
    const staging = record.facts.staging?.table;
    const stage = `${staging?.schema}.${staging?.table}`;
    const timed = { ...probed, route: { ...probed.route, target: { ...probed.route.target, keyColumns: ['event_id', 'event_time'] } } };
    expect(await stagingFactsByPart(probedDeps, record)).toMatchObject({ rows: windowIds.length, duplicateKeys: 0, nulls: { event_id: 0, event_time: 0 } });

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

  it('a step carrying a state that is no longer current (its first attempt\'s response was lost) decides from the journal: nothing twice', async () => {
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
    const planned = await planParts(begun, deps);
    expect(planned).toMatchObject({ state: 'WRITING_UNKNOWN', acted: true });
    const journal = await journalOf(world.stores.ports.authority, invocationId).read();
    expect(journal.map((e) => e.transitionId)).toEqual(['sys:begin', `create-staging.${invocationId}`, `extract-start.${invocationId}`]);
    const run = await runDeliverySteps(staged, deps);
    expect(run.state).toBe('CUSTODY_RELEASED');
  });
});
