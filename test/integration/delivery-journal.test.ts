import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import type { JournalState } from '../../src/domain/delivery/journal-states.js';
import type { SealedWindow } from '../../src/domain/delivery/window.js';
import { advanceCheckpoint, loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadCustody, releaseCustody, type CustodyGrant } from '../../src/delivery/custody.js';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliveryKeys, journalOf, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { inspectAll, inspectInvocation, listInvocations } from '../../src/delivery/journal/listing.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { recordFacts, transition } from '../../src/delivery/journal/transition.js';
import type { Ports } from '../../src/ports/index.js';
import { freshStores, type TestStores } from '../support/emulators.js';
import { EXPECTED_FIRST, firstAttempt } from '../support/fault-attempt.js';
import { DAY1, newInvocationId, newTarget as journalTarget, sealFor } from '../support/journal-fixture.js';

/** The delivery journal against DynamoDB Local: transitions, facts, checkpoint, read side, fault matrices. */

const DAY2: SealedWindow = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-03T00:00:00.000Z' };
const newTarget = () => journalTarget('events');

async function begin(
  ports: Ports,
  targetId = newTarget(),
  window: SealedWindow = DAY1,
): Promise<{ ref: InvocationRef; grant: CustodyGrant }> {
  const invocationId = newInvocationId();
  const grant = await beginInvocation(ports, {
    invocationId,
    route: 'daily',
    targetId,
    sealed: sealFor(invocationId, window),
    session: `s-${invocationId.slice(4, 12)}`,
  });
  return { ref: { targetId, invocationId }, grant };
}

const hex = (s: string) => sha256Hex(s);
const staging = { table: { schema: 'dbo', table: 'cutpoint_stg_x' }, objectId: '1234', owner: hex('owner') };
const plan = { key: 'delivery/daily/x/plan.json', sha256: hex('plan'), parts: 2, partRows: 10 };
const parts = { parts: 2, chunks: 2, rows: 20, bytes: 200, digest: hex('parts') };
const publication = {
  rows: 20,
  digest: hex('pub'),
  stagingObjectId: '1234',
  mode: 'replace_window' as const,
  publishedAt: '2026-11-03T00:05:00.000Z',
};
const evidence = { key: 'delivery/daily/x/evidence.json', sha256: hex('evidence') };
/** What the target proved about the recorded stage: required by RETIRED and CUSTODY_RELEASED. */
const absence = { table: staging.table, objectId: staging.objectId };

/** Drives an invocation from EMPTY_STAGING to PUBLISHED with its evidence recorded. */
async function toPublished(ports: Ports, ref: InvocationRef, fence: CustodyGrant['fence']) {
  await transition(ports, ref, {
    from: 'EMPTY_STAGING',
    to: 'WRITING_UNKNOWN',
    fence,
    transitionId: 'write',
    patch: { staging, ownedStagesRecorded: true },
  });
  await recordFacts(ports, ref, { state: 'WRITING_UNKNOWN', fence, transitionId: 'plan', patch: { plan } });
  await transition(ports, ref, {
    from: 'WRITING_UNKNOWN',
    to: 'VERIFIED_EOF',
    fence,
    transitionId: 'eof',
    patch: { parts },
  });
  await transition(ports, ref, {
    from: 'VERIFIED_EOF',
    to: 'PUBLISHED',
    fence,
    transitionId: 'publish',
    patch: { publication },
  });
  await recordFacts(ports, ref, { state: 'PUBLISHED', fence, transitionId: 'evidence', patch: { evidence } });
}

/** Every item of the target, its invocations, their pointers and journals, as one comparable text. */
async function snapshot(ports: Ports, targetId: string, invocationIds: string[]): Promise<string> {
  const a = ports.authority;
  const parts = await Promise.all([
    a.query(`target#${targetId}`, 'c'),
    a.query(deliveryKeys.invocationsOf(targetId), 'inv#'),
    ...invocationIds.flatMap((id) => [
      a.query(deliveryKeys.journal(id), 'seq#'),
      a.query(deliveryKeys.journal(id), 'tx#'),
      a.get(deliveryKeys.pointer(id)).then((p) => (p ? [p] : [])),
    ]),
  ]);
  return JSON.stringify(parts);
}

/** Gap-free journal: seq 1..n, each transition id once, the head (journalSeq) at n. */
async function expectJournalIntact(ports: Ports, ref: InvocationRef): Promise<string[]> {
  const entries = await journalOf(ports.authority, ref.invocationId).read();
  const claims = await ports.authority.query(deliveryKeys.journal(ref.invocationId), 'tx#');
  const invocation = await loadInvocation(ports, ref.invocationId);
  expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
  const ids = entries.map((e) => e.transitionId);
  expect(new Set(ids).size).toBe(ids.length);
  expect(claims.length).toBe(ids.length);
  expect(invocation.journalSeq).toBe(entries.length);
  expect(invocation.lastTransitionId).toBe(ids.at(-1));
  return ids;
}

let stores: TestStores;
beforeAll(async () => {
  stores = await freshStores();
});

describe('journaled transitions', () => {
  it('walks the seed diagram to CUSTODY_RELEASED, one gap-free journal record per step', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    expect(grant).toMatchObject({ alreadyApplied: false, fence: { owner: ref.invocationId, epoch: 1 } });
    expect(grant.invocation).toMatchObject({ state: 'EMPTY_STAGING', journalSeq: 1, custodyEpoch: 1, version: 1 });
    await toPublished(ports, ref, grant.fence);
    const advanced = await advanceCheckpoint(ports, ref, grant.fence);
    // The checkpoint is SUCCEEDED's last proof: one transaction advances it and completes the invocation.
    expect(advanced).toMatchObject({
      moved: true,
      windowEnd: DAY1.end,
      alreadyApplied: false,
      invocation: { state: 'SUCCEEDED' },
    });
    const released = await transition(ports, ref, {
      from: 'SUCCEEDED',
      to: 'CUSTODY_RELEASED',
      fence: grant.fence,
      transitionId: 'release',
      patch: { absence },
    });
    expect(released.invocation.state).toBe('CUSTODY_RELEASED');

    const ids = await expectJournalIntact(ports, ref);
    expect(ids).toEqual(['sys:begin', 'write', 'plan', 'eof', 'publish', 'evidence', 'sys:checkpoint', 'release']);
    const entries = await journalOf(ports.authority, ref.invocationId).read();
    expect(entries.map((e) => [e.type, e.data.from, e.data.to])).toContainEqual([
      'transition',
      'VERIFIED_EOF',
      'PUBLISHED',
    ]);
    expect(entries.map((e) => [e.type, e.data.from, e.data.to])).toContainEqual([
      'checkpoint',
      'PUBLISHED',
      'SUCCEEDED',
    ]);

    const record = await loadInvocation(ports, ref.invocationId);
    expect(record.facts).toMatchObject({ ownedStagesRecorded: true, staging, publication, evidence, plan, parts });
    expect(await loadCustody(ports, ref.targetId)).toMatchObject({
      state: 'RELEASED',
      epoch: 1,
      invocationId: ref.invocationId,
    });
    expect((await loadCustody(ports, ref.targetId))?.fence).toBeUndefined();
    expect(await loadCheckpoint(ports, ref.targetId, 'daily')).toMatchObject({
      windowEnd: DAY1.end,
      invocationId: ref.invocationId,
    });
    expect(await inspectInvocation(ports, ref.invocationId)).toEqual({
      diagnostic_code: 'delivery.custody_released',
      holds_custody: false,
      invocation_id: ref.invocationId,
      kind: 'cutpoint.delivery-recovery.v1',
      permitted_actions: [],
      route: 'daily',
      runbook: {
        command: 'npx cutpoint delivery inspect "$ID" --format json $CP_AWS',
        page: 'docs/runbook/delivery/CUSTODY_RELEASED.md',
      },
      schema_version: 1,
      state: 'CUSTODY_RELEASED',
      window: DAY1,
    });
  });

  it('repeating a transition id is success without a write; reusing it for another operation is refused', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    const request = { from: 'EMPTY_STAGING', to: 'WRITING_UNKNOWN', fence: grant.fence, transitionId: 't-1' } as const;
    expect((await transition(ports, ref, request)).alreadyApplied).toBe(false);
    const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
    const again = await transition(ports, ref, request);
    expect(again).toMatchObject({
      alreadyApplied: true,
      entry: { seq: 2, transitionId: 't-1' },
      invocation: { state: 'WRITING_UNKNOWN' },
    });
    await expect(transition(ports, ref, { ...request, patch: { ownedStagesRecorded: true } })).rejects.toMatchObject({
      code: 'delivery.transition_id_reused',
    });
    await expect(
      recordFacts(ports, ref, { state: 'WRITING_UNKNOWN', fence: grant.fence, transitionId: 't-1', patch: {} }),
    ).rejects.toMatchObject({ code: 'delivery.transition_id_reused' });
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(before);
  });

  it('refuses illegal transitions, stale states, unmet preconditions and contradicting facts without writing', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    const fence = grant.fence;
    await transition(ports, ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence,
      transitionId: 'w',
      patch: { staging, plan },
    });
    const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
    const refusals: Array<[() => Promise<unknown>, string]> = [
      [
        () => transition(ports, ref, { from: 'WRITING_UNKNOWN', to: 'PUBLISHED', fence, transitionId: 'x1' }),
        'delivery.illegal_transition',
      ],
      [
        () => transition(ports, ref, { from: 'EMPTY_STAGING', to: 'SUCCEEDED', fence, transitionId: 'x2' }),
        'delivery.illegal_transition',
      ],
      [
        () => transition(ports, ref, { from: 'WRITING_UNKNOWN', to: 'WRITING_UNKNOWN', fence, transitionId: 'x3' }),
        'delivery.illegal_transition',
      ],
      [
        () => transition(ports, ref, { from: 'CUSTODY_RELEASED', to: 'EMPTY_STAGING', fence, transitionId: 'x4' }),
        'delivery.illegal_transition',
      ],
      [
        () => transition(ports, ref, { from: 'EMPTY_STAGING', to: 'RETIRED', fence, transitionId: 'x5' }),
        'delivery.journal_state_conflict',
      ],
      [
        () => recordFacts(ports, ref, { state: 'VERIFIED_EOF', fence, transitionId: 'x6', patch: {} }),
        'delivery.journal_state_conflict',
      ],
      [
        () =>
          transition(ports, ref, {
            from: 'WRITING_UNKNOWN',
            to: 'VERIFIED_EOF',
            fence,
            transitionId: 'x7',
            patch: { staging: { ...staging, objectId: '999' } },
          }),
        'delivery.fact_conflict',
      ],
      [
        () =>
          recordFacts(ports, ref, {
            state: 'WRITING_UNKNOWN',
            fence,
            transitionId: 'x8',
            patch: { plan: { ...plan, parts: 3 } },
          }),
        'delivery.fact_conflict',
      ],
      [
        () =>
          recordFacts(ports, ref, {
            state: 'WRITING_UNKNOWN',
            fence,
            transitionId: 'x9',
            patch: { parts: { ...parts, digest: 'nope' } },
          }),
        'delivery.fact_invalid',
      ],
      [
        () => transition(ports, ref, { from: 'WRITING_UNKNOWN', to: 'VERIFIED_EOF', fence, transitionId: 'x14' }),
        'delivery.transition_precondition_unmet',
      ],
      [
        () =>
          recordFacts(ports, ref, {
            state: 'WRITING_UNKNOWN',
            fence,
            transitionId: 'x10',
            patch: { checkpoint: {} } as never,
          }),
        'delivery.fact_invalid',
      ],
      [
        () => transition(ports, ref, { from: 'WRITING_UNKNOWN', to: 'VERIFIED_EOF', fence, transitionId: 'sys:begin' }),
        'delivery.transition_id_invalid',
      ],
      [
        () =>
          transition(ports, ref, {
            from: 'WRITING_UNKNOWN',
            to: 'VERIFIED_EOF',
            fence: { ...fence, epoch: 0 },
            transitionId: 'x11',
          }),
        'delivery.fence_invalid',
      ],
      [
        () =>
          transition(
            ports,
            { ...ref, targetId: 'Not A Target' },
            { from: 'WRITING_UNKNOWN', to: 'VERIFIED_EOF', fence, transitionId: 'x12' },
          ),
        'delivery.target_id_invalid',
      ],
      [
        () => transition(ports, ref, { from: 'BOGUS' as JournalState, to: 'VERIFIED_EOF', fence, transitionId: 'x13' }),
        'delivery.illegal_transition',
      ],
    ];
    for (const [attempt, code] of refusals) await expect(attempt()).rejects.toMatchObject({ code });
    await transition(ports, ref, {
      from: 'WRITING_UNKNOWN',
      to: 'VERIFIED_EOF',
      fence,
      transitionId: 'eof',
      patch: { parts },
    });
    const atEof = await snapshot(ports, ref.targetId, [ref.invocationId]);
    await expect(
      transition(ports, ref, { from: 'VERIFIED_EOF', to: 'PUBLISHED', fence, transitionId: 'p' }),
    ).rejects.toMatchObject({ code: 'delivery.transition_precondition_unmet' });
    await expect(advanceCheckpoint(ports, ref, fence)).rejects.toMatchObject({
      code: 'delivery.journal_state_conflict',
    });
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(atEof);
    expect(before).not.toBe(atEof);
  });

  it('SUCCEEDED needs evidence and the checkpoint; the checkpoint needs evidence', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    const fence = grant.fence;
    await transition(ports, ref, { from: 'EMPTY_STAGING', to: 'WRITING_UNKNOWN', fence, transitionId: 'w' });
    await transition(ports, ref, {
      from: 'WRITING_UNKNOWN',
      to: 'VERIFIED_EOF',
      fence,
      transitionId: 'e',
      patch: { parts },
    });
    await transition(ports, ref, {
      from: 'VERIFIED_EOF',
      to: 'PUBLISHED',
      fence,
      transitionId: 'p',
      patch: { publication },
    });
    const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
    await expect(advanceCheckpoint(ports, ref, fence)).rejects.toMatchObject({
      code: 'delivery.transition_precondition_unmet',
    });
    await expect(
      transition(ports, ref, { from: 'PUBLISHED', to: 'SUCCEEDED', fence, transitionId: 's', patch: { evidence } }),
    ).rejects.toMatchObject({
      code: 'delivery.transition_precondition_unmet',
    });
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(before);
    expect(await loadCheckpoint(ports, ref.targetId, 'daily')).toBeUndefined();
  });
});

describe('a write whose own extra leg is stale', () => {
  it('is refused after one resubmission, not every round: its expected version cannot come true, and nothing is written', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    const key = { pk: `test#${ref.invocationId}`, sk: 'capsule' };
    await ports.authority.put('test.put', { ...key, state: 'PREPARED' }, 'absent');
    await ports.authority.update('test.move', key, { version: 1 }, { state: 'MOVED' }); // now version 2
    const before = stores.meter.snapshot()['dynamodb.TransactWriteItems'] ?? 0;
    await expect(
      recordFacts(ports, ref, {
        state: 'EMPTY_STAGING',
        fence: grant.fence,
        transitionId: 'stale-leg',
        patch: {},
        legs: [{ kind: 'check', key, expect: { version: 1 } }],
      }),
    ).rejects.toMatchObject({ name: 'Cutpoint.EffectFailed' });
    // One submit, its conflict, one reload that plans the same legs: stop. (Six before.)
    expect((stores.meter.snapshot()['dynamodb.TransactWriteItems'] ?? 0) - before).toBe(1);
    expect(await journalOf(ports.authority, ref.invocationId).find('stale-leg')).toBeUndefined();
  });
});

describe('proofs live in the transition rule', () => {
  it("CUSTODY_RELEASED and RETIRED without the owned stage's proved absence (or with a proof for another object) are refused by the transition itself; nothing is written, custody stays held", async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    const fence = grant.fence;
    await toPublished(ports, ref, fence);
    await advanceCheckpoint(ports, ref, fence);
    const unmet = { code: 'delivery.transition_precondition_unmet', name: 'Delivery.TransitionPrecondition' };
    const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
    await expect(
      transition(ports, ref, { from: 'SUCCEEDED', to: 'CUSTODY_RELEASED', fence, transitionId: 'r1' }),
    ).rejects.toMatchObject(unmet);
    await expect(
      releaseCustody(ports, ref, {
        from: 'SUCCEEDED',
        to: 'CUSTODY_RELEASED',
        fence,
        transitionId: 'r2',
        patch: { absence: { ...absence, objectId: '999' } },
      }),
    ).rejects.toMatchObject(unmet);
    expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(before);
    expect(await loadCustody(ports, ref.targetId)).toMatchObject({ state: 'HELD', fence });
    // The cleanup proof recorded first (as the cleanup step does), then the release passes.
    await recordFacts(ports, ref, { state: 'SUCCEEDED', fence, transitionId: 'cleanup-proved', patch: { absence } });
    expect(
      (await releaseCustody(ports, ref, { from: 'SUCCEEDED', to: 'CUSTODY_RELEASED', fence, transitionId: 'r3' }))
        .invocation.state,
    ).toBe('CUSTODY_RELEASED');

    const other = await begin(ports);
    await transition(ports, other.ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence: other.grant.fence,
      transitionId: 'w',
      patch: { staging, ownedStagesRecorded: true },
    });
    await transition(ports, other.ref, {
      from: 'WRITING_UNKNOWN',
      to: 'PARTIAL_PROVED',
      fence: other.grant.fence,
      transitionId: 'p',
    });
    const partial = await snapshot(ports, other.ref.targetId, [other.ref.invocationId]);
    await expect(
      releaseCustody(ports, other.ref, {
        from: 'PARTIAL_PROVED',
        to: 'RETIRED',
        fence: other.grant.fence,
        transitionId: 'x',
      }),
    ).rejects.toMatchObject(unmet);
    expect(await snapshot(ports, other.ref.targetId, [other.ref.invocationId])).toBe(partial);
    expect(
      (
        await releaseCustody(ports, other.ref, {
          from: 'PARTIAL_PROVED',
          to: 'RETIRED',
          fence: other.grant.fence,
          transitionId: 'retire',
          patch: { absence },
        })
      ).invocation.state,
    ).toBe('RETIRED');
  });
});

describe('route checkpoint', () => {
  it('moves forward once per invocation, is repeat-safe, and never moves back', async () => {
    const { ports } = stores;
    const targetId = newTarget();
    const later = await begin(ports, targetId, DAY2);
    await toPublished(ports, later.ref, later.grant.fence);
    expect(await advanceCheckpoint(ports, later.ref, later.grant.fence)).toMatchObject({
      moved: true,
      windowEnd: DAY2.end,
      alreadyApplied: false,
    });
    const before = await snapshot(ports, targetId, [later.ref.invocationId]);
    expect(await advanceCheckpoint(ports, later.ref, later.grant.fence)).toMatchObject({
      moved: true,
      windowEnd: DAY2.end,
      alreadyApplied: true,
    });
    expect(await snapshot(ports, targetId, [later.ref.invocationId])).toBe(before);
    await transition(ports, later.ref, {
      from: 'SUCCEEDED',
      to: 'CUSTODY_RELEASED',
      fence: later.grant.fence,
      transitionId: 'r',
      patch: { absence },
    });

    // A backfill of the previous day completes without moving the checkpoint back.
    const earlier = await begin(ports, targetId, DAY1);
    expect(earlier.grant.fence.epoch).toBe(2);
    await toPublished(ports, earlier.ref, earlier.grant.fence);
    const checkpointItem = await ports.authority.get(deliveryKeys.checkpoint(targetId, 'daily'));
    expect(await advanceCheckpoint(ports, earlier.ref, earlier.grant.fence)).toMatchObject({
      moved: false,
      windowEnd: DAY1.end,
    });
    expect(await ports.authority.get(deliveryKeys.checkpoint(targetId, 'daily'))).toEqual(checkpointItem);
    expect(await loadCheckpoint(ports, targetId, 'daily')).toMatchObject({
      windowEnd: DAY2.end,
      invocationId: later.ref.invocationId,
    });
    expect(await loadInvocation(ports, earlier.ref.invocationId)).toMatchObject({
      state: 'SUCCEEDED',
      facts: { checkpoint: { windowEnd: DAY1.end, moved: false } },
    });
  });
});

describe('read side', () => {
  it('unknown, malformed and corrupted invocation ids each exit with their stable code and mutate nothing', async () => {
    const { ports } = stores;
    const { ref, grant } = await begin(ports);
    await expect(loadInvocation(ports, newInvocationId())).rejects.toMatchObject({
      name: 'Delivery.JournalUnavailable',
      code: 'delivery.recovery_journal_unavailable',
    });
    await expect(inspectInvocation(ports, 'inv-not-an-id; DROP TABLE x')).rejects.toMatchObject({
      code: 'delivery.invocation_id_invalid',
    });
    await expect(inspectInvocation(ports, 'inv-not-an-id; DROP TABLE x')).rejects.not.toMatchObject({
      message: expect.stringContaining('DROP'),
    });

    const key = deliveryKeys.invocation(ref.targetId, ref.invocationId);
    const corruptions: Array<Record<string, unknown>> = [
      { state: 'SECRET_STATE_dsn=sqlserver://sa:pw@host' },
      { sealed: { ...grant.invocation.sealed, window: DAY2 } },
      { sealed: { ...grant.invocation.sealed, manifestDigest: 'f'.repeat(64) } },
      { facts: { ownedStagesRecorded: 'yes' } },
      { facts: { ownedStagesRecorded: true, parts: { parts: 0 } } },
      { route: 'Not A Route' },
    ];
    for (const corruption of corruptions) {
      const original = await ports.authority.get(key);
      if (!original) throw new Error('record missing');
      const restore = Object.fromEntries(Object.keys(corruption).map((k) => [k, original[k]]));
      await ports.authority.update('test.corrupt', key, { version: original.version }, corruption);
      const before = await snapshot(ports, ref.targetId, [ref.invocationId]);
      for (const read of [
        () => loadInvocation(ports, ref.invocationId),
        () => inspectInvocation(ports, ref.invocationId),
        () => inspectAll(ports, { targetId: ref.targetId }),
        () => inspectAll(ports),
      ]) {
        const error = await read().then(
          () => undefined,
          (e: unknown) => e as { code?: string; message?: string },
        );
        expect(error?.code).toBe('delivery.recovery_journal_inconsistent');
        expect(error?.message).not.toMatch(/SECRET|sqlserver|Not A Route|yes/);
      }
      await expect(
        transition(ports, ref, { from: 'EMPTY_STAGING', to: 'WRITING_UNKNOWN', fence: grant.fence, transitionId: 'w' }),
      ).rejects.toMatchObject({
        code: 'delivery.recovery_journal_inconsistent',
      });
      await expect(advanceCheckpoint(ports, ref, grant.fence)).rejects.toMatchObject({
        code: 'delivery.recovery_journal_inconsistent',
      });
      expect(await snapshot(ports, ref.targetId, [ref.invocationId])).toBe(before);
      const now = await ports.authority.get(key);
      await ports.authority.update('test.restore', key, { version: now?.version ?? 0 }, restore);
    }
    expect((await loadInvocation(ports, ref.invocationId)).state).toBe('EMPTY_STAGING');
  });

  it('inspect-all lists every invocation and counts the ones that retain custody', async () => {
    const own = await freshStores();
    const { ports } = own;
    expect(await inspectAll(ports)).toEqual({
      items: [],
      kind: 'cutpoint.delivery-recovery-index.v1',
      retained_custody_count: 0,
      schema_version: 1,
    });
    const t1 = newTarget();
    const t2 = newTarget();
    // t1: one released, then one retained in WRITING_UNKNOWN. t2: one retained in EMPTY_STAGING.
    const a = await begin(ports, t1);
    await transition(ports, a.ref, {
      from: 'EMPTY_STAGING',
      to: 'RETIRED',
      fence: a.grant.fence,
      transitionId: 'retire',
      patch: { ownedStagesRecorded: true, staging, absence },
    });
    const b = await begin(ports, t1);
    await transition(ports, b.ref, {
      from: 'EMPTY_STAGING',
      to: 'WRITING_UNKNOWN',
      fence: b.grant.fence,
      transitionId: 'w',
    });
    const c = await begin(ports, t2);

    const all = await inspectAll(ports);
    expect(all.retained_custody_count).toBe(2);
    expect(all.items.map((i) => i.invocation_id)).toEqual([a, b, c].map((x) => x.ref.invocationId).sort());
    const byId = Object.fromEntries(all.items.map((i) => [i.invocation_id, i]));
    expect(byId[a.ref.invocationId]).toMatchObject({ state: 'RETIRED', holds_custody: false, permitted_actions: [] });
    expect(byId[b.ref.invocationId]).toMatchObject({
      state: 'WRITING_UNKNOWN',
      holds_custody: true,
      permitted_actions: ['reconcile'],
      diagnostic_code: 'delivery.writing_unknown',
    });
    // No stage recorded yet: retire is still offered (it observes the stage by its derived name).
    expect(byId[c.ref.invocationId]).toMatchObject({
      state: 'EMPTY_STAGING',
      holds_custody: true,
      permitted_actions: ['retire'],
      diagnostic_code: 'delivery.empty_staging',
    });
    expect((await inspectAll(ports, { targetId: t1 })).retained_custody_count).toBe(1);
    expect((await inspectAll(ports, { targetId: t2 })).items.map((i) => i.invocation_id)).toEqual([c.ref.invocationId]);
    expect((await listInvocations(ports, { targetId: newTarget() })).length).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------
// Fault matrices: every fault kind at each journal cut point, then a retry, then invariants.

describe('fault matrix', () => {
  it.each(FAULT_KINDS)(
    '%s at delivery.journal.transition: applied exactly once after a retry, or not at all',
    async (kind) => {
      const { ports, faults } = stores;
      const { ref, grant } = await begin(ports);
      const request = {
        from: 'EMPTY_STAGING',
        to: 'WRITING_UNKNOWN',
        fence: grant.fence,
        transitionId: 'w',
        patch: { staging },
      } as const;
      const first = await firstAttempt(faults, DELIVERY_CUT_POINTS.journalTransition, kind, () =>
        transition(ports, ref, request),
      );
      expect(first).toBe(EXPECTED_FIRST[kind]);
      const afterFirst = await loadInvocation(ports, ref.invocationId);
      const appliedFirst = kind === 'crash-after' || first === 'ok';
      expect(afterFirst.state).toBe(appliedFirst ? 'WRITING_UNKNOWN' : 'EMPTY_STAGING');
      expect(await expectJournalIntact(ports, ref)).toEqual(appliedFirst ? ['sys:begin', 'w'] : ['sys:begin']);

      const retry = await transition(ports, ref, request);
      expect(retry.alreadyApplied).toBe(appliedFirst);
      expect(await expectJournalIntact(ports, ref)).toEqual(['sys:begin', 'w']);
      expect(await loadInvocation(ports, ref.invocationId)).toMatchObject({
        state: 'WRITING_UNKNOWN',
        facts: { staging },
      });
      expect(await loadCustody(ports, ref.targetId)).toMatchObject({ state: 'HELD', fence: grant.fence });
    },
  );

  it.each(FAULT_KINDS)('%s at delivery.checkpoint.advance: the checkpoint moves once, journaled once', async (kind) => {
    const { ports, faults } = stores;
    const { ref, grant } = await begin(ports);
    await toPublished(ports, ref, grant.fence);
    const first = await firstAttempt(faults, DELIVERY_CUT_POINTS.checkpointAdvance, kind, () =>
      advanceCheckpoint(ports, ref, grant.fence),
    );
    expect(first).toBe(EXPECTED_FIRST[kind]);
    const appliedFirst = kind === 'crash-after' || first === 'ok';
    expect(await loadCheckpoint(ports, ref.targetId, 'daily')).toEqual(
      appliedFirst ? expect.objectContaining({ windowEnd: DAY1.end }) : undefined,
    );

    const retry = await advanceCheckpoint(ports, ref, grant.fence);
    expect(retry).toMatchObject({ moved: true, windowEnd: DAY1.end, alreadyApplied: appliedFirst });
    const ids = await expectJournalIntact(ports, ref);
    expect(ids.filter((id) => id === 'sys:checkpoint')).toHaveLength(1);
    expect(await loadCheckpoint(ports, ref.targetId, 'daily')).toMatchObject({
      windowEnd: DAY1.end,
      invocationId: ref.invocationId,
      version: 1,
    });
    expect(await loadInvocation(ports, ref.invocationId)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it.each(FAULT_KINDS)(
    '%s at delivery.custody.release: journal and custody release land together, once',
    async (kind) => {
      const { ports, faults } = stores;
      const { ref, grant } = await begin(ports);
      const request = {
        from: 'EMPTY_STAGING',
        to: 'RETIRED',
        fence: grant.fence,
        transitionId: 'retire',
        patch: { ownedStagesRecorded: true, staging, absence },
      } as const;
      const first = await firstAttempt(faults, DELIVERY_CUT_POINTS.custodyRelease, kind, () =>
        transition(ports, ref, request),
      );
      expect(first).toBe(EXPECTED_FIRST[kind]);
      const appliedFirst = kind === 'crash-after' || first === 'ok';
      const custody = await loadCustody(ports, ref.targetId);
      const state = (await loadInvocation(ports, ref.invocationId)).state;
      expect([state, custody?.state]).toEqual(appliedFirst ? ['RETIRED', 'RELEASED'] : ['EMPTY_STAGING', 'HELD']);

      expect((await transition(ports, ref, request)).alreadyApplied).toBe(appliedFirst);
      expect(await expectJournalIntact(ports, ref)).toEqual(['sys:begin', 'retire']);
      expect(await loadCustody(ports, ref.targetId)).toMatchObject({ state: 'RELEASED', epoch: 1 });
      expect((await inspectAll(ports, { targetId: ref.targetId })).retained_custody_count).toBe(0);
    },
  );
});
