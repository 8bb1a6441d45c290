// Over ~300 lines (368), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { deliverWindow, runDeliverySteps } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys } from '../../src/delivery/journal/keys.js';
import { loadCustody, loadInvocation } from '../../src/delivery/journal/records.js';
import { transition } from '../../src/delivery/journal/transition.js';
import { reconcile } from '../../src/delivery/recovery/reconcile.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import { resume } from '../../src/delivery/recovery/resume.js';
import { retire } from '../../src/delivery/recovery/retire.js';
import { begin, type BeginInput } from '../../src/delivery/steps/begin.js';
import { ownerBindingOf } from '../../src/delivery/steps/common.js';
import { stagingTableOf } from '../../src/domain/delivery/identifiers.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { planPartsStep } from '../../src/delivery/steps/plan-parts.js';
import { extractLoadParts } from '../../src/delivery/parts/extract-load-parts.js';
import { verifyEof } from '../../src/delivery/steps/verify-eof.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { forbiddenSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import {
  generateEvents,
  newInvocationId,
  openDeliveryWorld,
  windowIdsOf,
  type DeliveryWorld,
} from '../support/delivery-world.js';
import { publishCrashingAfterCommit, runLosingCommitAnswer, stepsThrough } from '../support/delivery-steps.js';

/**
 * The live recovery actions (reconcile, resume, retire: docs/rules.md#recovery-actions) on real components:
 * DynamoDB Local and the S3 emulator, embedded ClickHouse (chdb, opened once) as the
 * source of the original run, embedded PostgreSQL as the target. Each scenario drives a
 * real delivery into a recoverable state with faults, then applies exactly the permitted
 * actions; recovery runs with a refusing source and must never call it.
 */

const STEP_MS = 144_000;
const GENERATED = 3000;
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

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
`;
const selector = '/config/route.yaml#daily';
const route = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');

const beginInput = (invocationId: string): BeginInput => ({
  invocationId,
  session: `run-${invocationId.slice(4, 14)}`,
  manifestText,
  selector,
});
const recoveryInput = (invocationId: string): RecoveryInput => ({ invocationId, manifestText, selector });

const sourceRows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(sourceRows, WINDOW);

let world: DeliveryWorld;
let deps: DeliveryDeps;
/** Every recovery action gets this refusing source; it must see no call at all. */
let refusing: GuardedSource;
let recoveryDeps: RecoveryDeps;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows, tables: ['events'] });
  deps = world.deps(route);
  refusing = forbiddenSource();
  recoveryDeps = world.recoveryDeps(route, refusing);
});

afterAll(() => world?.close());

/** Everything recovery could change, as one comparable text. */
async function snapshot(invocationId: string): Promise<string> {
  const a = world.stores.ports.authority;
  const record = await loadInvocation(world.stores.ports, invocationId);
  const parts = await Promise.all([
    a.query(`target#${record.targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(record.targetId), 'inv#'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
  ]);
  const events = (await world.admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows;
  const receipts = (await world.admin.query('SELECT * FROM dwh.cutpoint_receipts ORDER BY invocation_id')).rows;
  return JSON.stringify([...parts, events, receipts, await world.stagesLeft()]);
}

function expectNoSourceCall(): void {
  expect(refusing.attempts).toHaveLength(0);
}

describe('live recovery actions', () => {
  it('PUBLICATION_UNKNOWN (lost COMMIT acknowledgement): a not-permitted resume and a mismatched authority are refused without writes; reconcile → PUBLISHED, resume → CUSTODY_RELEASED; the old session is fenced', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await runLosingCommitAnswer(world, begun, deps);
    const before = await snapshot(invocationId);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_action_not_permitted',
    });
    // The same objects under another bucket: the sealed work root no longer matches.
    const elsewhere = Object.create(world.stores.ports.objects, {
      location: { value: '/s3/elsewhere' },
    }) as typeof world.stores.ports.objects;
    await expect(
      reconcile(recoveryInput(invocationId), { ...recoveryDeps, ports: { ...world.stores.ports, objects: elsewhere } }),
    ).rejects.toMatchObject({
      code: 'delivery.recovery_authority_mismatch',
    });
    await expect(
      reconcile(
        { ...recoveryInput(invocationId), targetIdentity: { ...(await world.target.identity()), system: 'other' } },
        recoveryDeps,
      ),
    ).rejects.toMatchObject({
      code: 'delivery.recovery_authority_mismatch',
    });
    expect(await snapshot(invocationId)).toBe(before);

    const reconciled = await reconcile(recoveryInput(invocationId), recoveryDeps);
    expect(reconciled).toMatchObject({
      state: 'PUBLISHED',
      projection: { state: 'PUBLISHED', permitted_actions: ['resume'] },
    });
    // The original session is a zombie now: it cannot act.
    await expect(runDeliverySteps(begun, deps)).rejects.toMatchObject({ name: 'Delivery.Fenced' });
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('PUBLISHED');

    const resumed = await resume(recoveryInput(invocationId), recoveryDeps);
    expect(resumed).toMatchObject({
      state: 'CUSTODY_RELEASED',
      projection: { state: 'CUSTODY_RELEASED', permitted_actions: [] },
    });
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await world.stagesLeft()).toBe(0);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.checkpoint?.moved).toBe(true);
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId,
      version: 1,
    });
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    expect(await world.journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    // Repeating a finished action is refused and changes nothing.
    const done = await snapshot(invocationId);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_action_not_permitted',
    });
    expect(await snapshot(invocationId)).toBe(done);
    expectNoSourceCall();
  });

  it('PUBLICATION_UNKNOWN without a commit: reconcile proves non-publication → VERIFIED_EOF; resume publishes once → CUSTODY_RELEASED, the checkpoint not moved again', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await createStaging(begun, deps);
    await planPartsStep(begun, deps);
    await extractLoadParts(begun, deps);
    expect((await verifyEof(begun, deps)).state).toBe('VERIFIED_EOF');
    // The publish acknowledgement is lost before the COMMIT reached the target.
    await transition(
      world.stores.ports,
      { targetId: begun.targetId, invocationId },
      {
        from: 'VERIFIED_EOF',
        to: 'PUBLICATION_UNKNOWN',
        fence: begun.fence,
        transitionId: `publish-unknown.${invocationId}`,
      },
    );
    expect(await world.receiptsOf(invocationId)).toBe(0);

    expect(await reconcile(recoveryInput(invocationId), recoveryDeps)).toMatchObject({
      state: 'VERIFIED_EOF',
      projection: { permitted_actions: ['resume'] },
    });
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await world.stagesLeft()).toBe(0);
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.facts.checkpoint?.moved).toBe(false);
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({ version: 1 });
    expect(await world.journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLICATION_UNKNOWN',
      'PUBLICATION_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    expectNoSourceCall();
  });

  it('a crash after the publication COMMIT: resume resolves it from the exact receipt before any target write', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps);
    await publishCrashingAfterCommit(world, begun, deps);
    expect((await loadInvocation(world.stores.ports, invocationId)).state).toBe('VERIFIED_EOF');
    expect(await world.receiptsOf(invocationId)).toBe(1);
    // Any publish attempt would fail: the receipt must resolve it first.
    const spy = world.targetFaults.arm('delivery.publish.commit:fail*');
    try {
      expect(await resume(recoveryInput(invocationId), recoveryDeps)).toMatchObject({ state: 'CUSTODY_RELEASED' });
    } finally {
      world.targetFaults.disarm();
    }
    expect(spy.fired).toHaveLength(0);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(windowIds);
    expect(await world.stagesLeft()).toBe(0);
    expect((await world.journalTransitions(invocationId)).slice(1)).toEqual([
      'WRITING_UNKNOWN>VERIFIED_EOF',
      'VERIFIED_EOF>PUBLISHED',
      'PUBLISHED>SUCCEEDED',
      'SUCCEEDED>CUSTODY_RELEASED',
    ]);
    expectNoSourceCall();
  });

  it('WRITING_UNKNOWN (a persistent load fault): reconcile proves a partial stage → PARTIAL_PROVED; retire drops the exact stage → RETIRED; nothing published; retire again drops a stage a fenced creator left, taking no custody', async () => {
    const invocationId = newInvocationId();
    const publishedBefore = (await world.admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows;
    world.targetFaults.arm('delivery.target.load-chunk:fail@4*');
    try {
      await expect(deliverWindow(beginInput(invocationId), deps)).rejects.toMatchObject({
        name: 'Cutpoint.EffectFailed',
      });
    } finally {
      world.targetFaults.disarm();
    }
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('WRITING_UNKNOWN');
    expect(await world.stagesLeft()).toBe(1);
    await expect(retire(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_action_not_permitted',
    });

    expect(await reconcile(recoveryInput(invocationId), recoveryDeps)).toMatchObject({
      state: 'PARTIAL_PROVED',
      // The loaded chunks are journaled and intact: continuing is proved safe, so resume is offered too.
      projection: { permitted_actions: ['retire', 'resume'], diagnostic_code: 'delivery.partial_proved' },
    });
    expect(await world.stagesLeft()).toBe(1);
    expect(await retire(recoveryInput(invocationId), recoveryDeps)).toMatchObject({
      state: 'RETIRED',
      projection: { permitted_actions: [] },
    });
    expect(await world.stagesLeft()).toBe(0);
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect((await world.admin.query('SELECT * FROM dwh.events ORDER BY event_id')).rows).toEqual(publishedBefore);
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'RELEASED', invocationId });
    expect(await loadCheckpoint(world.stores.ports, record.targetId, 'daily')).toMatchObject({ version: 1 });
    expect(await world.journalTransitions(invocationId)).toEqual([
      'EMPTY_STAGING>WRITING_UNKNOWN',
      'WRITING_UNKNOWN>PARTIAL_PROVED',
      'PARTIAL_PROVED>RETIRED',
    ]);

    // A fenced CreateStaging's CREATE that landed before the RETIRED write, and a retire that
    // crashed before its look after RETIRED (soak seeds 1417, 1805): the stage is left. Retire
    // run again is the same action repeated: it drops exactly that stage, takes no custody
    // (the custody item is untouched) and journals nothing; a third run finds nothing.
    const retired = await loadInvocation(world.stores.ports, invocationId);
    const stage = stagingTableOf(invocationId, route.route.target.table);
    await deps.target.createStaging({
      invocationId,
      staging: { schema: stage.schema, table: stage.name },
      likeTable: { schema: 'dwh', table: 'events' },
      ownerBinding: ownerBindingOf(retired.sealed),
    });
    expect(await world.stagesLeft()).toBe(1);
    const custodyRetired = await loadCustody(world.stores.ports, record.targetId);
    for (let again = 1; again <= 2; again++) {
      const repeated = await retire(recoveryInput(invocationId), recoveryDeps);
      expect(repeated).toMatchObject({ state: 'RETIRED', projection: { permitted_actions: [], holds_custody: false } });
      expect(repeated.fence).toBeUndefined();
      expect(await world.stagesLeft()).toBe(0);
    }
    expect(await loadCustody(world.stores.ports, record.targetId)).toEqual(custodyRetired);
    expect(await world.journalTransitions(invocationId)).toHaveLength(3);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_action_not_permitted',
    });
    expectNoSourceCall();
  });

  it('REEXTRACT_REQUIRED (a quality failure): retire drops the stage → RETIRED; the target table stays empty', async () => {
    const strictText = manifestText
      .replace('daily:', 'strict:')
      .replace('table: dwh.events,', 'table: dwh.events_strict,')
      .replace('no_negative_amounts', 'all_negative_amounts')
      .replace('WHERE amount < 0', 'WHERE amount >= 0');
    const strict = selectRoute(parseManifest(strictText, '/config/strict.yaml'), 'strict');
    await world.admin.query('CREATE TABLE dwh.events_strict (LIKE dwh.events INCLUDING ALL)');
    const invocationId = newInvocationId();
    const run = await deliverWindow(
      { ...beginInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' },
      { ...deps, route: strict },
    );
    expect(run.state).toBe('REEXTRACT_REQUIRED');
    const input = { ...recoveryInput(invocationId), manifestText: strictText, selector: '/config/strict.yaml#strict' };
    const strictDeps = { ...recoveryDeps, route: strict };
    // The manifest must be the exact text sealed: an edited copy is refused, nothing touched.
    await expect(retire({ ...input, manifestText: `${strictText}# edited\n` }, strictDeps)).rejects.toMatchObject({
      code: 'delivery.recovery_authority_mismatch',
    });
    expect(await world.stagesLeft()).toBe(1);
    expect(await retire(input, strictDeps)).toMatchObject({ state: 'RETIRED' });
    expect(await world.stagesLeft()).toBe(0);
    expect(await world.targetWindowIds('events_strict', WINDOW)).toEqual([]);
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect((await world.journalTransitions(invocationId)).at(-1)).toBe('REEXTRACT_REQUIRED>RETIRED');
    expectNoSourceCall();
  });

  // Last in the file: the incident keeps custody of dwh.events.
  it('VERIFIED_EOF with a receipt that does not match the journal: resume journals INCIDENT_RETAINED, publishes nothing, keeps custody and the stage', async () => {
    const invocationId = newInvocationId();
    const begun = await begin(beginInput(invocationId), deps);
    await stepsThrough(begun, deps);
    await publishCrashingAfterCommit(world, begun, deps);
    // Someone altered the durable receipt after the COMMIT: contradicting evidence.
    await world.admin.query('UPDATE dwh.cutpoint_receipts SET rows = rows + 1 WHERE invocation_id = $1', [
      invocationId,
    ]);
    const rowsBefore = await world.targetWindowIds('events', WINDOW);
    await expect(resume(recoveryInput(invocationId), recoveryDeps)).rejects.toMatchObject({
      name: 'Delivery.RecoveryRetained',
      state: 'INCIDENT_RETAINED',
    });
    const record = await loadInvocation(world.stores.ports, invocationId);
    expect(record.state).toBe('INCIDENT_RETAINED');
    expect(await loadCustody(world.stores.ports, record.targetId)).toMatchObject({ state: 'HELD', invocationId });
    expect(await world.targetWindowIds('events', WINDOW)).toEqual(rowsBefore);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(await world.stagesLeft()).toBe(1);
    expect((await world.journalTransitions(invocationId)).slice(-1)).toEqual(['VERIFIED_EOF>INCIDENT_RETAINED']);
    expectNoSourceCall();
  });
});
