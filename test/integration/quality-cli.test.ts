// Over ~300 lines (686), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { begin } from '../../src/delivery/steps/begin.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { deliveryKeys, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { qualityEvidenceKeyOf } from '../../src/domain/delivery/identifiers.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import type { CapsuleV2 } from '../../src/domain/quality/capsule.js';
import { completionDocument } from '../../src/domain/quality/evidence.js';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { freePort } from '../../src/local/free-port.js';
import { dispatch } from '../../src/publication/steps/dispatch.js';
import { fillCandidate } from '../../src/publication/steps/fill-candidate.js';
import { qualityKeys, readCapsule } from '../../src/quality/capsule-store.js';
import { putEvidence } from '../../src/quality/evidence.js';
import { inspectQuality, readOnlyPorts } from '../../src/quality/inspect.js';
import { prepareCapsule } from '../../src/quality/steps/prepare-capsule.js';
import { openObserveWorld, type ObserveWorld } from '../fixtures/quality/observe-world.js';
import { stepsThrough } from '../support/delivery-steps.js';
import { newInvocationId } from '../support/delivery-world.js';
import { openPublicationWorld, publicationManifest, type PublicationWorld } from '../support/publication-world.js';

/**
 * `cutpoint quality inspect` / `inspect-all` (docs/rules.md#quality-commands, U9, F5) as an operator runs them:
 * the CLI's `main` in this process against a local runtime of its own (the process is not
 * the subject: cli.test.ts spawns the bin), stdout one JSON document, stderr `<code>: <message>`,
 * exit 0/1/2. Operations are brought to their states by the real steps (begin … verify-eof,
 * fillCandidate, prepareCapsule, dispatch on embedded ClickHouse) writing to the CLI
 * runtime's authority table and bucket. States only later steps (observe, not in this
 * branch) or a loss can reach are written directly, and each such test says so.
 */

let world: PublicationWorld;
let runtime: CliRuntime;
/** The ClickHouse host of the diagnose / observe / replay tests, started beside the rest. */
let host: ObserveWorld;
beforeAll(async () => {
  [runtime, world, host] = await Promise.all([
    startCliRuntime('quality-cli', publicationManifest()),
    openPublicationWorld(),
    openObserveWorld(),
  ]);
}, 180_000);
afterAll(async () => {
  await Promise.all([world?.close(), host?.close()]);
  await runtime?.stop();
});

const cutpoint = (argv: string[]): Promise<CliRun> =>
  runCutpointInProcess(argv, { cwd: runtime.root, env: { CUTPOINT_STATE_DIR: runtime.stateDir } });

function json(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Exit 1, empty stdout, exactly one `<code>: <message>` line. */
function refused(r: CliRun, code: string): void {
  expect(r, r.stderr).toMatchObject({ code: 1, stdout: '' });
  const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('cutpoint: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]?.startsWith(`${code}: `), lines[0]).toBe(true);
}

let tables = 0;
interface Operation {
  deps: DeliveryDeps;
  begun: Awaited<ReturnType<typeof begin>>;
  ref: InvocationRef;
  table: string;
  predecessor: string;
}

/** A fresh target table; begin and the real steps through VerifyEof (and the candidate unless `through: 'begin'`). */
async function operation(options: { assertion?: string; through?: 'begin' | 'candidate' } = {}): Promise<Operation> {
  const table = `events_${++tables}`;
  await world.createTarget(table);
  const manifestText = publicationManifest({ ...options, table });
  const deps: DeliveryDeps = { ...world.deps(manifestText), ports: runtime.ports };
  const begun = await begin(world.beginInput(newInvocationId(), manifestText), deps);
  const predecessor = (await world.uuidOf(table)) as string;
  if (options.through !== 'begin') {
    await stepsThrough(begun, deps);
    expect(await fillCandidate(begun, deps)).toMatchObject({ state: 'VERIFIED_EOF', acted: true });
  }
  return { deps, begun, ref: { targetId: begun.targetId, invocationId: begun.invocationId }, table, predecessor };
}

async function published(): Promise<Operation> {
  const op = await operation();
  await prepareCapsule(op.begun, op.deps);
  expect(await dispatch(op.begun, op.deps)).toMatchObject({ state: 'PUBLISHED' });
  return op;
}

const capsuleOf = async (op: Pick<Operation, 'ref'>): Promise<CapsuleV2> =>
  (await readCapsule(runtime.ports, op.ref)) as CapsuleV2;

/** No UUID of the operation and no reader token in what the command printed. */
function assertRedacted(text: string, op: Pick<Operation, 'ref' | 'predecessor'>, secrets: string[] = []): void {
  for (const s of [candidateUuidOf(op.ref.invocationId), op.predecessor, ...secrets]) expect(text).not.toContain(s);
  expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  expect(text).not.toContain('token');
}

/** Every item of the authority table's partitions an operation touches, and its evidence objects, as text. */
async function snapshot(op: Pick<Operation, 'ref'>): Promise<string> {
  const a = runtime.ports.authority;
  const { targetId, invocationId } = op.ref;
  const items = await Promise.all([
    a.query(`target#${targetId}`, 'c'),
    a.query(`target#${targetId}`, 'b'),
    a.query(deliveryKeys.invocationsOf(targetId), 'inv#'),
    a.query(deliveryKeys.journal(invocationId), 'seq#'),
    a.query(deliveryKeys.journal(invocationId), 'tx#'),
    a.query(qualityKeys.capsulesOf(targetId), 'capsule#'),
    a.get(deliveryKeys.pointer(invocationId)),
  ]);
  const objects = await runtime.ports.objects.list(
    qualityEvidenceKeyOf('daily', invocationId, 'prepared').replace(/prepared\.json$/, ''),
  );
  return JSON.stringify({ items, objects });
}

describe('cutpoint quality inspect / inspect-all', () => {
  it('inspect-all on an empty journal: no items, both counts 0', async () => {
    expect(json(await cutpoint(['quality', 'inspect-all', '--format', 'json']))).toEqual({
      items: [],
      kind: 'cutpoint.quality-governance-index.v1',
      retained_custody_count: 0,
      retained_governance_count: 0,
      schema_version: 1,
    });
  });

  it('PREPARED before dispatch: resume only, governance pending, commit not proven; digests only, keys sorted; nothing written', async () => {
    const op = await operation();
    await prepareCapsule(op.begun, op.deps);
    const before = await snapshot(op);
    const r = await cutpoint(['quality', 'inspect', op.ref.invocationId, '--format', 'json']);
    const doc = json(r);
    expect(doc).toMatchObject({
      kind: 'cutpoint.quality-governance.v1',
      schema_version: 1,
      invocation_id: op.ref.invocationId,
      target_id: op.ref.targetId,
      route: 'daily',
      journal_state: 'VERIFIED_EOF',
      capsule_state: 'PREPARED',
      capsule_version: 2,
      diagnostic_code: 'quality.prepared',
      permitted_actions: ['resume'],
      dispatch_count: 0,
      holds_custody: true,
      reader_guard: { held: false },
      replay_details: {
        target_commit: 'not_proven',
        governance: 'pending',
        current_run_id: 'unknown',
        last_observation: null,
      },
      replay_window: { closed: false, ends_at: null, reason: null },
    });
    const digests = doc.digests as Record<string, string>;
    expect(Object.keys(digests)).toEqual(['admission', 'generation', 'immutable_core', 'inventory', 'policy']);
    for (const d of Object.values(digests)) expect(d).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(r.stdout).toBe(`${JSON.stringify(sortedDeep(doc), null, 2)}\n`);
    assertRedacted(r.stdout, op);
    // Without --format the one format is json too.
    expect(json(await cutpoint(['quality', 'inspect', op.ref.invocationId]))).toEqual(doc);
    expect(await snapshot(op)).toBe(before);
  });

  it('PUBLISHED with the capsule PREPARED: publication proven, governance still pending, observe only', async () => {
    const op = await published();
    const r = await cutpoint(['quality', 'inspect', op.ref.invocationId, '--format', 'json']);
    expect(json(r)).toMatchObject({
      journal_state: 'PUBLISHED',
      capsule_state: 'PREPARED',
      diagnostic_code: 'quality.prepared_published',
      permitted_actions: ['observe'],
      dispatch_count: 1,
      replay_details: { target_commit: 'proven', governance: 'pending' },
    });
    assertRedacted(r.stdout, op);
  });

  it('a staged probe failed: no capsule, REEXTRACT_REQUIRED, retire only, governance not started', async () => {
    const op = await operation({ assertion: 'SELECT count() FROM {relation} WHERE amount >= 0' });
    expect(await prepareCapsule(op.begun, op.deps)).toMatchObject({ state: 'REEXTRACT_REQUIRED' });
    expect(json(await cutpoint(['quality', 'inspect', op.ref.invocationId]))).toMatchObject({
      journal_state: 'REEXTRACT_REQUIRED',
      capsule_state: null,
      capsule_version: null,
      diagnostic_code: 'quality.staged_failed',
      permitted_actions: ['retire'],
      dispatch_count: 0,
      digests: { admission: null, generation: null, immutable_core: null, inventory: null, policy: null },
      replay_details: { target_commit: 'not_proven', governance: 'not_started', original_run_id: 'unknown' },
    });
  });

  it('a held reader guard: held since, by which run, never the token; nothing permitted', async () => {
    const op = await published();
    // Only ObserveTarget (not in this branch) acquires the guard: this write stands in for
    // its acquisition (a crash right after it leaves exactly this item).
    const capsule = await capsuleOf(op);
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const reader = {
      token,
      session: 'obs-session-1',
      runId: 'run-observer-1',
      fence: { owner: op.ref.invocationId, session: 'obs-session-1', epoch: 1 },
      acquiredAt: '2026-11-05T01:02:03.000Z',
      deadlineAt: '2026-11-05T01:07:03.000Z',
    };
    expect(
      await runtime.ports.authority.update(
        'quality.reader.acquire',
        qualityKeys.capsule(op.ref.targetId, op.ref.invocationId),
        { version: capsule.version },
        { reader },
      ),
    ).toMatchObject({ status: 'APPLIED' });
    const r = await cutpoint(['quality', 'inspect', op.ref.invocationId, '--format', 'json']);
    expect(json(r)).toMatchObject({
      diagnostic_code: 'quality.reader_guard_held',
      permitted_actions: [],
      reader_guard: { held: true, since: '2026-11-05T01:02:03.000Z', holder_run_id: 'run-observer-1' },
      replay_details: { target_commit: 'proven', governance: 'pending' },
    });
    assertRedacted(r.stdout, op, [token, 'obs-session-1']);
  });

  it('prepared.json missing or malformed: never a pass, nothing permitted', async () => {
    const op = await published();
    const key = (await capsuleOf(op)).prepared.key;
    const bytes = (await runtime.ports.objects.get(key))?.bytes as Uint8Array;
    // Only a loss (or an edit) outside cutpoint removes or changes evidence: done directly here.
    await runtime.ports.objects.delete('quality.prepared.put', key);
    expect(json(await cutpoint(['quality', 'inspect', op.ref.invocationId]))).toMatchObject({
      diagnostic_code: 'quality.evidence_missing',
      permitted_actions: [],
    });
    const edited = Buffer.from(Buffer.from(bytes).toString('utf8').replace('"totalRows":', '"totalRows": '));
    await runtime.ports.objects.put('quality.prepared.put', key, edited, {});
    expect(json(await cutpoint(['quality', 'inspect', op.ref.invocationId]))).toMatchObject({
      diagnostic_code: 'quality.evidence_malformed',
      permitted_actions: [],
    });
  });

  it('COMPLETE: replay and resume once its completion evidence is recorded, resume alone before', async () => {
    const op = await published();
    // Only ObserveTarget (not in this branch) writes COMPLETE: this update stands in for it,
    // first as a crash before completion.json is recorded (cut point quality.completion.put).
    const capsule = await capsuleOf(op);
    const ckey = qualityKeys.capsule(op.ref.targetId, op.ref.invocationId);
    const completion = { version: capsule.version + 1, at: '2026-11-05T02:00:00.000Z', runId: 'run-observer-2' };
    await runtime.ports.authority.update(
      'quality.complete.commit',
      ckey,
      { version: capsule.version },
      { state: 'COMPLETE', completion },
    );
    expect(json(await cutpoint(['quality', 'inspect', op.ref.invocationId]))).toMatchObject({
      capsule_state: 'COMPLETE',
      diagnostic_code: 'quality.completion_evidence_pending',
      permitted_actions: ['resume'],
      replay_details: { governance: 'complete', target_commit: 'proven' },
    });
    const doc = completionDocument({
      invocationId: op.ref.invocationId,
      coreDigest: capsule.coreDigest,
      candidateUuid: candidateUuidOf(op.ref.invocationId),
      version: completion.version,
      at: completion.at,
      runId: completion.runId,
      results: [],
    });
    const key = qualityEvidenceKeyOf('daily', op.ref.invocationId, 'completion');
    await putEvidence(runtime.ports.objects, 'quality.completion.put', key, doc.document, op.ref.invocationId);
    await runtime.ports.authority.update(
      'quality.completion.record',
      ckey,
      { version: completion.version },
      { completion: { ...completion, evidence: { key, sha256: doc.sha256 } } },
    );
    const r = await cutpoint(['quality', 'inspect', op.ref.invocationId]);
    expect(json(r)).toMatchObject({
      diagnostic_code: 'quality.complete',
      permitted_actions: ['replay', 'resume'],
      replay_details: { governance: 'complete' },
    });
    assertRedacted(r.stdout, op);
  });

  it('inspect-all: governed operations only, retained_custody_count as the delivery index, retained_governance_count = not COMPLETE + held guards', async () => {
    const before = await operation({ through: 'begin' }); // EMPTY_STAGING: not yet governed, but holds custody
    const delivery = json(await cutpoint(['delivery', 'inspect-all', '--format', 'json']));
    const r = await cutpoint(['quality', 'inspect-all', '--format', 'json']);
    const index = json(r) as {
      items: Array<Record<string, unknown>>;
      retained_custody_count: number;
      retained_governance_count: number;
    };
    expect(index.retained_custody_count).toBe(delivery.retained_custody_count);
    expect(index.items.map((i) => i.invocation_id)).not.toContain(before.ref.invocationId);
    const retained = index.items.filter(
      (i) => i.reader_guard_held === true || (i.capsule_state !== null && i.capsule_state !== 'COMPLETE'),
    ).length;
    expect(index.retained_governance_count).toBe(retained);
    expect(index.retained_governance_count).toBeGreaterThanOrEqual(4);
    expect(index.items.map((i) => i.diagnostic_code).sort()).toEqual(
      [
        'quality.complete',
        'quality.evidence_malformed',
        'quality.prepared',
        'quality.prepared_published',
        'quality.reader_guard_held',
        'quality.staged_failed',
      ].sort(),
    );
    for (const item of index.items) {
      expect(Object.keys(item)).toEqual([
        'capsule_state',
        'diagnostic_code',
        'governance',
        'invocation_id',
        'journal_state',
        'permitted_actions',
        'reader_guard_held',
        'route',
        'runbook',
        'target_commit',
        'target_id',
      ]);
    }
    expect(r.stdout).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
    // An operation not (yet) under governance: inspect names it and points to the delivery journal.
    refused(await cutpoint(['quality', 'inspect', before.ref.invocationId]), 'quality.not_governed');
  });

  it('evidence that cannot be read is unreadable, a capsule item that does not parse is malformed: never a pass, nothing permitted', async () => {
    const op = await published();
    // An object store that answers nothing (its endpoint refuses connections): the read failed, nothing is known.
    const deaf = awsPorts(
      { ...runtime.config, endpoints: { ...runtime.config.endpoints, s3: `http://127.0.0.1:${await freePort()}` } },
      inertFaults,
    );
    const unreadable = await inspectQuality({ ...runtime.ports, objects: deaf.objects }, op.ref.invocationId);
    expect(unreadable).toMatchObject({
      diagnostic_code: 'quality.evidence_unreadable',
      permitted_actions: [],
      replay_details: { governance: 'pending' },
    });
    // Only an edit outside cutpoint can break the capsule item: written directly here.
    const capsule = await capsuleOf(op);
    await runtime.ports.authority.update(
      'quality.capsule.prepare',
      qualityKeys.capsule(op.ref.targetId, op.ref.invocationId),
      { version: capsule.version },
      { state: 'PASSED' },
    );
    const r = await cutpoint(['quality', 'inspect', op.ref.invocationId]);
    expect(json(r)).toMatchObject({
      capsule_state: null,
      diagnostic_code: 'quality.evidence_malformed',
      permitted_actions: [],
      replay_details: { governance: 'unknown', target_commit: 'proven' },
    });
    const index = json(await cutpoint(['quality', 'inspect-all'])) as {
      items: Array<Record<string, unknown>>;
      retained_governance_count: number;
    };
    expect(index.items.find((i) => i.invocation_id === op.ref.invocationId)).toMatchObject({
      governance: 'unknown',
      capsule_state: null,
    });
  });

  it('a bad or unknown id exits 1 with a stable code and empty stdout', async () => {
    refused(
      await cutpoint(['quality', 'inspect', 'inv-NOT-VALID', '--format', 'json']),
      'delivery.invocation_id_invalid',
    );
    refused(
      await cutpoint(['quality', 'inspect', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa']),
      'delivery.recovery_journal_unavailable',
    );
  });

  it('the use case runs on a read-only view of the ports: every write is refused, nothing reaches the store', async () => {
    const op = await published();
    const ro = readOnlyPorts(runtime.ports);
    const key = qualityKeys.capsule(op.ref.targetId, op.ref.invocationId);
    const before = await snapshot(op);
    await expect(
      ro.authority.update('quality.reader.acquire', key, { version: 1 }, { reader: {} }),
    ).rejects.toMatchObject({ name: 'Quality.ReadOnlyViolation' });
    await expect(ro.authority.put('x', { ...key }, 'absent')).rejects.toMatchObject({
      code: 'quality.read_only_violation',
    });
    await expect(ro.authority.transact('x', [])).rejects.toMatchObject({ code: 'quality.read_only_violation' });
    await expect(ro.authority.delete('x', key, { version: 1 })).rejects.toMatchObject({
      code: 'quality.read_only_violation',
    });
    await expect(ro.objects.put('x', 'k', new Uint8Array(), {})).rejects.toMatchObject({
      code: 'quality.read_only_violation',
    });
    await expect(ro.objects.delete('x', 'k')).rejects.toMatchObject({ code: 'quality.read_only_violation' });
    expect((await inspectQuality(ro, op.ref.invocationId)).diagnostic_code).toBe('quality.prepared_published');
    expect(await snapshot(op)).toBe(before);
  });

  it('exit status 0 with the index on stdout; a force spelling exits 2', async () => {
    // Both main()'s, in-process: the exit status a real process gets from main's result is
    // cli.test.ts's (force spellings of every verb: test/unit/quality-cli.test.ts).
    const ok = await cutpoint(['quality', 'inspect-all', '--format', 'json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ kind: 'cutpoint.quality-governance-index.v1' });
    expect(await cutpoint(['quality', 'clear-guard', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa', '--yes'])).toMatchObject({
      code: 2,
      stdout: '',
    });
  });
});

/**
 * diagnose, observe, replay (docs/rules.md#quality-commands, docs/rules.md#replay-receipt,
 * docs/rules.md#quality-state-to-action, F5) against the ClickHouse HOST (chdb in its own
 * process behind HTTP): the bounded reader's child must reach the same engine, so observe runs
 * only where the binding is a server URL. The operation is brought to PUBLISHED by the real
 * steps writing to the CLI runtime's stores; each test continues the one before (TARGET_PENDING
 * → observe → COMPLETE → replay / diagnose → evidence lost).
 */
describe('cutpoint quality diagnose / observe / replay', () => {
  let op: Pick<Operation, 'ref' | 'predecessor'> & { selector: string; file: string };
  beforeAll(async () => {
    // The manifest the operator names: the seal digests its exact text and absolute path.
    const published = await host.published({ table: 'observed_1', ports: runtime.ports, manifestDir: runtime.root });
    op = {
      ref: published.ref,
      predecessor: published.predecessor,
      selector: published.selector,
      file: published.selector.replace(/#daily$/, ''),
    };
  }, 180_000);

  const onHost = (argv: string[], url = host.host.url): Promise<CliRun> =>
    runCutpointInProcess(argv, {
      cwd: runtime.root,
      env: { CUTPOINT_STATE_DIR: runtime.stateDir, CH_PUB_URL: url, CH_URL: url },
    });

  it('observe: a chdb: binding is refused before any write; TARGET_PENDING → observe --yes → COMPLETE; observing a COMPLETE capsule is refused, nothing written', async () => {
    const id = op.ref.invocationId;
    const before = await snapshot(op);
    // An embedded directory cannot be shared with the reader's child process: refused before anything is opened or written.
    const embedded = join(runtime.root, 'embedded-never-created');
    refused(
      await onHost(['quality', 'observe', id, '--manifest', op.selector, '--yes'], `chdb:${embedded}`),
      'quality.reader_unreachable',
    );
    expect(existsSync(embedded)).toBe(false);
    expect(await snapshot(op)).toBe(before);

    // The reader's child fails its probe (it inherits CUTPOINT_FAULTS): the observation is
    // persisted TARGET_PENDING — a designed result, not success: exit 1, empty stdout.
    const failing = await runCutpointInProcess(['quality', 'observe', id, '--manifest', op.selector, '--yes'], {
      cwd: runtime.root,
      env: {
        CUTPOINT_STATE_DIR: runtime.stateDir,
        CH_PUB_URL: host.host.url,
        CH_URL: host.host.url,
        CUTPOINT_FAULTS: 'quality.target.probe:fail',
      },
    });
    refused(failing, 'quality.target_pending');
    const pending = await capsuleOf(op);
    expect(pending).toMatchObject({ state: 'TARGET_PENDING', lastObservation: { outcome: 'TARGET_PENDING' } });
    expect(pending.reader).toBeUndefined();
    expect(json(await onHost(['quality', 'inspect', id]))).toMatchObject({
      diagnostic_code: 'quality.target_pending',
      permitted_actions: ['observe'],
    });
    // Replay is offered only for COMPLETE.
    refused(await onHost(['quality', 'replay', id, '--manifest', op.selector]), 'quality.action_not_permitted');
    // diagnose names the last observation's diagnostic; continuity has nothing to compare yet.
    const pendingDiagnosis = json(await onHost(['quality', 'diagnose', id, '--manifest', op.selector]));
    expect(pendingDiagnosis).toMatchObject({
      authority: { continuity: 'unknown', completion_version: null, observed_version: pending.version },
    });
    expect(pendingDiagnosis.last_error_code).toMatch(/^quality\.target_observation_/);
    expect((await capsuleOf(op)).version).toBe(pending.version);

    const r = await onHost(['quality', 'observe', id, '--manifest', op.selector, '--yes', '--format', 'json']);
    const doc = json(r);
    expect(doc).toMatchObject({
      kind: 'cutpoint.quality-governance.v1',
      invocation_id: id,
      journal_state: 'PUBLISHED',
      capsule_state: 'COMPLETE',
      diagnostic_code: 'quality.complete',
      permitted_actions: ['replay', 'resume'],
      dispatch_count: 1,
      reader_guard: { held: false },
      replay_details: { target_commit: 'proven', governance: 'complete', last_observation: { outcome: 'COMPLETE' } },
      observation: { outcome: 'COMPLETE', remote_termination: 'not_applicable' },
    });
    expect(r.stdout).toBe(`${JSON.stringify(sortedDeep(doc), null, 2)}\n`);
    assertRedacted(r.stdout, op);
    const complete = await capsuleOf(op);
    expect(complete).toMatchObject({
      state: 'COMPLETE',
      completion: { evidence: { key: qualityEvidenceKeyOf('daily', id, 'completion') } },
    });
    expect(complete.reader).toBeUndefined();

    const done = await snapshot(op);
    const again = await onHost(['quality', 'observe', id, '--manifest', op.selector, '--yes']);
    refused(again, 'quality.action_not_permitted');
    expect(again.stderr).toContain('permitted_actions: [replay, resume]; diagnostic_code quality.complete');
    expect((await capsuleOf(op)).version).toBe(complete.version);
    expect(await snapshot(op)).toBe(done);
  }, 120_000);

  it('replay: the receipt of the original results; nothing written — capsule version, dispatch count and every item unchanged', async () => {
    const before = await snapshot(op);
    const capsule = await capsuleOf(op);
    const r = await onHost(['quality', 'replay', op.ref.invocationId, '--manifest', op.selector, '--format', 'json']);
    const receipt = json(r);
    expect(receipt).toMatchObject({
      kind: 'cutpoint.quality-replay-receipt.v1',
      schema_version: 1,
      invocation_id: op.ref.invocationId,
      dispatch_count: 1,
      source_reads: 0,
      target_writes: 0,
      reader_guard: 'released',
      authority: {
        binding: 'match',
        continuity: 'ok',
        completion_version: capsule.completion?.version,
        observed_version: capsule.version,
      },
      generation: { match: true },
      quality: { governance: 'complete' },
      replayed_from: {
        invocation_id: op.ref.invocationId,
        original_run_id: capsule.runs.originalRunId,
        original_load_id: capsule.runs.originalLoadId,
      },
    });
    const probes = (receipt.quality as { probes: Array<{ name: string; result: string }> }).probes;
    expect(probes.map((p) => p.name)).toContain('row_count_matches_receipts');
    for (const p of probes) expect(p.result).toBe('PASSED');
    for (const a of receipt.acceptance as Array<Record<string, unknown>>)
      expect(a).toMatchObject({ dataset: op.ref.targetId, result: 'PASSED' });
    expect(receipt.current_run_id).toMatch(/^run-[a-z2-7]{26}$/);
    assertRedacted(r.stdout, op);
    expect(await snapshot(op)).toBe(before);
    expect((await loadInvocation(runtime.ports, op.ref.invocationId)).facts.dispatch?.count).toBe(1);
    // A failed read of the replay (quality.replay.read, armed by --faults): exit 1, no receipt, nothing written; a repeat is safe.
    const failed = await onHost([
      'quality',
      'replay',
      op.ref.invocationId,
      '--manifest',
      op.selector,
      '--faults',
      'quality.replay.read:fail',
    ]);
    expect({ code: failed.code, stdout: failed.stdout }).toEqual({ code: 1, stdout: '' });
    expect(await snapshot(op)).toBe(before);
    // Another configuration is not "the same invocation and configuration": refused, no receipt.
    const other = join(runtime.root, 'other-config.yaml');
    await writeFile(other, `${await readFile(op.file, 'utf8')}# edited\n`);
    refused(
      await onHost(['quality', 'replay', op.ref.invocationId, '--manifest', `${other}#daily`]),
      'delivery.recovery_authority_mismatch',
    );
    expect(await snapshot(op)).toBe(before);
  }, 60_000);

  it('diagnose: every sealed digest beside the recomputed one, continuity, acceptance; a changed manifest shows which digests differ; nothing written', async () => {
    const before = await snapshot(op);
    const r = await onHost(['quality', 'diagnose', op.ref.invocationId, '--manifest', op.selector]);
    const doc = json(r) as {
      comparisons: Array<Record<string, unknown>>;
      acceptance: Array<Record<string, unknown>>;
    } & Record<string, unknown>;
    expect(Object.keys(doc)).toEqual([
      'acceptance',
      'authority',
      'comparisons',
      'invocation_id',
      'kind',
      'last_error_code',
      'schema_version',
    ]);
    const capsule = await capsuleOf(op);
    expect(doc).toMatchObject({
      kind: 'cutpoint.quality-diagnosis.v1',
      schema_version: 1,
      invocation_id: op.ref.invocationId,
      last_error_code: null,
      authority: {
        continuity: 'ok',
        completion_version: capsule.completion?.version,
        observed_version: capsule.version,
      },
    });
    expect(doc.comparisons.map((c) => c.name)).toEqual([
      'policy',
      'admission',
      'inventory',
      'generation',
      'immutable_core',
      'seal',
      'authority_binding',
    ]);
    for (const c of doc.comparisons) {
      expect(c, String(c.name)).toMatchObject({ match: true });
      expect(c.sealed).toMatch(/^sha256:[0-9a-f]{16}$/);
      expect(c.observed).toBe(c.sealed);
    }
    expect(doc.acceptance.map((a) => a.probe)).toContain('unique_keys');
    for (const a of doc.acceptance) expect(a).toMatchObject({ dataset: op.ref.targetId, columns: expect.any(Array) });
    assertRedacted(r.stdout, op);

    // The operator's manifest now says something else about quality: policy, the seal and the core differ.
    const changed = join(runtime.root, 'changed.yaml');
    await writeFile(changed, (await readFile(op.file, 'utf8')).replace('amount < 0', 'amount < -1'));
    const diff = json(
      await onHost(['quality', 'diagnose', op.ref.invocationId, '--manifest', `${changed}#daily`]),
    ) as typeof doc;
    const matches = Object.fromEntries(diff.comparisons.map((c) => [c.name, c.match]));
    expect(matches).toEqual({
      policy: false,
      admission: false,
      inventory: true,
      generation: true,
      immutable_core: false,
      seal: false,
      authority_binding: true,
    });
    expect(diff.last_error_code).toBe('delivery.recovery_authority_mismatch');
    expect(await snapshot(op)).toBe(before);
  }, 60_000);

  it('replay refuses missing or malformed completion evidence with its stable code, never a receipt', async () => {
    const key = (await capsuleOf(op)).completion?.evidence?.key as string;
    const bytes = (await runtime.ports.objects.get(key))?.bytes as Uint8Array;
    const replay = () => onHost(['quality', 'replay', op.ref.invocationId, '--manifest', op.selector]);
    // Only a loss (or an edit) outside cutpoint removes or changes evidence: done directly here.
    await runtime.ports.objects.delete('quality.completion.put', key);
    refused(await replay(), 'quality.evidence_missing');
    await runtime.ports.objects.put(
      'quality.completion.put',
      key,
      Buffer.from(Buffer.from(bytes).toString('utf8').replace('"version":', '"version": ')),
      {},
    );
    refused(await replay(), 'quality.evidence_malformed');
    const capsule = await capsuleOf(op);
    await runtime.ports.objects.delete('quality.prepared.put', capsule.prepared.key);
    refused(await replay(), 'quality.evidence_missing');
  }, 60_000);
});

function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedDeep((value as Record<string, unknown>)[k])]),
    );
  return value;
}
