import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { LocalRuntimeError } from './errors.js';
import { processEntry } from './process-entry.js';
import { reapOnExit } from './reap-on-exit.js';

/**
 * A local ClickHouse server for separate processes: embedded ClickHouse (chdb) on one data
 * directory, hosted by its own child process (clickhouse-host-server.ts) behind the
 * ClickHouse HTTP interface on 127.0.0.1. chdb binds one data directory per process and
 * only one process may hold a directory, so whatever else must reach the same data — a
 * killable reader child, a CLI next to a running flow — connects with
 * `openClickHouse({ kind: 'http', url })`, exactly as against a production server.
 *
 * The host listens on a port the OS picks (no bind race), is killed with this process
 * (reapOnExit), and also exits on its own when this process dies uncatchably (its stdin
 * is our pipe). stop() waits until it has exited, so the directory is free afterwards.
 */

export interface ClickHouseHost {
  /** `http://127.0.0.1:<port>` — give it to openClickHouse({ kind: 'http', url }). */
  url: string;
  port: number;
  pid: number;
  /** Absolute data directory the host holds. */
  dataDir: string;
  /** Milliseconds from spawn to the ready announcement (engine loaded, directory bound, listening). */
  startupMs: number;
  /** Settles when the host process exits for any reason. */
  exited: Promise<void>;
  /** SIGTERM, then SIGKILL after the grace period; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>;
}

export interface ClickHouseHostOptions {
  /** Created when missing. */
  dataDir: string;
  /** Bound on the engine load and directory bind (default 60 s). */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL (default 10 s). */
  stopGraceMs?: number;
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The CLI bundle's clickhouse-host-server.js when compiled or fresh, else the .ts source (process-entry.ts).
const SERVER_PATH = processEntry(import.meta.url, 'clickhouse-host-server');
const OUTPUT_TAIL_LINES = 20;

interface Announcement {
  port?: number;
  error?: string;
  message?: string;
}

export async function startClickHouseHost(opts: ClickHouseHostOptions): Promise<ClickHouseHost> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...(SERVER_PATH.endsWith('.ts') ? ['--import', 'tsx'] : []), SERVER_PATH, dataDir],
    {
      // `--import tsx` resolves from the cwd.
      cwd: REPO_ROOT,
      // stdin is the host's lifeline (see above); stdout carries the one announcement line.
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  reapOnExit(child);

  const tail: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - OUTPUT_TAIL_LINES));
  });
  let exitReason: string | undefined;
  const exited = new Promise<void>((settle) => {
    child.once('exit', (code, signal) => {
      exitReason = signal === null ? `exit code ${String(code)}` : `signal ${signal}`;
      settle();
    });
    child.once('error', (err) => {
      exitReason = err.message;
      settle();
    });
  });
  const grace = opts.stopGraceMs ?? 10_000;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (exitReason === undefined) {
        child.kill('SIGTERM');
        const escalate = setTimeout(() => child.kill('SIGKILL'), grace);
        await exited;
        clearTimeout(escalate);
      }
      child.stdin.destroy();
    })());

  const timeoutMs = opts.readyTimeoutMs ?? 60_000;
  let announcement: Announcement | undefined;
  try {
    announcement = await firstLine(child.stdout, exited, timeoutMs);
  } catch (error) {
    await stop();
    throw error;
  }
  if (announcement?.port === undefined || child.pid === undefined) {
    await stop();
    if (announcement?.error === 'busy') {
      throw new LocalRuntimeError(
        `the ClickHouse data directory ${dataDir} is in use by another process; one process at a time may hold it: stop that process (or connect to its host), then repeat`,
        { code: 'local.clickhouse_dir_busy' },
      );
    }
    const why =
      announcement?.message ??
      (exitReason !== undefined ? `it exited (${exitReason})` : `no ready line within ${timeoutMs} ms`);
    throw new LocalRuntimeError(`the local ClickHouse host did not start: ${why}. Last output:\n${tail.join('\n')}`, {
      code: 'local.clickhouse_host_failed',
    });
  }
  const port = announcement.port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    dataDir,
    startupMs: Math.round(performance.now() - started),
    exited,
    stop,
  };
}

/** The first stdout line as JSON; undefined when the process exits first. */
async function firstLine(
  stdout: NodeJS.ReadableStream,
  exited: Promise<void>,
  timeoutMs: number,
): Promise<Announcement | undefined> {
  const lines = createInterface({ input: stdout });
  let timer: NodeJS.Timeout | undefined;
  try {
    const line = await Promise.race([
      new Promise<string>((settle) => lines.once('line', settle)),
      exited.then(() => undefined),
      new Promise<undefined>((settle) => {
        timer = setTimeout(() => settle(undefined), timeoutMs);
      }),
    ]);
    if (line === undefined) return undefined;
    try {
      return JSON.parse(line) as Announcement;
    } catch {
      return { error: 'failed', message: 'unreadable ready line' };
    }
  } finally {
    clearTimeout(timer);
    lines.close();
    // Keep draining stdout: a full pipe would block the host.
    stdout.resume();
  }
}
