import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureDynamoDbLocal } from './dynamodb-local-jar.js';
import { LocalRuntimeError } from './errors.js';
import { freePort, isPortFree } from './free-port.js';
import { reapOnExit } from './reap-on-exit.js';

/**
 * Runs AWS DynamoDB Local (a JVM process) for tests and the local runtime.
 *
 * Loopback only? Not possible: DynamoDB Local 1.25.1 (`-help`) has no host or
 * bind-address flag; its Jetty listens on all interfaces (`*:<port>`). We still
 * hand out 127.0.0.1 endpoints, but anyone who can reach this machine on that
 * port can reach the emulator. Telemetry is switched off because this version
 * otherwise reports usage to AWS by default.
 */

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  /** Settles when the JVM exits for any reason (lets a supervisor notice a crash). */
  exited: Promise<void>;
  /** Terminates the JVM and resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** Defaults to a free loopback port. */
  port?: number;
  /** Persist tables in this directory; omitted means `-inMemory`. */
  dbPath?: string;
  /** How long to wait for the first successful ListTables; JVM start takes ~3-5 s. */
  readyTimeoutMs?: number;
}

const STOP_GRACE_MS = 10_000;
const OUTPUT_TAIL_LINES = 30;

export async function startDynamoDbLocal(opts: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  // Checked before the one-off 54 MiB download so a missing JRE fails fast.
  await assertJavaOnPath();
  const emulatorDir = await ensureDynamoDbLocal();
  const port = opts.port ?? (await freePort());
  if (!(await isPortFree(port))) {
    throw new LocalRuntimeError(`cannot start DynamoDB Local: port ${port} is already in use`, {
      code: 'local.port_in_use',
    });
  }

  // Absolute, because the JVM runs with the emulator directory as its cwd.
  const dbPath = opts.dbPath === undefined ? undefined : resolve(opts.dbPath);
  const storage = dbPath === undefined ? ['-inMemory'] : ['-dbPath', dbPath];
  if (dbPath !== undefined) await mkdir(dbPath, { recursive: true });

  const child = spawn(
    'java',
    [
      // The client JIT only (C1) and the serial collector: an emulator run (a test suite, a
      // soak, a local flow) is short, and C2's compilations cost more CPU than they return.
      // Measured side by side, 100 stream schedules each: the JVM used 15 s of CPU against
      // 27 s with the defaults, at the same wall time; on two cores that CPU is the tests'.
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(emulatorDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(emulatorDir, 'DynamoDBLocal.jar'),
      '-sharedDb', // one database regardless of the credentials/region a client uses
      '-disableTelemetry',
      '-port',
      String(port),
      ...storage,
    ],
    {
      // DynamoDB Local drops dynamodb-local-metadata.json into its working
      // directory; keep that in the cache rather than wherever we were started.
      cwd: emulatorDir,
      // The documented opt-out, on top of -disableTelemetry.
      env: { ...process.env, DDB_LOCAL_TELEMETRY: '0' },
      // Output is drained continuously: a full pipe would block the JVM.
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  reapOnExit(child);

  const tail: string[] = [];
  const remember = (chunk: Buffer): void => {
    tail.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - OUTPUT_TAIL_LINES));
  };
  child.stdout.on('data', remember);
  child.stderr.on('data', remember);

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

  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (exitReason === undefined) {
      child.kill('SIGTERM');
      const escalate = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(escalate);
    }
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exitReason !== undefined) {
      throw new LocalRuntimeError(
        `DynamoDB Local exited during startup (${exitReason}). Last output:\n${tail.join('\n')}`,
      );
    }
    if (await dynamoDbAnswers(endpoint)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new LocalRuntimeError(
        `DynamoDB Local did not answer ListTables on ${endpoint} within ${opts.readyTimeoutMs ?? 60_000} ms. ` +
          `Last output:\n${tail.join('\n')}`,
      );
    }
    await Promise.race([sleep(100), exited]);
  }

  if (child.pid === undefined) throw new LocalRuntimeError('DynamoDB Local has no pid');
  return { endpoint, port, pid: child.pid, exited, stop };
}

/**
 * True when a real ListTables call succeeds. A bare TCP connect is not enough:
 * Jetty accepts connections before DynamoDB Local can serve requests.
 */
export async function dynamoDbAnswers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
        // DynamoDB Local rejects unsigned requests (MissingAuthenticationToken)
        // but never checks the signature, so a well-formed dummy header will do.
        authorization:
          'AWS4-HMAC-SHA256 Credential=local/20000101/us-east-1/dynamodb/aws4_request, ' +
          'SignedHeaders=host, Signature=0',
      },
      body: '{}',
      signal: AbortSignal.timeout(2_000),
    });
    const body = (await response.json()) as { TableNames?: unknown };
    return response.ok && Array.isArray(body.TableNames);
  } catch {
    return false;
  }
}

/** Throws a LocalRuntimeError with install instructions when no `java` is on PATH. */
export async function assertJavaOnPath(): Promise<void> {
  const names = process.platform === 'win32' ? ['java.exe'] : ['java'];
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) {
      try {
        await access(join(dir, name), constants.X_OK);
        return;
      } catch {
        // keep looking
      }
    }
  }
  throw new LocalRuntimeError(
    'DynamoDB Local needs a Java runtime, but `java` is not on PATH. ' +
      'Install one, e.g. `apt-get install -y default-jre-headless` on Debian/Ubuntu ' +
      'or `brew install openjdk` on macOS.',
  );
}
