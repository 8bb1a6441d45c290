// Over ~300 lines (552), kept whole — one subject, one world: its cases share the emulators and fixtures they start (setup is what costs).
import { runCutpointInProcess, startCliRuntime, type CliRun, type CliRuntime } from '../support/cli-runtime.js';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { invocationIdFrom, targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { sealAuthority } from '../../src/domain/delivery/sealed-authority.js';
import { releaseCustody, type CustodyGrant } from '../../src/delivery/custody.js';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { deliveryKeys, type InvocationRef } from '../../src/delivery/journal/keys.js';
import { recordFacts, transition } from '../../src/delivery/journal/transition.js';
import { openPostgresTarget } from '../../src/adapters/postgres/target.js';
import { createStaging } from '../../src/delivery/steps/create-staging.js';
import { workRootOf } from '../../src/delivery/steps/common.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { Ports } from '../../src/ports/index.js';
import { TRANSACTION_MODE } from '../../src/delivery/transaction-mode.js';
import { runbookLinkOf } from '../../src/docs/runbook/ref.js';

/**
 * `cutpoint delivery …` as an operator runs it (docs/rules.md#recovery-actions): the CLI against a local
 * runtime of its own, journal records seeded through the journal store, stdout one JSON
 * document, stderr `<code>: <message>`, exit 0/1/2. The command's environment holds no
 * source or target binding at all (the manifest names variables that are unset), so any
 * database connection attempt could not succeed: inspection and every refusal below run
 * on the journal alone. Every run is the CLI's `main` in this process (the bin only adds
 * process startup, seconds each on a loaded machine); what only a real process shows — the
 * exit status bin/cutpoint.js sets from main's result, a pipe, a FIFO — is cli.test.ts's.
 */

/** Environment variable names the manifest's bindings name; none is ever set. */
const CH_URL_ENV = 'CUTPOINT_TEST_ABSENT_CH_URL';
const TARGET_URL_ENV = 'CUTPOINT_TEST_ABSENT_MSSQL_URL';
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_URL_ENV} }
  warehouse: { kind: mssql, url_env: ${TARGET_URL_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dbo.events_daily, key_columns: [event_id], mode: replace_window }
  hourly:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: hour }
    target: { binding: warehouse, table: dbo.events_hourly, key_columns: [event_id], mode: replace_window }
`;
const WINDOW = { start: '2026-11-01T00:00:00.000Z', end: '2026-11-02T00:00:00.000Z' };

let root = '';
let stateDir = '';
let manifestFile = '';
let ports: Ports;

/** The CLI's `main` in this process, in `root`, with the binding variables unset. */
function cutpoint(args: string[]): Promise<CliRun> {
  return runCutpointInProcess(args, {
    cwd: root,
    env: { CUTPOINT_STATE_DIR: stateDir, [CH_URL_ENV]: undefined, [TARGET_URL_ENV]: undefined },
  });
}

function json(r: { code: number | null; stdout: string; stderr: string }): Record<string, unknown> {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** A refusal: exit 1, empty stdout, exactly one `<code>: <message>` line on stderr. */
function refused(r: { code: number | null; stdout: string; stderr: string }, code: string): string {
  expect(r, r.stderr).toMatchObject({ code: 1, stdout: '' });
  const lines = r.stderr.split('\n').filter((l) => l && !l.startsWith('cutpoint: '));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^${code.replace(/\./g, '\\.')}: `));
  return lines[0] as string;
}

const route = (text: string) => selectRoute(parseManifest(text, 'seed'), 'daily');
const newInvocationId = () => invocationIdFrom(new Uint8Array(randomBytes(16)));
let tables = 0;
const newTarget = () => targetIdOf('warehouse', { schema: 'dbo', name: `events_${process.pid}_${++tables}` });

/** Begins an invocation sealed under the manifest file at `manifestFile#daily` (EMPTY_STAGING). */
async function begin(): Promise<{ ref: InvocationRef; grant: CustodyGrant }> {
  const invocationId = newInvocationId();
  const targetId = newTarget();
  const sealed = sealAuthority({
    invocationId,
    manifestText,
    selector: `${manifestFile}#daily`,
    route: route(manifestText),
    targetIdentity: { server: 'sql-1', database: 'dwh', principal: 'cutpoint' },
    workRoot: join(root, 'work'),
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

const staging = { table: { schema: 'dbo', table: 'cutpoint_stg_x' }, objectId: '1234', owner: sha256Hex('owner') };

/** EMPTY_STAGING → WRITING_UNKNOWN → VERIFIED_EOF → PUBLICATION_UNKNOWN. */
async function toPublicationUnknown(): Promise<InvocationRef> {
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
    to: 'PUBLICATION_UNKNOWN',
    fence,
    transitionId: 'publish-lost',
  });
  return ref;
}

/** Every item of the seeded invocations, their targets, pointers and journals, as one text. */
async function rawSnapshot(refs: InvocationRef[]): Promise<string> {
  const a = ports.authority;
  const parts = await Promise.all(
    refs.flatMap((r) => [
      a.query(`target#${r.targetId}`, 'c'),
      a.query(deliveryKeys.invocationsOf(r.targetId), 'inv#'),
      a.query(deliveryKeys.journal(r.invocationId), 'seq#'),
      a.query(deliveryKeys.journal(r.invocationId), 'tx#'),
      a.get(deliveryKeys.pointer(r.invocationId)),
    ]),
  );
  return JSON.stringify(parts);
}

let runtime: CliRuntime | undefined;

beforeAll(async () => {
  runtime = await startCliRuntime('delivery-cli', manifestText);
  ({ root, stateDir, manifestFile, ports } = runtime);
}, 180_000);

afterAll(async () => {
  await runtime?.stop();
});

const ID_SHAPED_UNKNOWN = 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('cutpoint delivery', () => {
  it('argument grammar errors exit 2 with nothing on stdout, before anything starts', async () => {
    const id = ID_SHAPED_UNKNOWN;
    for (const args of [
      ['delivery'],
      ['delivery', 'frobnicate'],
      ['delivery', 'inspect-all', '--format', 'yaml'],
      ['delivery', 'inspect-all', 'extra'],
      ['delivery', 'inspect-all', '--bogus'],
      ['delivery', 'inspect', '--format', 'json'],
      ['delivery', 'inspect', id, '--format', 'xml'],
      ['delivery', 'inspect', id, 'extra'],
      ['delivery', 'inspect', id, '--target', 'warehouse.dbo.t'],
      ['delivery', 'reconcile', '--manifest', 'x.yaml#daily', '--yes'],
      ['delivery', 'reconcile', id, '--yes'],
      ['delivery', 'reconcile', id, '--manifest'],
      ['delivery', 'resume', id, '--manifest', 'x.yaml#daily', '--yes', '--format', 'csv'],
      ['delivery', 'retire', id, '--manifest', 'x.yaml#daily', '--yes=no'],
      ['delivery', 'retire', id, '--manifest', 'x.yaml#daily', '--target', 'warehouse.dbo.t'],
    ]) {
      const r = await cutpoint(args);
      expect(r, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr, args.join(' ')).toMatch(/^cli\.usage: /);
    }
    // The exit status a real process gets from main's result: cli.test.ts (one spawn for all commands).
  });

  it('inspect-all on an empty journal prints the empty recovery index', async () => {
    const r = await cutpoint(['delivery', 'inspect-all', '--format', 'json']);
    expect(json(r)).toEqual({
      items: [],
      kind: 'cutpoint.delivery-recovery-index.v1',
      retained_custody_count: 0,
      schema_version: 1,
    });
    // --format defaults to json.
    expect(json(await cutpoint(['delivery', 'inspect-all']))).toEqual(JSON.parse(r.stdout));
  }, 60_000);

  describe('with seeded invocations', () => {
    let unknown: InvocationRef; // PUBLICATION_UNKNOWN: reconcile
    let unrecorded: InvocationRef; // EMPTY_STAGING, owned stage not recorded: retire (by the stage's derived name)
    let emptyStage: InvocationRef; // EMPTY_STAGING, owned stage recorded: retire
    let retired: InvocationRef; // RETIRED: nothing, custody released
    let refs: InvocationRef[];

    beforeAll(async () => {
      unknown = await toPublicationUnknown();
      unrecorded = (await begin()).ref;
      const e = await begin();
      emptyStage = e.ref;
      await recordFacts(ports, emptyStage, {
        state: 'EMPTY_STAGING',
        fence: e.grant.fence,
        transitionId: 'staged',
        patch: { staging, ownedStagesRecorded: true },
      });
      const r = await begin();
      retired = r.ref;
      await recordFacts(ports, retired, {
        state: 'EMPTY_STAGING',
        fence: r.grant.fence,
        transitionId: 'staged',
        patch: { staging, ownedStagesRecorded: true },
      });
      await releaseCustody(ports, retired, {
        from: 'EMPTY_STAGING',
        to: 'RETIRED',
        fence: r.grant.fence,
        transitionId: 'retired',
        patch: { absence: { table: staging.table, objectId: staging.objectId } },
      });
      refs = [unknown, unrecorded, emptyStage, retired];
    }, 60_000);

    const inspect = async (ref: InvocationRef) =>
      json(await cutpoint(['delivery', 'inspect', ref.invocationId, '--format', 'json']));
    const live = (action: string, ref: InvocationRef, manifest: string, yes = true) =>
      cutpoint([
        'delivery',
        action,
        ref.invocationId,
        '--manifest',
        manifest,
        ...(yes ? ['--yes'] : []),
        '--format',
        'json',
      ]);

    it('inspect shows state, diagnostic_code and permitted_actions per the state-to-action guide', async () => {
      const base = { kind: 'cutpoint.delivery-recovery.v1', schema_version: 1, route: 'daily', window: WINDOW };
      expect(await inspect(unknown)).toEqual({
        ...base,
        invocation_id: unknown.invocationId,
        state: 'PUBLICATION_UNKNOWN',
        diagnostic_code: 'delivery.publication_unknown',
        permitted_actions: ['reconcile'],
        holds_custody: true,
        // The state's runbook page and the command it gives for the first permitted action.
        runbook: runbookLinkOf('delivery', 'PUBLICATION_UNKNOWN', { permitted: ['reconcile'] }),
      });
      expect(await inspect(unrecorded)).toEqual({
        ...base,
        invocation_id: unrecorded.invocationId,
        state: 'EMPTY_STAGING',
        diagnostic_code: 'delivery.empty_staging',
        permitted_actions: ['retire'],
        holds_custody: true,
        runbook: runbookLinkOf('delivery', 'EMPTY_STAGING', { permitted: ['retire'] }),
      });
      expect(await inspect(emptyStage)).toMatchObject({
        state: 'EMPTY_STAGING',
        diagnostic_code: 'delivery.empty_staging',
        permitted_actions: ['retire'],
        holds_custody: true,
      });
      expect(await inspect(retired)).toMatchObject({
        state: 'RETIRED',
        diagnostic_code: 'delivery.retired',
        permitted_actions: [],
        holds_custody: false,
      });
    }, 120_000);

    it('inspect-all lists every invocation in id order and counts retained custody', async () => {
      const index = json(await cutpoint(['delivery', 'inspect-all', '--format', 'json']));
      const ids = refs.map((r) => r.invocationId).sort();
      expect(index).toMatchObject({
        kind: 'cutpoint.delivery-recovery-index.v1',
        schema_version: 1,
        retained_custody_count: 3,
      });
      const items = index.items as Array<Record<string, unknown>>;
      expect(items.map((i) => i.invocation_id)).toEqual(ids);
      expect(items.find((i) => i.invocation_id === retired.invocationId)).toEqual({
        diagnostic_code: 'delivery.retired',
        holds_custody: false,
        invocation_id: retired.invocationId,
        permitted_actions: [],
        route: 'daily',
        state: 'RETIRED',
        runbook: runbookLinkOf('delivery', 'RETIRED', { permitted: [] }),
      });

      const one = json(await cutpoint(['delivery', 'inspect-all', '--target', unknown.targetId, '--format', 'json']));
      expect(one).toMatchObject({
        retained_custody_count: 1,
        items: [
          { invocation_id: unknown.invocationId, state: 'PUBLICATION_UNKNOWN', permitted_actions: ['reconcile'] },
        ],
      });
      const none = json(await cutpoint(['delivery', 'inspect-all', '--target', retired.targetId]));
      expect(none).toMatchObject({ retained_custody_count: 0, items: [{ invocation_id: retired.invocationId }] });
      refused(await cutpoint(['delivery', 'inspect-all', '--target', 'Not A Target']), 'delivery.target_id_invalid');
    }, 120_000);

    it('malformed and unknown invocation ids get stable diagnostics and never echo the input', async () => {
      const pasted = 'inv-SECRET-CLIPBOARD';
      const line = refused(
        await cutpoint(['delivery', 'inspect', pasted, '--format', 'json']),
        'delivery.invocation_id_invalid',
      );
      expect(line).not.toContain('SECRET');
      refused(await cutpoint(['delivery', 'inspect', ID_SHAPED_UNKNOWN]), 'delivery.recovery_journal_unavailable');
      // Live actions: the same codes once confirmed.
      refused(
        await live('reconcile', { targetId: '', invocationId: pasted }, `${manifestFile}#daily`),
        'delivery.invocation_id_invalid',
      );
      refused(
        await live('reconcile', { targetId: '', invocationId: ID_SHAPED_UNKNOWN }, `${manifestFile}#daily`),
        'delivery.recovery_journal_unavailable',
      );
    }, 120_000);

    it('every live-action refusal is stable and leaves the journal byte-identical', async () => {
      const indexBefore = (await cutpoint(['delivery', 'inspect-all', '--format', 'json'])).stdout;
      const rawBefore = await rawSnapshot(refs);
      const missing = join(root, 'does-not-exist.yaml');

      // Missing --yes: refused before the manifest is loaded — a nonexistent manifest
      // and even a malformed id still get the confirmation diagnostic.
      for (const action of ['reconcile', 'resume', 'retire']) {
        const line = refused(
          await live(action, unknown, `${missing}#daily`, false),
          'delivery.recovery_confirmation_required',
        );
        expect(line).toContain(action);
      }
      refused(
        await live('reconcile', { targetId: '', invocationId: 'not-an-id' }, 'no-selector', false),
        'delivery.recovery_confirmation_required',
      );

      // Not in permitted_actions: refused from the journal alone (the manifest is never read).
      const notPermitted = refused(
        await live('resume', unknown, `${missing}#daily`),
        'delivery.recovery_action_not_permitted',
      );
      expect(notPermitted).toContain('PUBLICATION_UNKNOWN');
      expect(notPermitted).toContain('[reconcile]');
      refused(await live('retire', unknown, `${manifestFile}#daily`), 'delivery.recovery_action_not_permitted');
      refused(await live('resume', unrecorded, `${manifestFile}#daily`), 'delivery.recovery_action_not_permitted');
      refused(await live('reconcile', emptyStage, `${manifestFile}#daily`), 'delivery.recovery_action_not_permitted');
      refused(await live('resume', retired, `${manifestFile}#daily`), 'delivery.recovery_action_not_permitted');
      // Retire on RETIRED is the completed action repeated (it looks again for a stage left),
      // not refused by the guide: it goes on to the binding, unset here.
      refused(await live('retire', retired, `${manifestFile}#daily`), 'delivery.binding_env_unset');

      // Permitted, then the manifest: unreadable, malformed selector, unknown route, invalid YAML.
      refused(await live('reconcile', unknown, `${missing}#daily`), 'delivery.manifest_unavailable');
      refused(await live('reconcile', unknown, manifestFile), 'delivery.selector_invalid');
      refused(await live('reconcile', unknown, `${manifestFile}#weekly`), 'delivery.selector_unknown');
      const broken = join(root, 'broken.yaml');
      await writeFile(broken, 'version: 1\nroutes: [\n');
      refused(await live('reconcile', unknown, `${broken}#daily`), 'delivery.manifest_unparsable');

      // The sealed authority: a manifest whose digest differs, another route of the same
      // manifest (the selector), another binding — each a mismatch naming the field only.
      const edited = join(root, 'edited.yaml');
      await writeFile(edited, `${manifestText}# edited\n`);
      const mismatch = refused(
        await live('reconcile', unknown, `${edited}#daily`),
        'delivery.recovery_authority_mismatch',
      );
      expect(mismatch).toContain('manifestDigest');
      expect(mismatch).toContain('selectorDigest'); // another file path, too
      expect(mismatch).not.toMatch(/[0-9a-f]{64}/);
      await writeFile(manifestFile, `${manifestText}# edited in place\n`);
      try {
        const inPlace = refused(
          await live('reconcile', unknown, `${manifestFile}#daily`),
          'delivery.recovery_authority_mismatch',
        );
        expect(inPlace).toMatch(/: manifestDigest; /);
      } finally {
        await writeFile(manifestFile, manifestText);
      }
      refused(await live('reconcile', unknown, `${manifestFile}#hourly`), 'delivery.recovery_authority_mismatch');

      // Everything matches: the live action now runs in-process, and opens the target from
      // the variable the binding names first — unset here, so it is refused before custody
      // is taken, naming the variable and never a value.
      const unset = refused(await live('reconcile', unknown, `${manifestFile}#daily`), 'delivery.binding_env_unset');
      expect(unset).toContain(TARGET_URL_ENV);
      // A relative selector resolves against the working directory, like the seal's absolute file.
      refused(await live('reconcile', unknown, 'route.yaml#daily'), 'delivery.binding_env_unset');
      refused(await live('retire', emptyStage, `${manifestFile}#daily`), 'delivery.binding_env_unset');

      expect((await cutpoint(['delivery', 'inspect-all', '--format', 'json'])).stdout).toBe(indexBefore);
      expect(await rawSnapshot(refs)).toBe(rawBefore);
    });

    it('a corrupted journal is inconsistent: inspect and inspect-all exit 1, nothing vouched for', async () => {
      // A pointer whose journal record is missing (e.g. a hand-edited or torn table).
      const orphan = newInvocationId();
      const put = await ports.authority.put(
        'test.corrupt',
        { ...deliveryKeys.pointer(orphan), targetId: newTarget(), route: 'daily' },
        'absent',
      );
      expect(put.status).toBe('APPLIED');
      refused(
        await cutpoint(['delivery', 'inspect', orphan, '--format', 'json']),
        'delivery.recovery_journal_inconsistent',
      );
      refused(
        await cutpoint(['delivery', 'inspect-all', '--format', 'json']),
        'delivery.recovery_journal_inconsistent',
      );
      refused(
        await live('reconcile', { targetId: '', invocationId: orphan }, `${manifestFile}#daily`),
        'delivery.recovery_journal_inconsistent',
      );
      // One target's listing does not read the pointers and still vouches for its own records.
      expect(json(await cutpoint(['delivery', 'inspect-all', '--target', unknown.targetId]))).toMatchObject({
        retained_custody_count: 1,
      });
    }, 120_000);
  });

  describe('a live action against a real target (embedded PostgreSQL)', () => {
    /** The variable the binding names; set only for the call that runs the live action. */
    const PG_ENV = 'TEST_WAREHOUSE_CONN';
    const pgManifest = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_URL_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: analytics.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: rolling, days: 1, boundary: day }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
`;
    let pgServer: EmbeddedPostgres | undefined;
    afterAll(async () => {
      await pgServer?.stop();
    });

    it('retire of a recorded empty stage (the connection reaches it only through its binding variable): the exact stage dropped, RETIRED, the connection never printed; repeating answers RETIRED again', async () => {
      pgServer = await startEmbeddedPostgres();
      const connection = pgServer.connectionString;
      const target = openPostgresTarget({ connectionString: connection, faults: inertFaults });
      const pgFile = join(root, 'pg-route.yaml');
      await writeFile(pgFile, pgManifest);
      const pgRoute = selectRoute(parseManifest(pgManifest, pgFile), 'daily');
      const invocationId = newInvocationId();
      const targetId = targetIdOf('warehouse', { schema: 'dwh', name: 'events' });
      try {
        const admin = new pg.Client({ connectionString: connection });
        await admin.connect();
        try {
          await admin.query('CREATE SCHEMA dwh');
          await admin.query('CREATE TABLE dwh.events (event_id bigint PRIMARY KEY, event_time timestamptz NOT NULL)');
          const sealed = sealAuthority({
            invocationId,
            manifestText: pgManifest,
            selector: `${pgFile}#daily`,
            route: pgRoute,
            // What the live action will observe again: this target and this object store.
            targetIdentity: await target.identity(),
            workRoot: workRootOf({ ports, route: pgRoute }),
            window: WINDOW,
          });
          const grant = await beginInvocation(ports, {
            invocationId,
            route: 'daily',
            targetId,
            sealed,
            session: `s-${invocationId.slice(4, 12)}`,
          });
          const staged = await createStaging(
            { invocationId, fence: grant.fence },
            { ports, target, mode: TRANSACTION_MODE, route: pgRoute },
          );
          expect(staged).toMatchObject({ state: 'EMPTY_STAGING', acted: true });
          const stages = async () =>
            (
              await admin.query(
                `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'dwh' AND c.relkind = 'r' AND c.relname LIKE 'cutpoint_stg_%'`,
              )
            ).rowCount;
          expect(await stages()).toBe(1);

          // The connection is in this process's environment only under the variable the binding names (the other bindings' unset).
          const run = () =>
            runCutpointInProcess(
              ['delivery', 'retire', invocationId, '--manifest', `${pgFile}#daily`, '--yes', '--format', 'json'],
              {
                cwd: root,
                env: {
                  CUTPOINT_STATE_DIR: stateDir,
                  [CH_URL_ENV]: undefined,
                  [TARGET_URL_ENV]: undefined,
                  [PG_ENV]: connection,
                },
              },
            );
          const r = await run();
          expect(r.stdout).not.toContain(connection);
          expect(r.stderr).not.toContain(connection);
          expect(json(r)).toMatchObject({
            invocation_id: invocationId,
            state: 'RETIRED',
            permitted_actions: [],
            holds_custody: false,
          });
          expect(await stages()).toBe(0);
          // Repeated on RETIRED: the same answer (it only looked again; nothing was there), exit 0.
          const again = await run();
          expect(again).toMatchObject({ code: 0 });
          expect(json(again)).toMatchObject({
            invocation_id: invocationId,
            state: 'RETIRED',
            permitted_actions: [],
            holds_custody: false,
          });
          expect(await stages()).toBe(0);
        } finally {
          await admin.end();
        }
      } finally {
        await target.close();
      }
    });
  });
});
