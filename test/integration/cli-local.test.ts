import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import type { EmbeddedPostgres } from '../../src/local/embedded-postgres.js';
import { freePort, isPortFree } from '../../src/local/free-port.js';
import { localDown } from '../../src/local/runtime.js';
import { seedSourceDirectory } from '../support/delivery-source.js';
import { openWarehouse, type Warehouse } from '../support/delivery-world.js';
import {
  runCutpointInProcess,
  spawnCutpoint,
  startCliRuntime,
  type CliRun,
  type CliRuntime,
  type SpawnOptions,
} from '../support/cli-runtime.js';

/**
 * The real bin against a local runtime of its own: stdin through a slow pipe, refused
 * files and JSON that would crash the runner, and the delivery flows run by `flow run`
 * (the route's target and source opened from the bindings, as `delivery run` does). Last,
 * the one test of the real `local up` / `local down` daemon.
 */
const CH_ENV = 'TEST_FLOW_CLICKHOUSE';
const PG_ENV = 'TEST_FLOW_WAREHOUSE';
const manifestText = `version: 1
bindings:
  events_ch: { kind: clickhouse, url_env: ${CH_ENV} }
  warehouse: { kind: postgres, url_env: ${PG_ENV} }
routes:
  daily:
    source: { binding: events_ch, table: src.events, time_column: event_time, key_columns: [event_id] }
    window: { kind: fixed, start: "2025-11-02T00:00:00Z", end: "2025-11-03T00:00:00Z" }
    target: { binding: warehouse, table: dwh.events, key_columns: [event_id], mode: replace_window }
    chunk_rows: 100
`;
const BASE = Date.parse('2025-11-01T00:00:00.000Z');
const rows = Array.from({ length: 1500 }, (_, k) => ({
  event_id: k + 1,
  event_time: BASE + (k + 1) * 120_000,
  region: 'eu',
  amount: k / 8,
  note: null,
}));
const inWindow = rows.filter(
  (r) => r.event_time >= Date.parse('2025-11-02T00:00:00Z') && r.event_time < Date.parse('2025-11-03T00:00:00Z'),
).length;

let runtime: CliRuntime;
let pgServer: EmbeddedPostgres;
let admin: pg.Client;
let warehouse: Warehouse;
let chDir = '';

function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^CUTPOINT_|^TEST_FLOW_/.test(k)) env[k] = v;
  return { ...env, CUTPOINT_STATE_DIR: runtime.stateDir, CUTPOINT_FAULTS: '', ...extra };
}

/** The real bin in a child process: for a real stdin pipe and a FIFO that must not block. */
const cutpoint = (
  args: string[],
  options: Partial<SpawnOptions> = {},
  extra: NodeJS.ProcessEnv = {},
): Promise<CliRun> => spawnCutpoint(args, { cwd: runtime.root, env: childEnv(extra), timeoutMs: 120_000, ...options });

/** The CLI's `main` in this process, where the process boundary is not the subject (bindings handed to a real child: delivery-run.test.ts). */
const inProcess = (args: string[], extra: Record<string, string> = {}): Promise<CliRun> =>
  runCutpointInProcess(args, { cwd: runtime.root, env: { CUTPOINT_STATE_DIR: runtime.stateDir, ...extra } });

beforeAll(async () => {
  runtime = await startCliRuntime('cli-local', manifestText);
  chDir = join(runtime.root, 'clickhouse');
  await seedSourceDirectory(chDir, rows);
  warehouse = await openWarehouse({ tables: ['events'] });
  ({ pgServer, admin } = warehouse);
}, 240_000);

afterAll(async () => {
  await warehouse?.close();
  await runtime?.stop();
});

describe('cutpoint CLI on the local runtime', () => {
  it('object put reads stdin from a slow pipe past 64 KiB, also a non-blocking one: every byte stored, checksum verified', async () => {
    const bytes = Buffer.alloc(300 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
    const chunks = Array.from({ length: 12 }, (_, i) => bytes.subarray(i * 25 * 1024, (i + 1) * 25 * 1024));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    // Directly, and under a parent that put the pipe in non-blocking mode (as npx does).
    for (const nonBlocking of [false, true]) {
      const r = await cutpoint(['object', 'put', 'cli/slow-pipe.bin'], {
        stdin: { chunks, delayMs: 100, nonBlocking },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ key: 'cli/slow-pipe.bin', sha256, size: bytes.length });
    }
    const back = await inProcess(['object', 'get', 'cli/slow-pipe.bin', '--sha256', sha256]);
    expect(JSON.parse(back.stdout)).toMatchObject({ verified: true, size: bytes.length });
  }, 120_000);

  it('object put --file FIFO is refused at once and stores nothing', async () => {
    const fifo = join(runtime.root, 'object.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = await cutpoint(['object', 'put', 'cli/fifo.bin', '--file', fifo], { timeoutMs: 90_000 });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^cli\.file_not_regular: .*FIFO/);
    expect(await runtime.ports.objects.head('cli/fifo.bin')).toBeUndefined();
  }, 180_000); // a spawn: measured with this file at load ~10 under 1 s; a spawn alone took 20-25 s at load 16

  it('a flow input nested 5,000 levels deep is cli.input_too_deep (the runner never sees it)', async () => {
    const deep = join(runtime.root, 'deep.json');
    await writeFile(deep, `{"root":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    const r = await inProcess(['flow', 'run', 'commit-generation', '--input', `@${deep}`]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^cli\.input_too_deep: /);
  }, 60_000);

  it('flow run deliver-window delivers the route, and the recovery flows run on the same input shape', async () => {
    const selector = `${runtime.manifestFile}#daily`;
    const bindings = { [CH_ENV]: `chdb:${chDir}`, [PG_ENV]: pgServer.connectionString };
    const r = await inProcess(
      ['flow', 'run', 'deliver-window', '--input', JSON.stringify({ manifestText, selector })],
      bindings,
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { status: string; output: { invocationId: string; state: string } };
    expect(out.status).toBe('SUCCEEDED');
    expect(out.output.state).toBe('CUSTODY_RELEASED');
    expect(Number((await admin.query('SELECT count(*) AS n FROM dwh.events')).rows[0].n)).toBe(inWindow);
    expect((await loadInvocation(runtime.ports, out.output.invocationId)).state).toBe('CUSTODY_RELEASED');
    for (const text of [r.stdout, r.stderr]) expect(text).not.toContain(pgServer.connectionString);
    // The custody fence's session id (and the carried custody's) is a secret: never printed.
    expect(r.stdout).not.toMatch(/"session"/);
    expect(r.stdout).not.toContain(`exec-`);

    // A released invocation permits no action: the recovery flow runs and refuses in its own terms.
    const retire = await inProcess(
      [
        'flow',
        'run',
        'delivery-retire',
        '--input',
        JSON.stringify({ invocationId: out.output.invocationId, manifestText, selector, yes: true }),
      ],
      bindings,
    );
    expect(retire.stderr).not.toContain('stepDeps');
    expect({ code: retire.code, stdout: retire.stdout }).toEqual({ code: 1, stdout: '' });
    expect(retire.stderr.trim().split('\n').at(-1)).toMatch(
      /^flow\.execution_failed: delivery-retire failed with Delivery\./,
    );
  });
});

describe('the CLI where AWS_LAMBDA_FUNCTION_NAME is set (CodeBuild, a Lambda-like container)', () => {
  it("stdout carries the command's one JSON document: the step handlers it runs start no Lambda telemetry (no Powertools line)", async () => {
    const lambdaLike = { AWS_LAMBDA_FUNCTION_NAME: 'cutpoint-ci', AWS_REGION: 'eu-west-1' };
    expect((await inProcess(['stream', 'create', 'ci-lane', '--partitions', '1'], lambdaLike)).code).toBe(0);
    for (const args of [
      ['flow', 'run', 'stream-trim', '--input', JSON.stringify({ stream: 'ci-lane', partition: 0, to: 0 })],
      ['stream', 'trim', 'ci-lane', '--partition', '0', '--to', '0'],
    ]) {
      const r = await inProcess(args, lambdaLike);
      expect(r.code, r.stderr).toBe(0);
      expect(() => JSON.parse(r.stdout), r.stdout.slice(0, 300)).not.toThrow();
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/"level"|"cold_start"|"_aws"/);
    }
  }, 60_000);
});

describe("a state directory attached to the run's emulators (runtime.json with a name)", () => {
  it('names the table and bucket the CLI acts on; a name that is no valid table or bucket makes the file count as absent', async () => {
    expect(runtime.config.tableName).toMatch(/^cutpoint-cli-[0-9a-f]{8}$/);
    expect(runtime.config.bucketName).toBe(runtime.config.tableName);
    const put = await runCutpointInProcess(['object', 'put', 'cli/attached.txt'], {
      cwd: runtime.root,
      env: { CUTPOINT_STATE_DIR: runtime.stateDir },
      stdin: 'attached',
    });
    expect(put.code, put.stderr).toBe(0);
    expect(await runtime.ports.objects.head('cli/attached.txt')).toMatchObject({ size: 8 });

    const bad = join(runtime.root, 'bad-name', 'local');
    await mkdir(bad, { recursive: true });
    const state = JSON.parse(await readFile(join(runtime.stateDir, 'runtime.json'), 'utf8')) as Record<string, unknown>;
    await writeFile(join(bad, 'runtime.json'), JSON.stringify({ ...state, name: 'Not_A_Bucket' }));
    const refused = await runCutpointInProcess(['object', 'put', 'cli/attached.txt'], {
      cwd: runtime.root,
      env: { CUTPOINT_STATE_DIR: bad },
      stdin: 'attached',
    });
    expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^local\.runtime_down: /);
  }, 120_000);
});

describe('cutpoint local up / status / down: the real daemon', () => {
  // The one test that starts a runtime as an operator does: every other CLI test attaches
  // its state directory to the run's emulators (attachStateDir), which skips this.
  it('up starts both emulators in the background (once: a second up at the same time waits for it), the CLI acts on them, down stops them and says so', async () => {
    const root = await mkdtemp(join(tmpdir(), 'cutpoint-local-daemon-'));
    const stateDir = join(root, 'local');
    const env = { ...childEnv(), CUTPOINT_STATE_DIR: stateDir };
    // Spawns for up and down: the daemon must outlive the process that started it.
    const daemon = (args: string[]) => spawnCutpoint(['local', ...args], { cwd: root, env, timeoutMs: 180_000 });
    const here = (args: string[], stdin?: string) =>
      runCutpointInProcess(args, {
        cwd: root,
        env: { CUTPOINT_STATE_DIR: stateDir },
        ...(stdin !== undefined && { stdin }),
      });
    try {
      const [dynamodbPort, s3Port] = [await freePort(), await freePort()];
      // Two `local up` of one state directory at once: exactly one starts it, the other waits for it; both report it up.
      const ups = await Promise.all(
        [0, 1].map(() => daemon(['up', '--dynamodb-port', String(dynamodbPort), '--s3-port', String(s3Port)])),
      );
      for (const up of ups) expect(up.code, up.stderr).toBe(0);
      const [started, other] = ups.map((up) => JSON.parse(up.stdout)) as Array<{
        up: boolean;
        pid: number;
        dynamodbEndpoint: string;
        s3Endpoint: string;
      }> as [{ up: boolean; pid: number; dynamodbEndpoint: string; s3Endpoint: string }, unknown];
      expect(started.up).toBe(true);
      expect(other).toEqual(started);
      expect(existsSync(join(stateDir, 'up.lock'))).toBe(false);
      expect([started.dynamodbEndpoint, started.s3Endpoint]).toEqual([
        expect.stringMatching(new RegExp(`:${dynamodbPort}$`)),
        expect.stringMatching(new RegExp(`:${s3Port}$`)),
      ]);
      expect(JSON.parse((await here(['local', 'status'])).stdout)).toMatchObject({ up: true, pid: started.pid });

      const put = await here(['object', 'put', 'daemon/hello.txt'], 'hello');
      expect(put.code, put.stderr).toBe(0);
      const sha256 = createHash('sha256').update('hello').digest('hex');
      const got = await here(['object', 'get', 'daemon/hello.txt', '--sha256', sha256]);
      expect(JSON.parse(got.stdout)).toMatchObject({ key: 'daemon/hello.txt', size: 5, verified: true });

      const down = await daemon(['down']);
      expect(down.code, down.stderr).toBe(0);
      expect(JSON.parse(down.stdout)).toEqual({ up: false, detail: 'stopped' });
      expect(await isPortFree(dynamodbPort)).toBe(true);
      expect(await isPortFree(s3Port)).toBe(true);
      const after = await here(['object', 'get', 'daemon/hello.txt', '--sha256', sha256]);
      expect({ code: after.code, stdout: after.stdout }).toEqual({ code: 1, stdout: '' });
      expect(after.stderr).toMatch(/^local\.runtime_down: /);
    } finally {
      await localDown(stateDir);
      await rm(root, { recursive: true, force: true });
    }
  }, 300_000); // the real daemon (a JVM start) and spawns: 10.7 s at load ~10; x4 and a JVM start at load 16
});
