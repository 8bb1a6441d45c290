import { spawn } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { assertLocalEngines } from '../adapters/local-engines.js';
import { assertJavaOnPath, dynamoDbAnswers, startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { ensureDynamoDbLocal } from './dynamodb-local-jar.js';
import { LocalPortInUseError, LocalRuntimeError } from './errors.js';
import { lockHeld, tryLock } from './exclusive-lock.js';
import { isPortFree } from './free-port.js';
import { DEFAULT_DYNAMODB_PORT, DEFAULT_S3_PORT, PORT_SETTINGS, type RuntimePorts } from './ports.js';
import {
  isAlive,
  isProcessRunning,
  readRuntimeState,
  removeRuntimeState,
  type RuntimeEndpoints,
  type RuntimeState,
} from './runtime-state.js';
import { isRunning, signalQuietly, waitForExit } from './daemon-process.js';
import { s3Answers, startS3Emulator, type S3Emulator } from './s3-emulator.js';
import { REPO_ROOT } from './asl.js';
import { defaultStateDir, persistentDirOf } from './state-dir.js';

export type { RuntimeEndpoints } from './runtime-state.js';

export const LOCAL_REGION = 'us-east-1';
export { DEFAULT_DYNAMODB_PORT, DEFAULT_S3_PORT };

export interface LocalRuntime extends RuntimeEndpoints {
  dynamodbPid: number;
  /** Settles if DynamoDB Local dies on its own (or after stop()); lets the daemon exit with it. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

export interface LocalRuntimeOptions {
  /** Keep data under this directory across restarts; omitted means in-memory. */
  persistentDir?: string;
  /** Both default to free ports. */
  dynamodbPort?: number;
  s3Port?: number;
}

// Layout under a persistent directory; localDown also uses it to recognise our JVM.
const dynamoDbDataDir = (persistentDir: string): string => join(persistentDir, 'dynamodb');
const s3DataDir = (persistentDir: string): string => join(persistentDir, 's3');

/** Starts DynamoDB Local and the S3 emulator side by side. */
export async function startLocalRuntime(opts: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  assertLocalEngines(); // local.runtime_missing before anything starts
  const dir = opts.persistentDir;
  const [dynamo, s3] = await Promise.allSettled([
    startDynamoDbLocal({
      ...(opts.dynamodbPort !== undefined && { port: opts.dynamodbPort }),
      ...(dir !== undefined && { dbPath: dynamoDbDataDir(dir) }),
    }),
    startS3Emulator({
      ...(opts.s3Port !== undefined && { port: opts.s3Port }),
      ...(dir !== undefined && { dataDir: s3DataDir(dir) }),
    }),
  ]);
  if (dynamo.status === 'rejected' || s3.status === 'rejected') {
    // Never leave half a runtime running.
    await Promise.allSettled([stopIfStarted(dynamo), stopIfStarted(s3)]);
    throw dynamo.status === 'rejected' ? dynamo.reason : (s3 as PromiseRejectedResult).reason;
  }
  return {
    dynamodbEndpoint: dynamo.value.endpoint,
    s3Endpoint: s3.value.endpoint,
    region: LOCAL_REGION,
    dynamodbPid: dynamo.value.pid,
    exited: dynamo.value.exited,
    stop: async () => {
      await Promise.all([dynamo.value.stop(), s3.value.stop()]);
    },
  };
}

async function stopIfStarted(result: PromiseSettledResult<DynamoDbLocal | S3Emulator>): Promise<void> {
  if (result.status === 'fulfilled') await result.value.stop();
}

// ---------------------------------------------------------------------------
// Persistent runtime for `cutpoint local up|down|status`: a detached daemon
// process owns the emulators so they outlive the CLI invocation.
// ---------------------------------------------------------------------------

export type LocalStatus =
  ({ up: true; pid: number; startedAt: string } & RuntimeEndpoints) | { up: false; detail: string };

export interface LocalUpOptions {
  dynamodbPort?: number;
  s3Port?: number;
  /** Bound on waiting for the daemon to report ready. */
  timeoutMs?: number;
}

// Same extension as this module, so it also works once compiled to .js.
const DAEMON_PATH = fileURLToPath(
  new URL(`./daemon${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);
// A daemon started from the sources (src/local/daemon.ts) or from the CLI bundle
// (dist/cli/daemon.js, `npm run build`) is the same daemon to status and down, whichever runs them.
const DAEMON_MARKERS = [
  ...new Set([DAEMON_PATH, join(REPO_ROOT, 'src/local/daemon.ts'), join(REPO_ROOT, 'dist/cli/daemon.js')]),
];

export async function localStatus(stateDir = defaultStateDir()): Promise<LocalStatus> {
  const state = await readRuntimeState(resolve(stateDir));
  if (!state) return { up: false, detail: 'not running' };
  if (!(await isRunning(state.pid, DAEMON_MARKERS))) {
    return { up: false, detail: `daemon pid ${state.pid} is gone (stale runtime.json)` };
  }
  const [dynamoOk, s3Ok] = await Promise.all([dynamoDbAnswers(state.dynamodbEndpoint), s3Answers(state.s3Endpoint)]);
  if (!dynamoOk) return { up: false, detail: `DynamoDB Local at ${state.dynamodbEndpoint} does not answer` };
  if (!s3Ok) return { up: false, detail: `S3 emulator at ${state.s3Endpoint} does not answer` };
  const { pid, startedAt, dynamodbEndpoint, s3Endpoint, region } = state;
  return { up: true, pid, startedAt, dynamodbEndpoint, s3Endpoint, region };
}

/** Endpoints of the running persistent runtime (and its table/bucket name if not the default), or undefined when it is not up. */
export async function readRuntimeEndpoints(
  stateDir = defaultStateDir(),
): Promise<(RuntimeEndpoints & Pick<RuntimeState, 'name'>) | undefined> {
  const state = await readRuntimeState(resolve(stateDir));
  // A liveness check only (no HTTP round trip): cheap enough for every CLI call.
  if (!state || !isAlive(state.pid)) return undefined;
  const { dynamodbEndpoint, s3Endpoint, region, name } = state;
  return { dynamodbEndpoint, s3Endpoint, region, ...(name !== undefined && { name }) };
}

/** Starts the background daemon unless it is already up; resolves once both emulators answer. */
export async function localUp(stateDirArg = defaultStateDir(), opts: LocalUpOptions = {}): Promise<LocalStatus> {
  // Absolute, because the daemon runs with a different cwd and because localDown
  // recognises our JVM by this path in its command line.
  const stateDir = resolve(stateDirArg);
  assertLocalEngines(); // local.runtime_missing before anything starts
  // Exactly one `local up` of a state directory starts it; another one at the same time
  // waits for that one and reports what it brought up (never a second daemon, never "up": false).
  const lockPath = join(stateDir, 'up.lock');
  const lock = await tryLock(lockPath);
  if (!lock.held) return waitForOtherUp(stateDir, lockPath, opts.timeoutMs ?? 120_000);
  try {
    return await startUnlessUp(stateDir, opts);
  } finally {
    await lock.release();
  }
}

/** Another `local up` of `stateDir` holds its lock: wait until it is done, then what it left. */
async function waitForOtherUp(stateDir: string, lockPath: string, timeoutMs: number): Promise<LocalStatus> {
  const deadline = Date.now() + timeoutMs + 30_000;
  while (await lockHeld(lockPath)) {
    if (Date.now() > deadline)
      throw new LocalRuntimeError(
        `another \`cutpoint local up\` of ${stateDir} is still starting it; run \`cutpoint local status\` later`,
      );
    await sleep(200);
  }
  const status = await localStatus(stateDir);
  if (status.up) return status;
  throw new LocalRuntimeError(
    `another \`cutpoint local up\` of ${stateDir} ran at the same time and did not bring it up (${status.detail}); run \`cutpoint local up\` again`,
  );
}

async function startUnlessUp(stateDir: string, opts: LocalUpOptions): Promise<LocalStatus> {
  const current = await localStatus(stateDir);
  if (current.up) return current;
  await localDown(stateDir); // clear a stale or unhealthy previous daemon
  const ports: RuntimePorts = {
    dynamodbPort: opts.dynamodbPort ?? DEFAULT_DYNAMODB_PORT,
    s3Port: opts.s3Port ?? DEFAULT_S3_PORT,
  };
  await assertPortsFree(ports);

  // Done in the foreground so a missing JRE or the one-off download (and its
  // progress line) show up in the user's terminal rather than in daemon.log.
  await assertJavaOnPath();
  await ensureDynamoDbLocal();

  await mkdir(stateDir, { recursive: true });
  const logPath = join(stateDir, 'daemon.log');
  const log = await open(logPath, 'w');
  const args = [
    // `--import` resolves from the cwd, which is the repo root (see spawn below).
    ...(DAEMON_PATH.endsWith('.ts') ? ['--import', 'tsx'] : []),
    DAEMON_PATH,
    stateDir,
    String(ports.dynamodbPort),
    String(ports.s3Port),
  ];
  // detached: own process group, so the terminal's Ctrl-C does not reach it
  // and it survives this CLI process. stdio goes to a file, not our pipes.
  const daemon = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  let exitReason: string | undefined;
  daemon.once('exit', (code, signal) => {
    exitReason = signal === null ? `exit code ${String(code)}` : `signal ${signal}`;
  });
  daemon.once('error', (err) => {
    exitReason = err.message;
  });
  daemon.unref();

  const timeoutMs = opts.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await readRuntimeState(stateDir);
    if (state?.pid === daemon.pid) return localStatus(stateDir);
    if (exitReason !== undefined) {
      throw new LocalRuntimeError(`local runtime daemon failed to start (${exitReason}); ${await logTail(logPath)}`);
    }
    if (Date.now() > deadline) {
      if (daemon.pid !== undefined) signalQuietly(daemon.pid, 'SIGTERM');
      throw new LocalRuntimeError(`local runtime not ready within ${timeoutMs} ms; ${await logTail(logPath)}`);
    }
    await sleep(200);
  }
}

/** Stops the daemon (which stops both emulators) and waits until it is gone. */
export async function localDown(
  stateDirArg = defaultStateDir(),
  opts: { timeoutMs?: number } = {},
): Promise<LocalStatus> {
  const stateDir = resolve(stateDirArg);
  const state = await readRuntimeState(stateDir);
  if (state) {
    if (await isRunning(state.pid, DAEMON_MARKERS)) {
      signalQuietly(state.pid, 'SIGTERM');
      if (!(await waitForExit(state.pid, DAEMON_MARKERS, opts.timeoutMs ?? 30_000))) {
        signalQuietly(state.pid, 'SIGKILL'); // hung while shutting down
        await waitForExit(state.pid, DAEMON_MARKERS, 5_000);
      }
    }
    // A daemon that was SIGKILLed (or hung) leaves its JVM behind, still holding
    // the port. Only kill it if its command line names this state directory.
    const jvmMarker = dynamoDbDataDir(persistentDirOf(stateDir));
    if (await isProcessRunning(state.dynamodbPid, jvmMarker)) {
      signalQuietly(state.dynamodbPid, 'SIGTERM');
      if (!(await waitForExit(state.dynamodbPid, jvmMarker, 10_000))) signalQuietly(state.dynamodbPid, 'SIGKILL');
    }
  }
  await removeRuntimeState(stateDir);
  return { up: false, detail: 'stopped' };
}

/** The last lines of the daemon's log, on one line (a diagnostic is one line). */
async function logTail(logPath: string): Promise<string> {
  try {
    const lines = (await readFile(logPath, 'utf8')).trimEnd().split('\n').slice(-5);
    return `last lines of ${logPath}: ${lines.join(' | ')}`;
  } catch {
    return `(no ${logPath})`;
  }
}

/**
 * Both ports must be free before the daemon starts: a port held by another clone's
 * runtime (or anything else) is `local.port_in_use`, naming the flag and the variable
 * that choose another, and nothing is started.
 */
async function assertPortsFree(ports: RuntimePorts): Promise<void> {
  for (const key of ['dynamodbPort', 's3Port'] as const) {
    const setting = PORT_SETTINGS[key];
    if (!(await isPortFree(ports[key]))) {
      throw new LocalPortInUseError(
        setting.service,
        ports[key],
        `start this runtime on another port with \`cutpoint local up ${setting.flag} N\` (or ${setting.env}=N)`,
      );
    }
  }
}
