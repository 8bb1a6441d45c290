import { execFile } from 'node:child_process';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * `runtime.json`: the hand-off between the background daemon (which writes it
 * once both emulators answer, and deletes it on shutdown) and every other
 * process that wants the endpoints (CLI, tests, demo).
 */

export interface RuntimeEndpoints {
  dynamodbEndpoint: string;
  s3Endpoint: string;
  region: 'us-east-1';
}

export interface RuntimeState extends RuntimeEndpoints {
  /** The daemon process (the one to signal). */
  pid: number;
  /** The DynamoDB Local JVM, so `local down` can still kill it if the daemon hangs. */
  dynamodbPid: number;
  startedAt: string;
  /**
   * The table and bucket the CLI uses on these emulators; absent (what `local up` writes)
   * means `cutpoint-local`. Lets several state directories share one pair of emulators
   * without sharing data (the test suite attaches one per test file).
   */
  name?: string;
}

const execFileAsync = promisify(execFile);

/** A name valid as both a DynamoDB table and an S3 bucket. */
const RUNTIME_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export function runtimeFile(stateDir: string): string {
  return join(stateDir, 'runtime.json');
}

export async function readRuntimeState(stateDir: string): Promise<RuntimeState | undefined> {
  let raw: string;
  try {
    raw = await readFile(runtimeFile(stateDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(raw) as Partial<RuntimeState>;
    const valid =
      typeof value.pid === 'number' &&
      typeof value.dynamodbPid === 'number' &&
      typeof value.dynamodbEndpoint === 'string' &&
      typeof value.s3Endpoint === 'string' &&
      value.region === 'us-east-1' &&
      typeof value.startedAt === 'string' &&
      (value.name === undefined || (typeof value.name === 'string' && RUNTIME_NAME.test(value.name)));
    return valid ? (value as RuntimeState) : undefined;
  } catch {
    return undefined; // torn or hand-edited file: treat as absent
  }
}

/** Write-then-rename so readers never see a half-written file. */
export async function writeRuntimeState(stateDir: string, state: RuntimeState): Promise<void> {
  const tmp = `${runtimeFile(stateDir)}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, runtimeFile(stateDir));
}

export async function removeRuntimeState(stateDir: string): Promise<void> {
  await rm(runtimeFile(stateDir), { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/**
 * True when `pid` is alive and its command line mentions `marker` (the daemon
 * script path). Guards against pid reuse: after a reboot or a SIGKILLed daemon,
 * a stale runtime.json may name an unrelated process we must not signal.
 * Falls back to a plain liveness check where `ps` is unavailable.
 */
export async function isProcessRunning(pid: number, marker: string): Promise<boolean> {
  if (!isAlive(pid)) return false;
  try {
    const { stdout } = await execFileAsync('ps', ['-ww', '-o', 'command=', '-p', String(pid)]);
    return stdout.includes(marker);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
