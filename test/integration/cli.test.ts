import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allHelp, HELP } from '../../src/cli/main.js';
import { CUT_POINT_NAMES } from '../../src/cut-points.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { freePort } from '../../src/local/free-port.js';
import { runCutpointInProcess, spawnCutpoint } from '../support/cli-runtime.js';
import { publicationManifest } from '../support/publication-world.js';

/**
 * The real `cutpoint` bin, as an operator runs it: stdout JSON, stderr diagnostics, exit
 * 0/1/2. Where the process boundary is not the subject, `inProcess` runs the CLI's `main`
 * in this process instead (the bin only adds process startup, seconds each on a loaded
 * machine); each remaining spawn says why it is one.
 */
function cutpoint(args: string[], env: Record<string, string> = {}) {
  const out = spawnSync(process.execPath, [`${REPO_ROOT}bin/cutpoint.js`, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

describe('cutpoint CLI', () => {
  it('--help prints usage and exits 0', async () => {
    const r = await inProcess(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${HELP}\n`);
    expect(r.stdout).toMatch(/^ {2}local {6}start, stop and show the local runtime/m);
    expect(r.stdout).toContain('CUTPOINT_FAULTS');
  });

  it('an unknown command is a usage error: exit 2, nothing on stdout', () => {
    // A spawn: the exit status of the real process (bin/cutpoint.js sets it from main's result).
    const r = cutpoint(['frobnicate']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^cli\.unknown_command: /);
  });

  it('a flow command with bad arguments exits 2 before touching anything', async () => {
    const r = await inProcess(['flow', 'run', 'no-such-flow', '--input', '{}']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
  });

  it('flow run publish-clickhouse with the target on chdb: is refused before the runtime is touched (quality.reader_unreachable): nothing created, no path printed', async () => {
    // The reader child of ObserveTarget could never open the directory: the flow would EXCHANGE, then stay TARGET_PENDING.
    const root = await mkdtemp(join(tmpdir(), 'cutpoint-exchange-chdb-'));
    try {
      const dir = join(root, 'never-created');
      const input = JSON.stringify({
        manifestText: publicationManifest({ table: 'events' }),
        selector: '/config/publish.yaml#daily',
      });
      // No runtime under this state directory: touching it would fail otherwise (local.runtime_down).
      const r = await inProcess(['flow', 'run', 'publish-clickhouse', '--input', input], {
        CUTPOINT_STATE_DIR: join(root, 'state'),
        CH_URL: `chdb:${dir}`,
        CH_PUB_URL: `chdb:${dir}`,
      });
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^quality\.reader_unreachable: .*CH_PUB_URL.*http\(s\):\/\//m);
      expect(r.stderr).not.toContain(dir);
      expect(existsSync(dir)).toBe(false);
      expect(existsSync(join(root, 'state'))).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('an invalid fault spec is a stable diagnostic: exit 1, stdout empty', async () => {
    const r = await inProcess(['flow', 'run', 'commit-generation', '--input', '{}'], { CUTPOINT_FAULTS: 'nonsense' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toMatch(/^(faults\.invalid_spec|local\.runtime_down): /);
  });

  it('the demo (npm start): a lost publication COMMIT response, then inspect → reconcile → resume to CUSTODY_RELEASED; every window row exactly once', () => {
    // A spawn: the demo is `npm start`, the real bin end to end (it sets binding variables of its own).
    const r = cutpoint(['demo']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    const id = result.invocationId as string;
    expect(id).toMatch(/^inv-[a-z2-7]{26}$/);
    expect(result.run).toMatchObject({
      flow: 'deliver-window',
      status: 'FAILED',
      error: 'Delivery.NeedsRecovery',
      faultsFired: 1,
    });
    expect(result.run.cause).toContain('PUBLICATION_UNKNOWN');
    // The projections, in the order an operator runs them, each as `delivery … --format json` prints it.
    expect(Object.keys(result)).toEqual([
      'demo',
      'route',
      'invocationId',
      'run',
      'inspect',
      'reconcile',
      'resume',
      'outcome',
    ]);
    const projection = (state: string, permitted: string[]) => ({
      kind: 'cutpoint.delivery-recovery.v1',
      schema_version: 1,
      invocation_id: id,
      route: 'daily',
      state,
      permitted_actions: permitted,
    });
    expect(result.inspect).toMatchObject({
      command: `npx cutpoint delivery inspect ${id} --format json`,
      projection: projection('PUBLICATION_UNKNOWN', ['reconcile']),
    });
    expect(result.reconcile.command).toMatch(
      new RegExp(`^npx cutpoint delivery reconcile ${id} --manifest \\S+\\.yaml#daily --yes --format json$`),
    );
    expect(result.reconcile.projection).toMatchObject(projection('PUBLISHED', ['resume']));
    expect(result.resume.projection).toMatchObject({ ...projection('CUSTODY_RELEASED', []), holds_custody: false });
    const { outcome } = result;
    expect(outcome).toMatchObject({
      state: 'CUSTODY_RELEASED',
      duplicates: 0,
      missing: 0,
      rowsOutsideWindow: 0,
      receipts: 1,
      checkpointAdvanced: 1,
      sourceCallsDuringRecovery: 0,
    });
    expect(outcome.windowRowsInSource).toBeGreaterThan(0);
    expect(outcome.rowsInTarget).toBe(outcome.windowRowsInSource);
    expect(outcome.distinctKeys).toBe(outcome.windowRowsInSource);
    expect(outcome.checkpointWindowEnd).toBe(result.resume.projection.window.end);
    // The outcome is what the last lines of stdout say.
    expect(r.stdout.trimEnd().split('\n').slice(-16).join('\n')).toContain('"sourceCallsDuringRecovery": 0');
    // Progress on stderr, with the equivalent command for each step, in order.
    const steps = [
      'npx cutpoint delivery run --manifest',
      `$ npx cutpoint delivery inspect ${id}`,
      `$ npx cutpoint delivery reconcile ${id}`,
      `$ npx cutpoint delivery resume ${id}`,
    ].map((s) => r.stderr.indexOf(s));
    expect(steps.every((i) => i > 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(r.stderr).toContain('→ Publish');
    expect(r.stderr).toContain('→ StoppedForRecovery');
    // The connection values the bindings name never leave the process.
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toMatch(/postgres(ql)?:\/\//);
      expect(text).not.toContain('chdb:');
    }
  }, 180_000); // a spawn that starts its own DynamoDB Local, chdb and PostgreSQL: 16.3 s at load 4-8

  it('demo generation commits exactly one verified generation after a lost commit response', async () => {
    // In-process: the demo's own runtime starts either way; the real bin end to end is the delivery demo's spawn above.
    const r = await inProcess(['demo', 'generation']);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({
      status: 'SUCCEEDED',
      outcome: { outcome: 'COMMITTED', resolvedBy: 'exact-winner-reload' },
      faultsFired: [{ cutPoint: 'generation.commit.cas', kind: 'lose-response' }],
      committedGenerations: 1,
      bytesVerified: true,
    });
    expect(r.stderr).toContain('→ ResolveCommit');
  });

  it('an unknown demo is a usage error: exit 2, nothing on stdout', async () => {
    expect(await inProcess(['demo', 'nope'])).toMatchObject({ code: 2, stdout: '' });
  });
});

/** main() in this process, stdout and stderr captured. */
const inProcess = (argv: string[], env: Record<string, string> = {}) =>
  runCutpointInProcess(argv, { cwd: REPO_ROOT, env });

/** Every command's help text (each command module's own). */
const FULL_HELP = await allHelp();

/** Every `cutpoint <command> [<subcommand>]` the help texts list (`a|b|c` lists several). */
function commandsInHelp(): string[][] {
  const found = new Map<string, string[]>();
  for (const line of FULL_HELP.split('\n')) {
    const m = /^\s*cutpoint ([a-z-]+)(?: ([a-z][a-z|-]*))?/.exec(line);
    if (!m?.[1]) continue;
    for (const sub of m[2]?.split('|') ?? [undefined]) {
      const args = sub ? [m[1], sub] : [m[1]];
      found.set(args.join(' '), args);
    }
  }
  return [...found.values()];
}

describe('cutpoint CLI: the grammar is strict', () => {
  it('an option given twice, or an argument too many, is a usage error (exit 2) before anything runs', async () => {
    const root = await mkdtemp(join(tmpdir(), 'cutpoint-grammar-'));
    const before = process.env.CUTPOINT_STATE_DIR;
    process.env.CUTPOINT_STATE_DIR = join(root, 'local');
    try {
      for (const argv of [
        ['stream', 'read', 'orders', '--partition', '0', '--from', '0', '--from', '2'],
        ['delivery', 'reconcile', 'inv-x', '--manifest', 'a.yaml#d', '--manifest=b.yaml#d', '--yes'],
        ['object', 'put', 'k', 'extra', '--file', 'f'],
        ['flow', 'run', 'stream-trim', 'extra', '--input', '{}'],
      ]) {
        const r = await inProcess(argv);
        expect({ argv, code: r.code, stdout: r.stdout }).toEqual({ argv, code: 2, stdout: '' });
        expect(r.stderr).toMatch(/^cli\.usage: (--[a-z-]+ is given more than once|unexpected argument "extra")/);
      }
      expect(existsSync(join(root, 'local'))).toBe(false);
    } finally {
      if (before === undefined) delete process.env.CUTPOINT_STATE_DIR;
      else process.env.CUTPOINT_STATE_DIR = before;
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('cutpoint CLI: --help acts on nothing', () => {
  let root = '';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cutpoint-help-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const env = () => ({ ...process.env, CUTPOINT_STATE_DIR: join(root, 'local'), CUTPOINT_FAULTS: '' });

  it('the help texts list every command', () => {
    const listed = commandsInHelp().map((a) => a.join(' '));
    for (const c of [
      'demo',
      'demo generation',
      'local up',
      'local down',
      'local status',
      'flow run',
      'object put',
      'object get',
      'stream create',
      'stream append',
      'stream trim',
      'delivery run',
      'delivery inspect-all',
      'delivery retire',
      'faults list',
    ]) {
      expect(listed).toContain(c);
    }
  });

  it.each(commandsInHelp())(
    '%s %s --help and -h print its help on stdout, exit 0, and run nothing',
    async (...args: string[]) => {
      // In-process: the help is decided before any command runs, so nothing can be started here.
      for (const flag of ['--help', '-h']) {
        // Also after other arguments, which may be incomplete or invalid.
        for (const argv of [
          [...args, flag],
          [...args, 'some-name', '--partition', '0', flag],
        ]) {
          const r = await inProcess(argv);
          expect({ argv, code: r.code, stderr: r.stderr }).toEqual({ argv, code: 0, stderr: '' });
          expect(r.stdout).toContain(`cutpoint ${args[0]}`);
          if (args[1]) expect(r.stdout).toContain(args[1]);
        }
      }
    },
  );

  it('the real bin: local up --help starts nothing, local down --help stops nothing, stream create --help is help (exit 0)', async () => {
    // Spawns: the subject is the real bin (its startup must not start or stop a runtime either).
    const argvs = [
      ['local', 'up', '--help'],
      ['local', 'down', '-h'],
      ['stream', 'create', '--help'],
      ['delivery', 'retire', 'inv-x', '--yes', '--help'],
    ];
    const runs = await Promise.all(
      argvs.map((argv) => spawnCutpoint(argv, { cwd: root, env: env(), timeoutMs: 150_000 })),
    );
    for (const [i, argv] of argvs.entries()) {
      const r = runs[i] as Awaited<ReturnType<typeof spawnCutpoint>>;
      expect({ argv, code: r.code, stderr: r.stderr }).toEqual({ argv, code: 0, stderr: '' });
      expect(r.stdout).toContain(`cutpoint ${argv[0]} `);
    }
    expect(existsSync(join(root, 'local'))).toBe(false);
    expect(await readdir(root)).toEqual([]);
  }, 180_000); // three spawns at once: 1.2 s at load 4-8; a spawn alone took 20-25 s at load 16
});

describe('cutpoint CLI: bad input is refused with a stable code, never a crash or a hang', () => {
  let root = '';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cutpoint-input-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });
  /** No runtime in this state directory: a command that got past its input says local.runtime_down. */
  const run = (args: string[], env: Record<string, string> = {}) =>
    runCutpointInProcess(args, { cwd: root, env: { CUTPOINT_STATE_DIR: join(root, 'local'), ...env } });
  /** The real bin in a child process, for what only a process boundary shows (a pipe, a blocking open). */
  const spawnRun = (args: string[], extra: Partial<Parameters<typeof spawnCutpoint>[1]> = {}) =>
    spawnCutpoint(args, {
      cwd: root,
      env: { ...process.env, CUTPOINT_STATE_DIR: join(root, 'local'), CUTPOINT_FAULTS: '' },
      timeoutMs: 90_000,
      ...extra,
    });
  const refused = (r: { code: number | null; stdout: string; stderr: string }, code: string, exit = 1) => {
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: exit, stdout: '' });
    expect(r.stderr).toMatch(new RegExp(`^${code.replace('.', '\\.')}: `));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  };

  it('a FIFO as --input @file or --manifest is refused at once (cli.file_not_regular), never waited on', async () => {
    const fifo = join(root, 'input.fifo');
    execFileSync('mkfifo', [fifo]);
    // Spawns: a regression would block on opening the FIFO; a child can be killed, a thread of this process could not.
    // A blocked open never ends; a refusal ends in seconds (20-25 s per spawn measured at load 16 on 2 cores).
    const [input, manifest] = await Promise.all([
      spawnRun(['flow', 'run', 'commit-generation', '--input', `@${fifo}`], { timeoutMs: 90_000 }),
      spawnRun(['delivery', 'run', '--manifest', `${fifo}#daily`], { timeoutMs: 90_000 }),
    ]);
    refused(input, 'cli.file_not_regular');
    refused(manifest, 'delivery.manifest_unavailable');
    expect(manifest.stderr).toContain('cli.file_not_regular');
  }, 240_000);

  it('a file whose size says 0 and that never ends (/proc/self/pagemap) as --input @file or --manifest is cli.input_too_large: the bytes read are capped, not the size stat reports', async () => {
    // Spawns: a regression reads until the process runs out of memory.
    const [input, manifest] = await Promise.all([
      spawnRun(['flow', 'run', 'commit-generation', '--input', '@/proc/self/pagemap'], { timeoutMs: 90_000 }),
      spawnRun(['delivery', 'run', '--manifest', '/proc/self/pagemap#daily'], { timeoutMs: 90_000 }),
    ]);
    refused(input, 'cli.input_too_large');
    refused(manifest, 'delivery.manifest_unavailable');
    expect(manifest.stderr).toContain('cli.input_too_large');
  }, 240_000);

  it('AWS_CONFIG_FILE or AWS_SHARED_CREDENTIALS_FILE at a FIFO or /dev/zero is refused before anything reads it (cli.file_not_regular), whatever the region comes from', async () => {
    const fifo = join(root, 'aws-config.fifo');
    execFileSync('mkfifo', [fifo]);
    const read = ['stream', 'read', 'orders', '--partition', '0', '--from', '0', '--aws'];
    const aws = (extra: NodeJS.ProcessEnv) => ({
      env: {
        ...process.env,
        CUTPOINT_STATE_DIR: join(root, 'local'),
        AWS_CONFIG_FILE: join(root, 'none'),
        AWS_SHARED_CREDENTIALS_FILE: join(root, 'none'),
        AWS_REGION: '',
        AWS_DEFAULT_REGION: '',
        AWS_PROFILE: '',
        ...extra,
      },
      timeoutMs: 90_000,
    });
    // Spawns: a regression blocks on the FIFO (or fills memory from /dev/zero) in a synchronous read no timer can end.
    const runs = await Promise.all([
      spawnRun([...read, '--region', 'eu-west-1'], aws({ AWS_CONFIG_FILE: fifo })),
      spawnRun(read, aws({ AWS_SHARED_CREDENTIALS_FILE: fifo })),
      spawnRun(read, aws({ AWS_CONFIG_FILE: '/dev/zero' })),
    ]);
    for (const [i, r] of runs.entries()) {
      refused(r, 'cli.file_not_regular');
      expect(r.stderr, String(i)).toMatch(i === 1 ? /AWS_SHARED_CREDENTIALS_FILE/ : /AWS_CONFIG_FILE/);
    }
  }, 240_000);

  it('--aws with no connection to AWS (nothing listens at AWS_ENDPOINT_URL) is aws.unreachable with the next step; a takeover refused so stores no session', async () => {
    const server = createServer();
    await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
    const env = {
      AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'example',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: '',
      AWS_PROFILE: '',
      AWS_CONFIG_FILE: join(root, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(root, 'none'),
      CUTPOINT_TABLE_NAME: 'cutpoint-table',
      CUTPOINT_BUCKET_NAME: 'cutpoint-bucket',
    };
    const sessions = join(root, 'sessions');
    for (const args of [
      ['stream', 'read', 'orders', '--partition', '0', '--from', '0', '--aws'], // DynamoDB
      ['stream', 'trim', 'orders', '--partition', '0', '--to', '0', '--aws'], // CloudFormation (the state machine from the stack)
      ['stream', 'takeover', 'orders', '--partition', '0', '--aws'],
    ]) {
      const r = await run(args, env);
      refused(r, 'aws.unreachable');
      expect(r.stderr).toContain('check the endpoint');
      expect(r.stderr).not.toContain(String(port));
    }
    // Step Functions itself unreachable, the state machine named: the pending session is forgotten again.
    const started = await run(['stream', 'takeover', 'orders', '--partition', '0', '--aws'], {
      ...env,
      CUTPOINT_STREAM_TAKEOVER_ARN: 'arn:aws:states:eu-west-1:111111111111:stateMachine:takeover',
    });
    expect(started.stderr.trim().split('\n').at(-1)).toMatch(/^aws\.unreachable: no connection to Step Functions/);
    // No region at all: refused before the session is stored.
    refused(
      await run(['stream', 'takeover', 'orders', '--partition', '0', '--aws'], { ...env, AWS_REGION: '' }),
      'aws.region_missing',
    );
    expect(existsSync(sessions)).toBe(false);
  });

  it('missing files and directories get stable codes with the path, not cutpoint.internal_error', async () => {
    refused(
      await run(['flow', 'run', 'commit-generation', '--input', `@${join(root, 'nope.json')}`]),
      'cli.file_not_found',
    );
    refused(await run(['flow', 'run', 'commit-generation', '--input', `@${root}`]), 'cli.file_not_regular');
    const big = join(root, 'big.json');
    await writeFile(big, JSON.stringify({ pad: 'x'.repeat(300 * 1024) }));
    refused(await run(['flow', 'run', 'commit-generation', '--input', `@${big}`]), 'cli.input_too_large');
  });

  it('JSON input nested 5,000 levels deep is cli.input_too_deep before anything runs', async () => {
    const deep = join(root, 'deep.json');
    await writeFile(deep, `${'['.repeat(5000)}${']'.repeat(5000)}`);
    refused(await run(['flow', 'run', 'commit-generation', '--input', `@${deep}`]), 'cli.input_too_deep');
    refused(
      await run(['flow', 'run', 'commit-generation', '--input', `{"a":${'{"a":'.repeat(100)}1${'}'.repeat(101)}`]),
      'cli.input_too_deep',
    );
  });

  it('stdin from a slow pipe, larger than the 64 KiB pipe buffer, is read to its end (no EAGAIN)', async () => {
    // Padded in a field the flow reads (an unknown one is refused by name before the runtime is looked for).
    const text = JSON.stringify({ root: 'r', taskId: 'y'.repeat(150 * 1024) });
    const bytes = Buffer.from(text);
    const chunks = Array.from({ length: 10 }, (_, i) =>
      bytes.subarray((i * bytes.length) / 10, ((i + 1) * bytes.length) / 10),
    );
    // Spawns: the subject is a real pipe on the child's stdin. The three children run side by side.
    const [plain, nonBlocking, truncated] = await Promise.all([
      spawnRun(['flow', 'run', 'commit-generation', '--input', '-'], { stdin: { chunks, delayMs: 150 } }),
      // Under a parent that made the pipe non-blocking (npx): still read to its end.
      spawnRun(['flow', 'run', 'commit-generation', '--input', '-'], {
        stdin: { chunks, delayMs: 150, nonBlocking: true },
      }),
      spawnRun(['flow', 'run', 'commit-generation', '--input', '-'], {
        stdin: { chunks: chunks.slice(0, 9), delayMs: 50 },
      }),
    ]);
    // Read and parsed completely: the command then stops at the missing runtime.
    refused(plain, 'local.runtime_down');
    refused(nonBlocking, 'local.runtime_down');
    // A truncated document is invalid JSON, so the whole pipe was read.
    refused(truncated, 'flow.invalid_input');
  }, 300_000); // three spawns at once: 20-25 s each at load 16 (60 s timed out there), plus the slow writes (1.5 s); 8.3 s one after another at load 4

  it('control characters an argument carries are escaped in diagnostics: one line, no raw ESC', async () => {
    const evil = 'x\u001b[2J\nforged.code: gotcha\r';
    for (const r of [
      await run(['stream', 'describe', 's', '--faults', `${evil}:fail`]),
      await run(['stream', 'describe', 's', `--${evil}`]),
      await run(['flow', 'run', 'commit-generation', '--input', `@${join(root, evil)}`]),
    ]) {
      expect(r.stdout).toBe('');
      const first = r.stderr.split('\n')[0] ?? '';
      expect(first).toMatch(/^[a-z]+\.[a-z_]+: /);
      expect(r.stderr).not.toContain('\u001b');
      expect(r.stderr).not.toContain('\r');
      expect(r.stderr).not.toMatch(/^forged/m);
      expect(first).toMatch(/\\(x1b|u001b)/);
    }
  });

  it('a misspelt cut point in CUTPOINT_FAULTS is refused, naming the nearest, a few valid ones and where all are', async () => {
    const r = await run(['stream', 'describe', 's'], { CUTPOINT_FAULTS: 'stream.append.headcas:fail' });
    refused(r, 'faults.unknown_cut_point');
    expect(r.stderr).toContain('did you mean "stream.append.head-cas"');
    expect(r.stderr).toMatch(/valid cut points \(`cutpoint faults list`\): cli\.object\.put, .* and \d+ more\n$/);
    // The same spelling given as --faults is part of the command line: a usage error naming the code.
    const flag = await run(['stream', 'describe', 's', '--faults', 'delivery.staging.create:fail']);
    refused(flag, 'cli.usage', 2);
    expect(flag.stderr).toMatch(/^cli\.usage: --faults: faults\.unknown_cut_point: /);
  });

  it('faults list prints every cut point with its subsystem and flows', async () => {
    const r = await run(['faults', 'list']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      kinds: string[];
      cutPoints: Array<{
        name: string;
        subsystem: string;
        flows: string[];
        commands: string[];
        handlers: string[];
        libraries: string[];
      }>;
    };
    expect(out.kinds).toContain('lose-response');
    expect(new Set(out.cutPoints.map((c) => c.name))).toEqual(CUT_POINT_NAMES);
    expect(out.cutPoints.find((c) => c.name === 'delivery.publish.commit')).toMatchObject({
      subsystem: 'delivery',
      flows: expect.arrayContaining(['deliver-window', 'delivery-resume']),
    });
    expect(out.cutPoints.find((c) => c.name === 'generation.commit.cas')).toMatchObject({
      subsystem: 'generation',
      flows: expect.arrayContaining(['commit-generation', 'stream-compact']),
    });
    expect(out.cutPoints.find((c) => c.name === 'recovery.dispatch.start')).toMatchObject({
      subsystem: 'recovery',
      handlers: ['functions/recovery/dispatch.ts'],
    });
    for (const c of out.cutPoints)
      expect(c.flows.length + c.commands.length + c.handlers.length + c.libraries.length, c.name).toBeGreaterThan(0);
  });

  it('a refused connection to the local runtime is cutpoint.connection_refused with the next step', async () => {
    // A runtime.json whose daemon pid is alive (this process) but whose emulators are gone.
    const stateDir = join(root, 'stale');
    const dead = await freePort();
    await rm(stateDir, { recursive: true, force: true });
    execFileSync('mkdir', ['-p', stateDir]);
    await writeFile(
      join(stateDir, 'runtime.json'),
      JSON.stringify({
        pid: process.pid,
        dynamodbPid: process.pid,
        dynamodbEndpoint: `http://127.0.0.1:${dead}`,
        s3Endpoint: `http://127.0.0.1:${dead}`,
        region: 'us-east-1',
        startedAt: new Date().toISOString(),
      }),
    );
    const r = await run(['stream', 'describe', 's'], { CUTPOINT_STATE_DIR: stateDir });
    refused(r, 'cutpoint.connection_refused');
    expect(r.stderr).toContain('cutpoint local up');
  }, 60_000);

  it('local up on a port in use is local.port_in_use naming the flag, and starts nothing', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1' }, r));
    const held = (server.address() as { port: number }).port;
    try {
      const stateDir = join(root, 'busy');
      const r = await run(['local', 'up', '--dynamodb-port', String(held), '--s3-port', String(await freePort())], {
        CUTPOINT_STATE_DIR: stateDir,
      });
      refused(
        r.stderr.startsWith('cutpoint: ') ? { ...r, stderr: r.stderr.split('\n').slice(1).join('\n') } : r,
        'local.port_in_use',
      );
      expect(r.stderr).toContain(`port ${held}`);
      expect(r.stderr).toContain('--dynamodb-port');
      expect(existsSync(join(stateDir, 'runtime.json'))).toBe(false);
      const env = await run(['local', 'up'], {
        CUTPOINT_STATE_DIR: stateDir,
        CUTPOINT_DYNAMODB_PORT: String(await freePort()),
        CUTPOINT_S3_PORT: String(held),
      });
      expect(env.code).toBe(1);
      expect(env.stderr).toContain('local.port_in_use');
      expect(env.stderr).toContain('CUTPOINT_S3_PORT');
      refused(await run(['local', 'up', '--s3-port', '99999']), 'cli.usage', 2);
      refused(await run(['local', 'up'], { CUTPOINT_DYNAMODB_PORT: 'eight' }), 'local.invalid_port');
    } finally {
      server.close();
    }
  }, 120_000);
});
