import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeHandler } from '../../functions/quality/observe-target.js';
import { settingsClause } from '../../src/adapters/clickhouse/publication-sql.js';
import { acquireCustody } from '../../src/delivery/custody.js';
import { deliveryKeys, journalOf } from '../../src/delivery/journal/keys.js';
import { readInvocation } from '../../src/delivery/journal/records.js';
import { incompleteTransitionIdOf, releaseGuard } from '../../src/quality/observe-guard.js';
import { readOnlySettingsOf } from '../../src/adapters/reader-process/probe-worker.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import { completionDocument, readCompletionDocument } from '../../src/domain/quality/evidence.js';
import { capsuleUpdateLeg, readCapsule } from '../../src/quality/capsule-store.js';
import { observeTarget, observeTargetStep } from '../../src/quality/steps/observe-target.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { publicationManifest } from '../support/publication-world.js';
import { replaceObject } from '../support/replace-object.js';

let world: ObserveWorld;
beforeAll(async () => {
  world = await openObserveWorld();
}, 180_000);
afterAll(async () => {
  await world?.close();
});

const v2 = async (ports: Parameters<typeof readCapsule>[0], ref: Parameters<typeof readCapsule>[1]) => {
  const capsule = await readCapsule(ports, ref);
  if (!capsule || capsule.schema !== 2) throw new Error('expected a v2 capsule');
  return capsule;
};

describe('ObserveTarget (docs/rules.md#bounded-reader): the original probes on the published generation, under the reader guard', () => {
  it('COMPLETE: probes pass on C, one persist-and-release, completion.json version = the capsule version the COMPLETE write produced (I4); the seal is checked from the manifest given BEFORE the guard; lastObservation keeps code, run, version held, generation read', async () => {
    const { deps, begun, dispatched, ref, route, table } = await world.published();
    const before = await v2(deps.ports, ref);
    expect(before).toMatchObject({ state: 'PREPARED' });
    expect(dispatched.known).toBeTruthy();
    // The flow hands the exact manifest text and selector: recomputed, another manifest is refused with nothing written.
    const sealed = { manifestText: publicationManifest({ table }), selector: '/config/publish.yaml#daily' };
    const changed = { ...sealed, manifestText: `${sealed.manifestText}# edited after the seal\n` };
    const journal = await readInvocation(deps.ports, ref);
    await expect(
      observeTargetStep({ ...dispatched, ...changed }, deps, await world.reader(deps)),
    ).rejects.toMatchObject({
      name: 'Delivery.AuthorityMismatch',
      code: 'delivery.recovery_authority_mismatch',
      message: expect.stringContaining('manifestDigest'),
    });
    expect(await v2(deps.ports, ref)).toEqual(before);
    expect((await readInvocation(deps.ports, ref)).version).toBe(journal.version);
    // As the flow runs it: on the journal state Dispatch carried, with the sealed manifest.
    const out = await observeTargetStep({ ...dispatched, ...sealed }, deps, await world.reader(deps));
    expect(out).toMatchObject({
      state: 'PUBLISHED',
      acted: true,
      capsuleState: 'COMPLETE',
      outcome: 'COMPLETE',
      remoteTermination: 'not_applicable',
    });

    const capsule = await v2(deps.ports, ref);
    expect(capsule.reader).toBeUndefined();
    expect(capsule.state).toBe('COMPLETE');
    const c = candidateUuidOf(ref.invocationId);
    expect(capsule.lastObservation).toEqual({
      runId: capsule.completion!.runId,
      outcome: 'COMPLETE',
      code: 'quality.complete',
      at: capsule.completion!.at,
      capsuleVersion: before.version + 1,
      generation: { before: c, after: c },
      remoteTermination: 'not_applicable',
    });
    // acquire (v+1), persist COMPLETE (v+2 = completion.version), evidence fact (v+3).
    expect(capsule.completion?.version).toBe(before.version + 2);
    expect(capsule.version).toBe(before.version + 3);
    const key = qualityEvidenceKeyOf(route, ref.invocationId, 'completion');
    expect(capsule.completion?.evidence?.key).toBe(key);
    const stored = await deps.ports.objects.get(key);
    const doc = readCompletionDocument(
      Buffer.from(stored!.bytes).toString('utf8'),
      capsule.completion!.evidence!.sha256,
      capsule.coreDigest,
    );
    expect(doc).toMatchObject({ version: before.version + 2, candidateUuid: candidateUuidOf(ref.invocationId) });
    expect(doc.results.every((r) => r.result === 'PASSED')).toBe(true);

    // A re-run does nothing: COMPLETE is final, its evidence recorded.
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      acted: false,
      capsuleState: 'COMPLETE',
    });
    expect((await v2(deps.ports, ref)).version).toBe(capsule.version);
    expect((await readInvocation(deps.ports, ref)).facts.dispatch?.count).toBe(1);
  });
});

// G1–G10, T3 and K2 are governance acceptance cases (docs/testing.md#governance-acceptance).
describe('ObserveTarget: deadline, guard, zombie, terminal failure, rollback', () => {
  it('G1 + G5: a probe slower than the deadline ⇒ revoke, kill, reap, TARGET_PENDING and release in one write, remote termination UNVERIFIED; a later identical invocation observes again ⇒ COMPLETE', async () => {
    const { deps, begun, ref } = await world.published();
    const before = await v2(deps.ports, ref);
    process.env.CUTPOINT_FAULTS = 'quality.target.probe:delay=60000';
    try {
      // The child inherits CUTPOINT_FAULTS: its first probe sleeps past the deadline.
      await expect(observeTargetStep(begun, deps, await world.reader(deps, 10_000))).rejects.toMatchObject({
        name: 'Quality.TargetPending',
        code: 'quality.target_pending',
      });
    } finally {
      delete process.env.CUTPOINT_FAULTS;
    }
    const pending = await v2(deps.ports, ref);
    expect(pending).toMatchObject({
      state: 'TARGET_PENDING',
      lastObservation: { outcome: 'TARGET_PENDING', errorClass: 'DEADLINE', remoteTermination: 'UNVERIFIED' },
    });
    expect(pending.reader).toBeUndefined();
    expect(pending.version).toBe(before.version + 2); // acquire, then ONE persist-and-release

    const again = await observeTarget(begun, deps, await world.reader(deps));
    expect(again).toMatchObject({ capsuleState: 'COMPLETE', outcome: 'COMPLETE', remoteTermination: 'not_applicable' });
    const complete = await v2(deps.ports, ref);
    expect(complete).toMatchObject({ state: 'COMPLETE', runs: before.runs });
    expect(complete.reader).toBeUndefined();
    expect(complete.completion?.evidence).toBeDefined();
  });

  it('G3: the pending persist answer lost ⇒ proved by the reload (released); lost every time ⇒ Quality.Incomplete, the guard kept', async () => {
    const { deps, begun, ref } = await world.published();
    // Through the Lambda handler, whose context has only the reserve left: the deadline is
    // min(now + 240 s, now + remaining - 30 s) = now, so the reader never starts (not_applicable).
    const handler = makeHandler({ delivery: () => Promise.resolve(deps) });
    world.stores.faults.arm('quality.pending.commit:lose-response');
    process.env.CH_PUB_URL = world.host.url;
    try {
      await expect(handler(begun, { getRemainingTimeInMillis: () => 30_000 })).rejects.toMatchObject({
        name: 'Quality.TargetPending',
      });
    } finally {
      world.stores.faults.disarm();
      delete process.env.CH_PUB_URL;
    }
    const pending = await v2(deps.ports, ref);
    expect(pending).toMatchObject({
      state: 'TARGET_PENDING',
      lastObservation: {
        errorClass: 'DEADLINE',
        code: 'quality.target_observation_timeout',
        remoteTermination: 'not_applicable',
      },
    });
    expect(pending.reader).toBeUndefined();

    world.stores.faults.arm('quality.pending.commit:lose-request*');
    try {
      await expect(observeTarget(begun, deps, await world.reader(deps, 0))).rejects.toMatchObject({
        name: 'Quality.Incomplete',
        code: 'quality.incomplete',
      });
    } finally {
      world.stores.faults.disarm();
    }
    const kept = await v2(deps.ports, ref);
    expect(kept.state).toBe('TARGET_PENDING');
    expect(kept.reader).toBeDefined();
    expect(kept.lastObservation).toEqual(pending.lastObservation);
    // Nobody clears it: the next observation is refused by the guard.
    await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.ReaderGuardHeld',
    });
  });

  it('G2: the reader process end not observed within the reap bound (quality.worker.reap) ⇒ Quality.Incomplete, its result never persisted, the guard kept', async () => {
    const { deps, begun, ref } = await world.published();
    const before = await v2(deps.ports, ref);
    world.stores.faults.arm('quality.worker.reap:fail');
    try {
      await expect(observeTargetStep(begun, deps, await world.reader(deps))).rejects.toMatchObject({
        name: 'Quality.Incomplete',
        code: 'quality.incomplete',
      });
    } finally {
      world.stores.faults.disarm();
    }
    const kept = await v2(deps.ports, ref);
    expect(kept).toMatchObject({ state: 'PREPARED', version: before.version + 1 });
    expect(kept.reader).toBeDefined();
    expect(kept.lastObservation).toBeUndefined();
    // The journal records the INCOMPLETE observation (best effort), without touching the guard.
    expect(
      await journalOf(deps.ports.authority, ref.invocationId).find(
        incompleteTransitionIdOf(ref.invocationId, kept.reader!.token),
      ),
    ).toBeDefined();
  });

  it('G4: a crash right after the acquire leaves the guard held; a second observe ⇒ Quality.ReaderGuardHeld, nothing written', async () => {
    const { deps, begun, ref } = await world.published();
    world.stores.faults.arm('quality.reader.acquire:crash-after');
    try {
      await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
        name: 'Cutpoint.WorkerCrashed',
      });
    } finally {
      world.stores.faults.disarm();
    }
    const held = await v2(deps.ports, ref);
    expect(held.state).toBe('PREPARED');
    expect(held.reader).toBeDefined();
    const journal = await readInvocation(deps.ports, ref);
    await expect(observeTargetStep(begun, deps, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.ReaderGuardHeld',
      code: 'quality.reader_guard_held',
    });
    expect(await v2(deps.ports, ref)).toEqual(held);
    expect((await readInvocation(deps.ports, ref)).version).toBe(journal.version);

    // G8: a recovery takeover (epoch + 1) leaves the guard untouched; its new session cannot
    // observe past it nor release it, even holding the token (read off the item as a seam).
    const takeover = await acquireCustody(deps.ports, ref, 'recovery-g8');
    expect(takeover.fence.epoch).toBe(held.reader!.fence.epoch + 1);
    expect(await v2(deps.ports, ref)).toEqual(held);
    await expect(
      observeTarget({ ...begun, fence: takeover.fence }, deps, await world.reader(deps)),
    ).rejects.toMatchObject({ name: 'Quality.ReaderGuardHeld' });
    const stolen = {
      ref,
      guard: held.reader!,
      capsule: held,
      fence: takeover.fence,
      known: { invocation: takeover.invocation },
    };
    await expect(releaseGuard(deps.ports, stolen, 'a takeover')).rejects.toMatchObject({
      name: 'Quality.ReaderGuardHeld',
    });
    expect(await v2(deps.ports, ref)).toEqual(held);
  });

  it('G7: two concurrent observes of one operation ⇒ exactly one acquires; the other is refused by the guard with no write of its own', async () => {
    const { deps, begun, ref } = await world.published();
    const before = await v2(deps.ports, ref);
    // The holder reads only once the other observe has ended — a gate, not a deadline, so the
    // other meets the guard however slow the machine is. Both reach read() only if both
    // acquired: then the gate opens for both, and the assertions below fail.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reads = 0;
    const gated = async () => {
      const real = await world.reader(deps);
      const read: typeof real.reader.read = async (request) => {
        if (++reads === 2) open();
        await gate;
        return real.reader.read(request);
      };
      return { ...real, reader: { ...real.reader, read } };
    };
    const runs = [observeTarget(begun, deps, await gated()), observeTarget(begun, deps, await gated())];
    for (const run of runs) run.then(open, open);
    const settled = await Promise.allSettled(runs);
    const fulfilled = settled.filter((r) => r.status === 'fulfilled');
    const rejected = settled.filter((r) => r.status === 'rejected');
    expect(reads).toBe(1);
    expect(fulfilled).toHaveLength(1);
    expect(fulfilled[0]).toMatchObject({ value: { acted: true, capsuleState: 'COMPLETE' } });
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ reason: { name: 'Quality.ReaderGuardHeld' } });
    // acquire, persist COMPLETE and release, the evidence fact: the holder's three writes only.
    const after = await v2(deps.ports, ref);
    expect(after.version).toBe(before.version + 3);
    expect(after.reader).toBeUndefined();

    // Released: a later identical invocation is not refused by the guard (COMPLETE is final: nothing to do).
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      acted: false,
      capsuleState: 'COMPLETE',
    });
  });

  it('G6: a zombie whose guard was taken over persists late with its stale token ⇒ refused, nothing written', async () => {
    const { deps, begun, ref } = await world.published();
    const real = await world.reader(deps);
    let taken: Awaited<ReturnType<typeof v2>> | undefined;
    const zombie = {
      ...real,
      reader: {
        async read(request: Parameters<typeof real.reader.read>[0]) {
          const outcome = await real.reader.read(request);
          // Meanwhile (a test seam on the raw item): the guard now belongs to another run B.
          const mine = await v2(deps.ports, ref);
          await deps.ports.authority.transact('test.seam', [
            capsuleUpdateLeg(ref, mine, { reader: { ...mine.reader!, token: 'b'.repeat(32), runId: 'run-b' } }),
          ]);
          taken = await v2(deps.ports, ref);
          return outcome;
        },
      },
    };
    await expect(observeTarget(begun, deps, zombie)).rejects.toMatchObject({ name: 'Quality.ReaderGuardHeld' });
    expect(await v2(deps.ports, ref)).toEqual(taken);
    expect(taken).toMatchObject({ state: 'PREPARED', reader: { token: 'b'.repeat(32) } });
  });

  it('T3: a row of the published table altered between dispatch and observe ⇒ FAILED, final', async () => {
    const { deps, begun, ref, table } = await world.published();
    await world.ch.client.command({
      query: `ALTER TABLE pub.${table} UPDATE amount = -1 WHERE event_id IN (SELECT event_id FROM pub.${table} LIMIT 1) SETTINGS mutations_sync = 2`,
    });
    await expect(observeTargetStep(begun, deps, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.Failed',
      code: 'quality.failed',
    });
    const failed = await v2(deps.ports, ref);
    expect(failed).toMatchObject({
      state: 'FAILED',
      failure: { probes: ['assertion:no_negative_amounts'] },
      lastObservation: { outcome: 'FAILED' },
    });
    expect(failed.reader).toBeUndefined();
    expect(failed.completion).toBeUndefined();
    // Final: a re-run observes nothing and writes nothing.
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      acted: false,
      capsuleState: 'FAILED',
    });
    expect(await v2(deps.ports, ref)).toEqual(failed);
  });

  it('G10: completion.json present while the capsule is not COMPLETE ⇒ quality.authority_version_rollback before the guard is taken: no evaluation, the capsule not written at all', async () => {
    const { deps, begun, ref, route } = await world.published();
    const before = await v2(deps.ports, ref);
    const key = qualityEvidenceKeyOf(route, ref.invocationId, 'completion');
    // What a restore leaves behind: the operation's own completion document, the item back at PREPARED.
    const witness = completionDocument({
      invocationId: ref.invocationId,
      coreDigest: before.coreDigest,
      candidateUuid: before.generation.candidateUuid,
      version: before.version + 2,
      at: '2026-11-05T02:00:00.000Z',
      runId: 'run-earlier',
      results: [],
    });
    await deps.ports.objects.put('test.seam', key, Buffer.from(witness.bytes), { sha256: witness.sha256 });
    await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.AuthorityRollback',
      code: 'quality.authority_version_rollback',
    });
    expect(await v2(deps.ports, ref)).toEqual(before);
    // An object under the key that is no completion document of this operation: malformed evidence, nothing written either.
    expect(
      await replaceObject(deps.ports.objects, key, Buffer.from('{"kind":"cutpoint.quality-completion.v1"}'), {
        sha256: 'x',
      }),
    ).toBe('APPLIED');
    await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
      name: 'Quality.EvidenceInvalid',
      code: 'quality.evidence_malformed',
    });
    expect(await v2(deps.ports, ref)).toEqual(before);
  });
});

/**
 * "Only after exact commit and generation checks" (docs/publication.md): the capsule
 * reaches COMPLETE only on the publication the journal proves and the generation it sealed.
 * Each check alone is what refuses here (the reader is counted: no probe runs), so removing
 * it makes its test fail.
 */
describe('ObserveTarget: the commit check and the generation check, each before any probe', () => {
  /** The real reader, its reads counted (not replaced). */
  async function countingReader(deps: Parameters<typeof world.reader>[0]) {
    const tr = await world.reader(deps);
    const counted = {
      reads: 0,
      reader: {
        ...tr,
        reader: { read: (request: Parameters<typeof tr.reader.read>[0]) => (counted.reads++, tr.reader.read(request)) },
      },
    };
    return counted;
  }

  async function refusedBeforeAnyProbe(
    mutate: (op: Awaited<ReturnType<typeof world.published>>) => Promise<void>,
  ): Promise<void> {
    const op = await world.published();
    const before = await v2(op.deps.ports, op.ref);
    await mutate(op);
    const counted = await countingReader(op.deps);
    await expect(observeTarget(op.begun, op.deps, counted.reader)).rejects.toMatchObject({
      name: 'Quality.GenerationChanged',
      code: 'quality.generation_changed',
    });
    expect(counted.reads).toBe(0);
    const after = await v2(op.deps.ports, op.ref);
    expect({
      state: after.state,
      reader: after.reader,
      lastObservation: after.lastObservation,
      completion: after.completion,
    }).toEqual({ state: before.state, reader: undefined, lastObservation: undefined, completion: undefined });
  }

  it('the commit check: a journal whose publication fact names another generation than the capsule seals is refused', async () => {
    await refusedBeforeAnyProbe(async ({ deps, ref }) => {
      // TEST SEAM: the journal's publication fact rewritten to another object (no writer does this).
      const key = deliveryKeys.invocation(ref.targetId, ref.invocationId);
      const item = await deps.ports.authority.get(key);
      const facts = item!.facts as { publication: { stagingObjectId: string } };
      const outcome = await deps.ports.authority.update(
        'test.seam',
        key,
        { version: item!.version },
        {
          facts: {
            ...facts,
            publication: { ...facts.publication, stagingObjectId: '99999999-9999-4999-8999-999999999999' },
          },
        },
      );
      expect(outcome.status).toBe('APPLIED');
    });
  });

  it('the generation check: the table under the target name is C by UUID but no longer carries our owner marker', async () => {
    await refusedBeforeAnyProbe(async ({ table }) => {
      await world.ch.client.command({ query: `ALTER TABLE pub.${table} MODIFY COMMENT 'not cutpoint'` });
    });
  });

  it('the generation check: the predecessor is back under the target name (an EXCHANGE by someone else)', async () => {
    await refusedBeforeAnyProbe(async ({ table, ref }) => {
      await world.ch.client.command({
        query: `EXCHANGE TABLES pub.${table} AND pub.cutpoint_stg_${ref.invocationId.slice(4, 24)}_c`,
      });
    });
  });
});

describe('ObserveTarget: a reader that cannot write', () => {
  it('G9: the reader cannot write: on the ClickHouse host over HTTP, an INSERT and DDL carrying the reader settings (readonly = 2) are refused by the server; the table is unchanged', async () => {
    await world.ch.client.command({ query: 'CREATE TABLE pub.g9 (id UInt64) ENGINE = MergeTree ORDER BY id' });
    await world.ch.client.command({ query: 'INSERT INTO pub.g9 VALUES (1), (2)' });
    const readOnly = readOnlySettingsOf(5);
    // The same settings as request parameters (URL settings take text values).
    const asRequest = Object.fromEntries(Object.entries(readOnly).map(([k, v]) => [k, String(v)]));
    const refused = { message: expect.stringMatching(/readonly/i) };
    await expect(
      world.ch.client.command({ query: `INSERT INTO pub.g9 SELECT id + 10 FROM pub.g9 ${settingsClause(readOnly)}` }),
    ).rejects.toMatchObject(refused);
    await expect(
      world.ch.client.command({ query: 'INSERT INTO pub.g9 VALUES (3)', clickhouse_settings: asRequest }),
    ).rejects.toMatchObject(refused);
    await expect(
      world.ch.client.command({ query: 'DROP TABLE pub.g9', clickhouse_settings: asRequest }),
    ).rejects.toMatchObject(refused);
    await expect(
      world.ch.client.command({
        query: 'CREATE TABLE pub.g9_new (id UInt64) ENGINE = Memory',
        clickhouse_settings: asRequest,
      }),
    ).rejects.toMatchObject(refused);
    const rows = await (
      await world.ch.client.query({
        query: 'SELECT groupArray(id) AS ids FROM (SELECT id FROM pub.g9 ORDER BY id)',
        format: 'JSONEachRow',
      })
    ).json<{ ids: string[] }>();
    expect(rows[0]!.ids.map(Number)).toEqual([1, 2]);
    expect(await world.uuidOf('g9_new')).toBeUndefined();
  });
});

describe('ObserveTarget: observation failures and the completion cut points', () => {
  it('K2: a structured Code 999 (KEEPER_EXCEPTION) during the target probe ⇒ TARGET_PENDING with its class, the operation retained, one dispatch', async () => {
    // A real server error through the driver path, raised on the target only (the candidate has no -999 row).
    // Measured: inside the probe's wrapping subquery the server reports throwIf's own text, not the custom
    // "No node" message, so the structured 999 classifies as KEEPER_OTHER (never by text alone).
    const keeper =
      "SELECT count() FROM {relation} WHERE amount < 0 AND throwIf(amount = -999, 'No node, path: /cutpoint', toInt32(999)) = 0 SETTINGS allow_custom_error_code_in_throwif = 1";
    const { deps, begun, ref, table } = await world.published({ assertion: keeper });
    await world.ch.client.command({
      query: `ALTER TABLE pub.${table} UPDATE amount = -999 WHERE event_id IN (SELECT event_id FROM pub.${table} LIMIT 1) SETTINGS mutations_sync = 2`,
    });
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      state: 'PUBLISHED',
      capsuleState: 'TARGET_PENDING',
      outcome: 'TARGET_PENDING',
    });
    const pending = await v2(deps.ports, ref);
    expect(pending).toMatchObject({
      state: 'TARGET_PENDING',
      lastObservation: {
        errorClass: 'KEEPER_OTHER',
        code: 'quality.target_observation_keeper_other',
        remoteTermination: 'UNVERIFIED',
      },
    });
    expect(pending.reader).toBeUndefined();
    const record = await readInvocation(deps.ports, ref);
    expect(record.state).toBe('PUBLISHED');
    expect(record.facts.dispatch?.count).toBe(1);
  });

  it('a crash between COMPLETE and its evidence fact: the re-run writes the deterministic completion.json and records it; once recorded nothing is written again', async () => {
    const { deps, begun, ref, route } = await world.published();
    world.stores.faults.arm('quality.completion.record:crash-before');
    try {
      await expect(observeTarget(begun, deps, await world.reader(deps))).rejects.toMatchObject({
        name: 'Cutpoint.WorkerCrashed',
      });
    } finally {
      world.stores.faults.disarm();
    }
    const complete = await v2(deps.ports, ref);
    expect(complete.state).toBe('COMPLETE');
    expect(complete.completion?.evidence).toBeUndefined();
    const key = qualityEvidenceKeyOf(route, ref.invocationId, 'completion');
    const first = await deps.ports.objects.get(key);
    expect(first).toBeDefined();

    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      acted: true,
      capsuleState: 'COMPLETE',
      outcome: 'COMPLETE',
    });
    const recorded = await v2(deps.ports, ref);
    expect(recorded.completion).toMatchObject({ version: complete.completion!.version, evidence: { key } });
    expect(Buffer.from((await deps.ports.objects.get(key))!.bytes)).toEqual(Buffer.from(first!.bytes));
    expect(await observeTarget(begun, deps, await world.reader(deps))).toMatchObject({
      acted: false,
      capsuleState: 'COMPLETE',
    });
    expect((await v2(deps.ports, ref)).version).toBe(recorded.version);
  });
});
