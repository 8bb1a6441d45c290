import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { invocationIdFrom, targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { sealAuthority } from '../../src/domain/delivery/sealed-authority.js';
import { releaseCustody, type CustodyGrant } from '../../src/delivery/custody.js';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { deliveryKeys, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { recordFacts, transition } from '../../src/delivery/journal/transition.js';
import type { Ports } from '../../src/ports/index.js';
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { scanTable } from '../support/delivery-snapshot.js';

/**
 * The journal's own invariants on every read (issue 8; docs/rules.md#journal-invariants: a missing,
 * unreadable, ambiguous or inconsistent journal exits 1, leaves stdout empty, and writes a
 * stable diagnostic). Journals are seeded through the journal store, then corrupted by
 * hand in DynamoDB Local — a record deleted, a fact dropped, the head moved — and the CLI
 * (its main() in this process; the real bin once, for its exit status and streams) must
 * refuse to project or act on them: exit 1, empty stdout,
 * `delivery.recovery_journal_inconsistent`, the authority table unchanged. Invocations on
 * other targets stay inspectable.
 */

const TARGET_URL_ENV = 'CUTPOINT_TEST_ABSENT_WAREHOUSE_URL';
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: CUTPOINT_TEST_ABSENT_CH_URL }
  warehouse: { kind: postgres, url_env: ${TARGET_URL_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dwh.events_daily, key_columns: [event_id], mode: replace_window }
`;
const WINDOW = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' };
const INCONSISTENT = 'delivery.recovery_journal_inconsistent';

let runtime: CliRuntime;
let ports: Ports;

/** The CLI's main() in this process: the command is the subject (the exit status of a real process is cli.test.ts's). */
const cutpoint = (args: string[]): Promise<CliRun> =>
  runCutpointInProcess(args, { cwd: runtime.root, env: { CUTPOINT_STATE_DIR: runtime.stateDir } });

/** A refusal: exit 1, empty stdout, exactly one `<code>: <message>` line on stderr. */
function refused(r: CliRun, code: string): string {
  expect(r, r.stderr).toMatchObject({ code: 1, stdout: '' });
  const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('cutpoint: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^${code.replace(/\./g, '\\.')}: `));
  return lines[0] as string;
}

function json(r: CliRun): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

let tables = 0;
const newTarget = () => targetIdOf('warehouse', { schema: 'dwh', name: `events_${process.pid}_${++tables}` });
const staging = { table: { schema: 'dwh', table: 'cutpoint_stg_x' }, objectId: '1234', owner: sha256Hex('owner') };
const publication = {
  rows: 10,
  digest: sha256Hex('rows'),
  stagingObjectId: '1234',
  mode: 'replace_window' as const,
  publishedAt: '2026-11-02T00:05:00.000Z',
};

async function begin(targetId = newTarget()): Promise<{ ref: InvocationRef; grant: CustodyGrant }> {
  const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
  const sealed = sealAuthority({
    invocationId,
    manifestText,
    selector: `${runtime.manifestFile}#daily`,
    route: selectRoute(parseManifest(manifestText, 'seed'), 'daily'),
    targetIdentity: { server: 'pg-1', database: 'dwh', principal: 'cutpoint' },
    workRoot: join(runtime.root, 'work'),
    window: WINDOW,
  });
  const grant = await beginInvocation(ports, {
    invocationId,
    route: 'daily',
    targetId,
    sealed,
    session: `s-${invocationId.slice(4, 12)}`,
  });
  return { ref: { targetId, invocationId }, grant };
}

/** EMPTY_STAGING → WRITING_UNKNOWN → VERIFIED_EOF, then → PUBLICATION_UNKNOWN or (with the receipt) → PUBLISHED. */
async function toPublish(to: 'PUBLICATION_UNKNOWN' | 'PUBLISHED'): Promise<InvocationRef> {
  const { ref, grant } = await begin();
  const fence = grant.fence;
  await transition(ports, ref, {
    from: 'EMPTY_STAGING',
    to: 'WRITING_UNKNOWN',
    fence,
    transitionId: 'write',
    patch: { staging, ownedStagesRecorded: true },
  });
  await transition(ports, ref, {
    from: 'WRITING_UNKNOWN',
    to: 'VERIFIED_EOF',
    fence,
    transitionId: 'eof',
    patch: { parts: { parts: 1, chunks: 1, rows: 10, bytes: 100, digest: '0'.repeat(64) } },
  });
  await transition(ports, ref, {
    from: 'VERIFIED_EOF',
    to,
    fence,
    transitionId: 'publish',
    ...(to === 'PUBLISHED' ? { patch: { publication } } : {}),
  });
  return ref;
}

const live = (action: string, ref: InvocationRef) =>
  cutpoint([
    'delivery',
    action,
    ref.invocationId,
    '--manifest',
    `${runtime.manifestFile}#daily`,
    '--yes',
    '--format',
    'json',
  ]);

/** Runs the refusals and checks that not one item of the authority table changed. */
async function refusedWithoutMutation(
  commands: Array<[string[] | (() => Promise<CliRun>), string]>,
): Promise<string[]> {
  const before = await scanTable(runtime.config);
  const lines: string[] = [];
  for (const [command, code] of commands)
    lines.push(refused(await (typeof command === 'function' ? command() : cutpoint(command)), code));
  expect(await scanTable(runtime.config)).toBe(before);
  return lines;
}

async function item(key: { pk: string; sk: string }) {
  const found = await ports.authority.get(key);
  expect(found).toBeDefined();
  return found!;
}

beforeAll(async () => {
  runtime = await startCliRuntime('delivery-journal-consistency', manifestText);
  ports = runtime.ports;
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

describe('an inconsistent delivery journal is refused, never projected or acted on', () => {
  let healthy: InvocationRef;
  beforeAll(async () => {
    healthy = await toPublish('PUBLICATION_UNKNOWN');
  }, 60_000);

  it('a PUBLISHED record without its publication receipt fact: inspect, inspect-all and resume exit 1; other targets stay inspectable', async () => {
    const ref = await toPublish('PUBLISHED');
    expect(json(await cutpoint(['delivery', 'inspect', ref.invocationId]))).toMatchObject({
      state: 'PUBLISHED',
      permitted_actions: ['resume'],
    });
    const record = await item(deliveryKeys.invocation(ref.targetId, ref.invocationId));
    const { publication: _dropped, ...facts } = record.facts as Record<string, unknown>;
    expect(
      (
        await ports.authority.update(
          'test.corrupt',
          deliveryKeys.invocation(ref.targetId, ref.invocationId),
          { version: record.version },
          { facts },
        )
      ).status,
    ).toBe('APPLIED');

    const [inspect] = await refusedWithoutMutation([
      [['delivery', 'inspect', ref.invocationId, '--format', 'json'], INCONSISTENT],
      [['delivery', 'inspect-all', '--target', ref.targetId], INCONSISTENT],
      [() => live('resume', ref), INCONSISTENT],
    ]);
    expect(inspect).toContain(ref.invocationId);
    expect(inspect).toContain('publication');
    expect(json(await cutpoint(['delivery', 'inspect-all', '--target', healthy.targetId]))).toMatchObject({
      retained_custody_count: 1,
      items: [{ invocation_id: healthy.invocationId }],
    });
  });

  it('a journal head pointing past the last journal record: inspect, inspect-all and reconcile exit 1', async () => {
    const ref = await toPublish('PUBLICATION_UNKNOWN');
    const key = deliveryKeys.invocation(ref.targetId, ref.invocationId);
    const record = await item(key);
    expect(
      (
        await ports.authority.update(
          'test.corrupt',
          key,
          { version: record.version },
          { journalSeq: (record.journalSeq as number) + 1 },
        )
      ).status,
    ).toBe('APPLIED');

    const [inspect] = await refusedWithoutMutation([
      [['delivery', 'inspect', ref.invocationId], INCONSISTENT],
      [['delivery', 'inspect-all', '--target', ref.targetId], INCONSISTENT],
      [() => live('reconcile', ref), INCONSISTENT],
    ]);
    expect(inspect).toContain('head');
    expect(json(await cutpoint(['delivery', 'inspect', healthy.invocationId]))).toMatchObject({
      state: 'PUBLICATION_UNKNOWN',
    });
  });

  it("an invocation's record deleted while it holds custody: the orphaned custody is flagged by inspect-all (exit 1, naming it), never counted away", async () => {
    // A retired invocation on the same target first: its pointer keeps the target listed.
    const first = await begin();
    await recordFacts(ports, first.ref, {
      state: 'EMPTY_STAGING',
      fence: first.grant.fence,
      transitionId: 'staged',
      patch: { staging, ownedStagesRecorded: true },
    });
    await releaseCustody(ports, first.ref, {
      from: 'EMPTY_STAGING',
      to: 'RETIRED',
      fence: first.grant.fence,
      transitionId: 'retired',
      patch: { absence: { table: staging.table, objectId: staging.objectId } },
    });
    const { ref: orphan, grant } = await begin(first.ref.targetId);
    await recordFacts(ports, orphan, {
      state: 'EMPTY_STAGING',
      fence: grant.fence,
      transitionId: 'staged',
      patch: { staging, ownedStagesRecorded: true },
    });

    const recordKey = deliveryKeys.invocation(orphan.targetId, orphan.invocationId);
    expect(
      (await ports.authority.delete('test.corrupt', recordKey, { version: (await item(recordKey)).version })).status,
    ).toBe('APPLIED');
    const lines = await refusedWithoutMutation([
      [['delivery', 'inspect-all', '--target', orphan.targetId], INCONSISTENT],
      [['delivery', 'inspect-all'], INCONSISTENT],
      [['delivery', 'inspect', orphan.invocationId], INCONSISTENT],
      [() => live('retire', orphan), INCONSISTENT],
    ]);
    expect(lines[0]).toContain(orphan.invocationId);
    expect(lines[0]).toContain('custody');

    // Its pointer gone too: the custody item still names it, and inspect-all still says so.
    const pointerKey = deliveryKeys.pointer(orphan.invocationId);
    expect(
      (await ports.authority.delete('test.corrupt', pointerKey, { version: (await item(pointerKey)).version })).status,
    ).toBe('APPLIED');
    const [all, scoped] = await refusedWithoutMutation([
      [['delivery', 'inspect-all'], INCONSISTENT],
      [['delivery', 'inspect-all', '--target', orphan.targetId], INCONSISTENT],
    ]);
    for (const line of [all, scoped]) expect(line).toContain(`custody of invocation ${orphan.invocationId}`);
    // The rest of the journal is still readable, target by target and invocation by invocation.
    expect(json(await cutpoint(['delivery', 'inspect-all', '--target', healthy.targetId]))).toMatchObject({
      retained_custody_count: 1,
    });
    expect(json(await cutpoint(['delivery', 'inspect', healthy.invocationId]))).toMatchObject({
      state: 'PUBLICATION_UNKNOWN',
      holds_custody: true,
    });
  });
});
