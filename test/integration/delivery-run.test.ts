import {
  runCutpointInProcess,
  spawnCutpoint,
  startCliRuntime,
  type CliRun,
  type CliRuntime,
} from '../support/cli-runtime.js';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { openClickHouse } from '../../src/adapters/clickhouse/client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import type { EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import type { Ports } from '../../src/ports/index.js';
import { seedSourceDirectory } from '../support/delivery-source.js';
import { openWarehouse, type Warehouse } from '../support/delivery-world.js';
import { randomBytes } from 'node:crypto';
import { beginInvocation } from '../../src/delivery/begin-custody.js';
import { invocationIdFrom, targetIdOf } from '../../src/domain/delivery/identifiers.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { sealAuthority } from '../../src/domain/delivery/sealed-authority.js';
import { scanTable } from '../support/delivery-snapshot.js';
import { existsSync } from 'node:fs';

/**
 * `cutpoint delivery run` as an operator runs it: the CLI against a local runtime of its
 * own, embedded ClickHouse on a data directory the command opens through the binding
 * (`chdb:<dir>`), and embedded PostgreSQL hosted by this process (hence a child is
 * spawned asynchronously). The bindings' variables are set only for the command and must
 * never appear in its output. The real bin runs the clean delivery (the exit status of a
 * real process) and the busy source (held by this process); the rest is the CLI's `main`
 * in this process (the bin only adds process startup, seconds each on a loaded machine).
 */

const CH_ENV = 'TEST_RUN_CLICKHOUSE';
const PG_ENV = 'TEST_RUN_WAREHOUSE';
const WINDOW = { start: '2025-11-02T00:00:00.000Z', end: '2025-11-03T00:00:00.000Z' };
const route = (table: string) => `
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2025-11-02T00:00:00Z", end: "2025-11-03T00:00:00Z" }
    target: { binding: warehouse, table: dwh.${table}, key_columns: [event_id], mode: replace_window }
    quality: { unique_keys: true, not_null: [event_id, event_time] }
    chunk_rows: 200`;
/** Routes whose target Begin refuses before custody (docs/delivery.md, "The route manifest"): each its route edit and code. */
const TARGET_REFUSALS: Array<[string, (text: string) => string, string]> = [
  ['nosuch', (t) => t.replace('dwh.events_clean', 'dwh.nosuch_table'), 'delivery.target_table_missing'],
  ['upper', (t) => t.replace('dwh.events_clean', 'DWH.EVENTS_CLEAN'), 'delivery.target_table_missing'],
  ['catalog', (t) => t.replace('dwh.events_clean', 'pg_catalog.pg_class'), 'delivery.target_not_user_table'],
  ['infoschema', (t) => t.replace('dwh.events_clean', 'information_schema.tables'), 'delivery.target_not_user_table'],
  ['receipts', (t) => t.replace('dwh.events_clean', 'public.cutpoint_receipts'), 'delivery.target_not_user_table'],
  ['view', (t) => t.replace('dwh.events_clean', 'dwh.events_view'), 'delivery.target_not_user_table'],
  [
    'nullcol',
    (t) => t.replace('not_null: [event_id, event_time]', 'not_null: [event_id, nosuch]'),
    'delivery.target_column_missing',
  ],
  [
    'keycol',
    (t) => t.replace('key_columns: [event_id], mode', 'key_columns: [EVENT_ID], mode'),
    'delivery.target_column_missing',
  ],
  [
    'timecol',
    (t) => t.replace('mode: replace_window', 'time_column: nosuch, mode: replace_window'),
    'delivery.target_column_missing',
  ],
];
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
  clean:${route('events_clean')}
  lossy:${route('events_lossy')}
  missing:${route('events_missing').replace('table: src.events', 'table: src.no_such_events')}
  twice:${route('events_twice')}
${TARGET_REFUSALS.map(([name, edit]) => `  ${name}:${edit(route('events_clean'))}`).join('\n')}
`;

const BASE = Date.parse('2025-11-01T00:00:00.000Z');
const rows = Array.from({ length: 2000 }, (_, k) => {
  const i = k + 1;
  return {
    event_id: i,
    event_time: BASE + i * 120_000,
    region: i % 3 === 0 ? 'eu' : 'us',
    amount: (i % 1000) / 8,
    note: i % 2 === 0 ? null : `note ${i}`,
  };
});
const windowIds = rows
  .filter((r) => r.event_time >= Date.parse(WINDOW.start) && r.event_time < Date.parse(WINDOW.end))
  .map((r) => String(r.event_id));

let root = '';
let stateDir = '';
let manifestFile = '';
let chDir = '';
let ports: Ports;
let pgServer: EmbeddedPostgres;
let admin: pg.Client;
let warehouse: Warehouse;
/** The invocation of the clean run (route clean, CUSTODY_RELEASED). */
let cleanId = '';

function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/URL|DSN|MSSQL|CLICKHOUSE|^PG|PASSWORD|^CUTPOINT_|^AWS_|^TEST_RUN_/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, CUTPOINT_STATE_DIR: stateDir, CUTPOINT_FAULTS: '', ...extra };
}

/** The bindings' values, for the child only. */
const bindings = () => ({ [CH_ENV]: `chdb:${chDir}`, [PG_ENV]: pgServer.connectionString });

/** The real bin in a child process: for the exit status of a real delivery, and a source another process holds. */
function cutpoint(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return spawnCutpoint(args, { cwd: root, env: childEnv(extra), timeoutMs: 300_000 });
}

/**
 * The CLI's `main` in this process, where the process boundary is not the subject: the
 * bindings' variables set for the call only (both unset unless given), faults too.
 */
function inProcess(args: string[], extra: Record<string, string> = {}): Promise<CliRun> {
  return runCutpointInProcess(args, {
    cwd: root,
    env: { CUTPOINT_STATE_DIR: stateDir, [CH_ENV]: undefined, [PG_ENV]: undefined, ...extra },
  });
}

function expectNoSecrets(r: { stdout: string; stderr: string }): void {
  for (const text of [r.stdout, r.stderr]) {
    expect(text).not.toContain(pgServer.connectionString);
    expect(text).not.toContain(`chdb:${chDir}`);
  }
}

async function targetIds(table: string): Promise<string[]> {
  return (await admin.query<{ id: string }>(`SELECT event_id::text AS id FROM dwh.${table}`)).rows
    .map((r) => r.id)
    .sort();
}

let runtime: CliRuntime | undefined;

beforeAll(async () => {
  runtime = await startCliRuntime('delivery-run', manifestText);
  ({ root, stateDir, manifestFile, ports } = runtime);
  chDir = join(root, 'clickhouse');
  // The source on a data directory the child opens after this process let go of it.
  await seedSourceDirectory(chDir, rows);
  warehouse = await openWarehouse({ tables: ['events_clean', 'events_lossy', 'events_missing', 'events_twice'] });
  ({ pgServer, admin } = warehouse);
}, 180_000);

afterAll(async () => {
  await warehouse?.close();
  await runtime?.stop();
});

describe('cutpoint delivery run (local runner)', () => {
  it('argument grammar errors exit 2 with nothing on stdout, before anything starts', async () => {
    const cases = [
      ['delivery', 'run'],
      ['delivery', 'run', '--manifest', 'x.yaml#clean', 'extra'],
      ['delivery', 'run', '--manifest', 'x.yaml#clean', '--format', 'yaml'],
      ['delivery', 'run', '--manifest', 'x.yaml#clean', '--bogus'],
      ['delivery', 'run', '--manifest', 'x.yaml#clean', '--region', 'eu-west-1'],
    ];
    // The grammar is the subject: main() in this process; the real bin once, for its exit status.
    for (const args of cases) {
      const r = await runCutpointInProcess(args, { cwd: REPO_ROOT, env: { CUTPOINT_STATE_DIR: stateDir } });
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^cli\.usage: /);
    }
    const r = spawnSync(process.execPath, [`${REPO_ROOT}bin/cutpoint.js`, ...cases[2]!], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: childEnv(),
      timeout: 60_000,
    });
    expect({ code: r.status, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^cli\.usage: /);
  });

  it('an unset source binding is refused with a stable diagnostic naming the variable, never a value', async () => {
    const r = await inProcess(['delivery', 'run', '--manifest', `${manifestFile}#clean`], {
      [PG_ENV]: pgServer.connectionString,
    });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^delivery\\.binding_env_unset: .*${CH_ENV}`));
    expectNoSecrets(r);
  }, 120_000);

  it('a clean run ends CUSTODY_RELEASED: exit 0, the projection on stdout, every window row exactly once, the checkpoint advanced once', async () => {
    const r = await cutpoint(
      ['delivery', 'run', '--manifest', `${manifestFile}#clean`, '--format', 'json'],
      bindings(),
    );
    expect(r.code, r.stderr).toBe(0);
    const projection = JSON.parse(r.stdout);
    cleanId = projection.invocation_id;
    expect(projection).toMatchObject({
      kind: 'cutpoint.delivery-recovery.v1',
      route: 'clean',
      state: 'CUSTODY_RELEASED',
      permitted_actions: [],
      holds_custody: false,
      window: WINDOW,
    });
    expect(r.stderr).toContain('→ Publish');
    expect(r.stderr).toContain('→ Cleanup');
    expectNoSecrets(r);
    expect(await targetIds('events_clean')).toEqual([...windowIds].sort());
    const record = await loadInvocation(ports, projection.invocation_id);
    expect(await loadCheckpoint(ports, record.targetId, 'clean')).toMatchObject({ windowEnd: WINDOW.end, version: 1 });
  }, 180_000); // one spawn of a whole delivery: 4.1 s at load 4-8; a spawn alone took 20-25 s at load 16

  it('a lost publication COMMIT response stops the run in PUBLICATION_UNKNOWN: exit 1, the projection on stdout, the next command on stderr — which then recovers it', async () => {
    const invocationId = `inv-${'b'.repeat(25)}a`;
    const r = await inProcess(
      ['delivery', 'run', '--manifest', `${manifestFile}#lossy`, '--invocation-id', invocationId, '--format', 'json'],
      {
        ...bindings(),
        CUTPOINT_FAULTS: 'delivery.publish.commit:lose-response*',
      },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      invocation_id: invocationId,
      state: 'PUBLICATION_UNKNOWN',
      permitted_actions: ['reconcile'],
      holds_custody: true,
    });
    const last = r.stderr.trim().split('\n').at(-1) ?? '';
    const next = `npx cutpoint delivery reconcile ${invocationId} --manifest ${manifestFile}#lossy --yes --format json`;
    expect(last).toMatch(/^delivery\.needs_recovery: /);
    expect(last).toContain(`next: ${next}`);
    expectNoSecrets(r);
    // The COMMIT applied: the rows are there once already; the journal does not know it yet.
    expect(await targetIds('events_lossy')).toEqual([...windowIds].sort());

    // The next command as printed (source binding unset: recovery is source-free), then resume.
    const live = (action: string) =>
      inProcess(
        ['delivery', action, invocationId, '--manifest', `${manifestFile}#lossy`, '--yes', '--format', 'json'],
        { [PG_ENV]: pgServer.connectionString },
      );
    const reconciled = await live('reconcile');
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ state: 'PUBLISHED', permitted_actions: ['resume'] });
    const resumed = await live('resume');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ state: 'CUSTODY_RELEASED', holds_custody: false });
    expect(await targetIds('events_lossy')).toEqual([...windowIds].sort());
    const record = await loadInvocation(ports, invocationId);
    expect(await loadCheckpoint(ports, record.targetId, 'lossy')).toMatchObject({
      windowEnd: WINDOW.end,
      invocationId,
      version: 1,
    });

    // The same command again (same invocation id): the journal says it is done; nothing is delivered twice.
    const again = await inProcess(
      ['delivery', 'run', '--manifest', `${manifestFile}#lossy`, '--invocation-id', invocationId, '--format', 'json'],
      bindings(),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ invocation_id: invocationId, state: 'CUSTODY_RELEASED' });
    expect(await targetIds('events_lossy')).toEqual([...windowIds].sort());
    expect(await loadCheckpoint(ports, record.targetId, 'lossy')).toMatchObject({ invocationId, version: 1 });
  });

  /** A refusal: exit 1, empty stdout, the last stderr line `<code>: …`. */
  function refused(r: CliRun, code: string): string {
    expect(r, r.stderr).toMatchObject({ code: 1, stdout: '' });
    const last = r.stderr.trim().split('\n').at(-1) ?? '';
    expect(last).toMatch(new RegExp(`^${code.replace(/\./g, '\\.')}: `));
    expectNoSecrets(r);
    return last;
  }
  const everything = async () =>
    JSON.stringify([
      await scanTable(runtime!.config),
      await targetIds('events_clean'),
      await targetIds('events_lossy'),
      await targetIds('events_missing'),
    ]);

  it("another route's invocation id is refused before anything runs: never reported as this run's result, nothing mutated, no chdb directory created", async () => {
    expect(cleanId).not.toBe('');
    const before = await everything();
    const fresh = join(root, 'never-created');
    const line = refused(
      await inProcess(
        ['delivery', 'run', '--manifest', `${manifestFile}#lossy`, '--invocation-id', cleanId, '--format', 'json'],
        { ...bindings(), [CH_ENV]: 'chdb:never-created' },
      ),
      'delivery.invocation_sealed_elsewhere',
    );
    expect(line).toContain(cleanId);
    expect(line).toContain('route');
    expect(line).not.toContain('reconcile');
    // The same route of an edited manifest is another manifest, too.
    const edited = join(root, 'edited.yaml');
    await writeFile(edited, `${manifestText}# edited\n`);
    refused(
      await inProcess(['delivery', 'run', '--manifest', `${edited}#clean`, '--invocation-id', cleanId], bindings()),
      'delivery.invocation_sealed_elsewhere',
    );
    expect(existsSync(fresh)).toBe(false);
    expect(await everything()).toBe(before);
  });

  it('a missing source table is refused before custody is taken, naming the table (delivery.source_table_missing); a missing chdb directory is refused and never created', async () => {
    const before = await everything();
    const line = refused(
      await inProcess(['delivery', 'run', '--manifest', `${manifestFile}#missing`, '--format', 'json'], bindings()),
      'delivery.source_table_missing',
    );
    expect(line).toContain('src.no_such_events');
    expect(await everything()).toBe(before);

    const fresh = join(root, 'no-clickhouse-here');
    refused(
      await inProcess(['delivery', 'run', '--manifest', `${manifestFile}#clean`], {
        ...bindings(),
        [CH_ENV]: 'chdb:no-clickhouse-here',
      }),
      'delivery.source_data_dir_missing',
    );
    expect(existsSync(fresh)).toBe(false);
    expect(await everything()).toBe(before);
  });

  it('a target that cannot be delivered into is refused before custody, read-only, with its own code: a missing table, one that differs only in case, a system catalog, the receipts table, a view, a column the route names that the table lacks', async () => {
    await admin.query('CREATE OR REPLACE VIEW dwh.events_view AS SELECT * FROM dwh.events_clean');
    const before = await everything();
    for (const [name, , code] of TARGET_REFUSALS) {
      const line = refused(
        await inProcess(['delivery', 'run', '--manifest', `${manifestFile}#${name}`, '--format', 'json'], bindings()),
        code,
      );
      expect(line, name).not.toContain('custody');
    }
    expect(await everything()).toBe(before);
  }, 120_000);

  it('a second delivery run of an invocation another process is running is refused: it says the invocation is running and how to watch it, never an action that would fight it', async () => {
    const invocationId = invocationIdFrom(new Uint8Array(randomBytes(16)));
    const args = [
      'delivery',
      'run',
      '--manifest',
      `${manifestFile}#twice`,
      '--invocation-id',
      invocationId,
      '--format',
      'json',
    ];
    // The first, slowed down at its publication so that it is surely running while the second starts.
    const first = cutpoint(args, { ...bindings(), CUTPOINT_FAULTS: 'delivery.publish.commit:delay=15000' });
    // Running: its invocation is journaled (Begin took custody).
    for (
      let waited = 0;
      !(await loadInvocation(ports, invocationId).then(
        () => true,
        () => false,
      ));
      waited += 200
    ) {
      expect(waited, 'the first run never began').toBeLessThan(120_000);
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 200));
    }
    const second = refused(await inProcess(args, bindings()), 'delivery.invocation_running');
    expect(second).toContain(`npx cutpoint delivery inspect ${invocationId}`);
    expect(second).not.toMatch(/retire|reconcile|resume/);
    const done = await first;
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ invocation_id: invocationId, state: 'CUSTODY_RELEASED' });
    expect(existsSync(join(stateDir, 'runs', `${invocationId}.lock`))).toBe(false);
    expect(await targetIds('events_twice')).toEqual([...windowIds].sort());
  }, 240_000);

  it('an embedded ClickHouse directory another process holds is named as such (delivery.source_busy), and refusals that need no source come first', async () => {
    const holder = await openClickHouse({ kind: 'embedded', dataDir: chDir });
    try {
      await holder.client.query({ query: 'SELECT 1' });
      const before = await everything();
      refused(
        await cutpoint(['delivery', 'run', '--manifest', `${manifestFile}#clean`], bindings()),
        'delivery.source_busy',
      );
      refused(
        await cutpoint(
          ['delivery', 'run', '--manifest', `${manifestFile}#lossy`, '--invocation-id', cleanId],
          bindings(),
        ),
        'delivery.invocation_sealed_elsewhere',
      );
      expect(await everything()).toBe(before);

      // Another invocation holds the route's target: refused for that (naming the holder), not for the busy source.
      const holderId = invocationIdFrom(new Uint8Array(randomBytes(16)));
      const clean = selectRoute(parseManifest(manifestText, manifestFile), 'clean');
      const sealed = sealAuthority({
        invocationId: holderId,
        manifestText,
        selector: `${manifestFile}#clean`,
        route: clean,
        targetIdentity: { server: 'elsewhere' },
        workRoot: '/elsewhere',
        window: WINDOW,
      });
      await beginInvocation(ports, {
        invocationId: holderId,
        route: 'clean',
        targetId: targetIdOf('warehouse', { schema: 'dwh', name: 'events_clean' }),
        sealed,
        session: 'holder',
      });
      const held = await everything();
      const line = refused(
        await cutpoint(['delivery', 'run', '--manifest', `${manifestFile}#clean`], bindings()),
        'delivery.run_failed',
      );
      expect(line).toContain('is in the custody of invocation');
      expect(line).toContain(holderId);
      expect(await everything()).toBe(held);
    } finally {
      await holder.close();
    }
  }, 180_000); // three spawns: 13.1 s at load 4-8; a spawn alone took 20-25 s at load 16
});
