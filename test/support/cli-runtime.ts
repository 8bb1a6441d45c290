import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, inject } from 'vitest';
import { main } from '../../src/cli/main.js';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { provisionLocal } from '../../src/adapters/provision.js';
import { localRuntimeConfig } from '../../src/cli/local-config.js';
import type { CutpointConfig } from '../../src/config.js';
import { REPO_ROOT } from '../../src/local/asl.js';
import { writeRuntimeState } from '../../src/local/runtime-state.js';
import type { Ports } from '../../src/ports/index.js';

/**
 * What the CLI acts on in a test: a local runtime in a temp directory, CUTPOINT_STATE_DIR
 * pointing at it for this test process (a spawned CLI gets it in its env), the route
 * manifest written to `<root>/route.yaml`, and ports on the same table and bucket the CLI
 * resolves. The state directory is attached to the run's emulators (attachStateDir), not
 * a daemon of its own. `stop()` restores the variable and removes everything.
 */
export interface CliRuntime {
  root: string;
  stateDir: string;
  manifestFile: string;
  config: CutpointConfig;
  ports: Ports;
  stop(): Promise<void>;
}

export async function startCliRuntime(prefix: string, manifestText: string): Promise<CliRuntime> {
  const before = process.env.CUTPOINT_STATE_DIR;
  const root = await mkdtemp(join(tmpdir(), `cutpoint-${prefix}-`));
  const stateDir = join(root, 'local');
  const manifestFile = join(root, 'route.yaml');
  await writeFile(manifestFile, manifestText);
  await attachStateDir(stateDir);
  process.env.CUTPOINT_STATE_DIR = stateDir;
  const config = await localRuntimeConfig();
  await provisionLocal(config);
  return {
    root,
    stateDir,
    manifestFile,
    config,
    ports: awsPorts(config, inertFaults),
    async stop() {
      if (before === undefined) delete process.env.CUTPOINT_STATE_DIR;
      else process.env.CUTPOINT_STATE_DIR = before;
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The in-process CLI on one runtime: its state directory, cwd its root, CUTPOINT_FAULTS `faults` (none by default), stdin `stdin`. */
export type RuntimeCli = (argv: string[], faults?: string, stdin?: string) => Promise<CliRun>;

/**
 * A CLI runtime of the calling test file's own, started before its tests and stopped after
 * them (call it at the file's top level), and the in-process CLI on it.
 */
export function useCliRuntime(prefix: string, manifestText = ''): { runtime: () => CliRuntime; cli: RuntimeCli } {
  let started: CliRuntime | undefined;
  beforeAll(async () => {
    started = await startCliRuntime(prefix, manifestText);
  }, 240_000);
  afterAll(async () => {
    await started?.stop();
  });
  const runtime = (): CliRuntime => {
    if (!started) throw new Error("test bug: the CLI runtime is used outside the file's tests");
    return started;
  };
  return {
    runtime,
    cli: (argv, faults = '', stdin = '') =>
      runCutpointInProcess(argv, {
        cwd: runtime().root,
        stdin,
        env: { CUTPOINT_STATE_DIR: runtime().stateDir, CUTPOINT_FAULTS: faults },
      }),
  };
}

/**
 * Makes `stateDir` a running local runtime for the CLI without starting one: the
 * `runtime.json` a `cutpoint local up` daemon writes, naming the run's emulators (see
 * global-setup.ts) and a table and bucket of its own, so files running side by side never
 * share data. Its pid is this test process (alive while the file runs, which is all the
 * CLI checks); `local status` would call it stale and `local down` signals nothing, since
 * that pid is no daemon. The one test of the real daemon is in cli-local.test.ts.
 */
export async function attachStateDir(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  await writeRuntimeState(stateDir, {
    pid: process.pid,
    dynamodbPid: process.pid,
    dynamodbEndpoint: inject('dynamodbEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
    region: 'us-east-1',
    startedAt: new Date().toISOString(),
    name: `cutpoint-cli-${randomUUID().slice(0, 8)}`,
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A parent like npx: runs the bin with stdio inherited, then opens its own stdin as a
 * stream, which sets O_NONBLOCK on the pipe the child is reading (the same open file).
 */
const NON_BLOCKING_PARENT = `const child = require('node:child_process').spawn(process.execPath, process.argv.slice(1), { stdio: 'inherit' });
setTimeout(() => process.stdin.pause(), 200);
child.on('exit', (code) => process.exit(code ?? 1));`;

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * Fed to the child's stdin (a pipe) chunk by chunk, `delayMs` apart: a slow writer.
   * `nonBlocking`: the bin runs under a parent Node process that opens the same stdin as
   * a stream while the bin reads it, which puts the shared pipe in O_NONBLOCK mode, as
   * `npx cutpoint` can. Without `stdin`, stdin is /dev/null.
   */
  stdin?: { chunks: Uint8Array[]; delayMs?: number; nonBlocking?: boolean };
  /** Kills the child (SIGKILL) after this long; a killed run has code null. */
  timeoutMs?: number;
}

/**
 * The real bin in a child process, without blocking this one (which may host the embedded
 * PostgreSQL or ClickHouse the child talks to).
 */
export function spawnCutpoint(args: string[], options: SpawnOptions): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const bin = [`${REPO_ROOT}bin/cutpoint.js`, ...args];
    const child = spawn(process.execPath, options.stdin?.nonBlocking ? ['-e', NON_BLOCKING_PARENT, ...bin] : bin, {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    const timer =
      options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    const input = options.stdin;
    if (input && child.stdin) {
      const stdin = child.stdin;
      stdin.on('error', () => undefined); // the child may exit before reading everything
      void (async () => {
        for (const chunk of input.chunks) {
          if (input.delayMs) await new Promise((r) => setTimeout(r, input.delayMs));
          if (!stdin.write(chunk)) await new Promise((r) => stdin.once('drain', r));
        }
        stdin.end();
      })();
    }
  });
}

export interface InProcessOptions {
  /**
   * Variables set for this call only and restored after it (`undefined` unsets one): the
   * state directory, the variables a binding names. CUTPOINT_FAULTS is always set — to
   * `''` unless given — so no fault spec of this process leaks into the command.
   */
  env?: Record<string, string | undefined>;
  /** The command's stdin: these bytes, then end of input (default: empty). */
  stdin?: string | Uint8Array;
  /** The working directory for this call only (relative paths resolve against it); restored after. */
  cwd?: string;
}

/**
 * The CLI's `main(argv)` in this process — the bin minus process startup (tsx and every
 * adapter loaded again, seconds each on a loaded machine): exit code, stdout and stderr
 * captured, env, stdin and cwd swapped in for the call and restored after. For tests whose
 * subject is the command, not the process boundary (a real pipe, the exit status of the
 * real process, env handed to a child): those use `spawnCutpoint`. Calls must not overlap
 * (process.env, cwd and the streams are this process's); tests in a file run sequentially.
 */
export async function runCutpointInProcess(argv: string[], options: InProcessOptions = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = { CUTPOINT_FAULTS: '', ...options.env };
  const savedEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const applyEnv = (vars: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(vars)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  const savedCwd = process.cwd();
  const stdinDescriptor = Object.getOwnPropertyDescriptor(process, 'stdin');
  const out = process.stdout.write;
  const err = process.stderr.write;
  let stdout = '';
  let stderr = '';
  const text = (chunk: string | Uint8Array) =>
    typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  applyEnv(env);
  try {
    if (options.cwd !== undefined) process.chdir(options.cwd);
    const input =
      options.stdin === undefined
        ? []
        : [typeof options.stdin === 'string' ? Buffer.from(options.stdin) : Buffer.from(options.stdin)];
    Object.defineProperty(process, 'stdin', {
      value: Readable.from(input),
      configurable: true,
      enumerable: true,
      writable: true,
    });
    process.stdout.write = ((chunk: string | Uint8Array) => (
      (stdout += text(chunk)),
      true
    )) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => (
      (stderr += text(chunk)),
      true
    )) as typeof process.stderr.write;
    return { code: await main(argv), stdout, stderr };
  } catch (error) {
    // main must never reject; report it as what an operator would see (a crash).
    return {
      code: null,
      stdout,
      stderr: `${stderr}[main rejected] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    if (stdinDescriptor) Object.defineProperty(process, 'stdin', stdinDescriptor);
    process.chdir(savedCwd);
    applyEnv(savedEnv);
  }
}
