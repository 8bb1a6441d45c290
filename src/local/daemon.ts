/**
 * Background process behind `cutpoint local up`, spawned detached by localUp().
 * Usage: daemon.ts <stateDir> <dynamodbPort> <s3Port>
 *
 * Owns both emulators (data under <stateDir>/data), publishes their endpoints in
 * <stateDir>/runtime.json once they answer, and on SIGTERM stops them before
 * deleting that file, so runtime.json existing means "was up and not stopped".
 * stdout/stderr are redirected to <stateDir>/daemon.log by localUp().
 */
import { LocalRuntimeError } from './errors.js';
import { removeRuntimeState, writeRuntimeState } from './runtime-state.js';
import { startLocalRuntime, type LocalRuntime } from './runtime.js';
import { persistentDirOf } from './state-dir.js';

const [stateDirArg, dynamodbPortArg, s3PortArg] = process.argv.slice(2);
const dynamodbPort = Number(dynamodbPortArg);
const s3Port = Number(s3PortArg);
if (stateDirArg === undefined || !Number.isInteger(dynamodbPort) || !Number.isInteger(s3Port)) {
  console.error('usage: daemon.ts <stateDir> <dynamodbPort> <s3Port>');
  process.exit(2);
}
const stateDir: string = stateDirArg;

const log = (message: string): void => {
  console.log(`${new Date().toISOString()} ${message}`);
};

let runtime: LocalRuntime | undefined;
let stopping = false;

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log('stopping emulators');
  let exitCode = code;
  try {
    await runtime?.stop();
  } catch (err) {
    console.error(err);
    exitCode = 1;
  }
  await removeRuntimeState(stateDir);
  log('stopped');
  process.exit(exitCode);
}

// Installed before startup so a SIGTERM during startup (localUp timing out)
// exits cleanly; the JVM started so far is killed by reapOnExit on exit.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(signal, () => void shutdown(0));
}

try {
  log(`starting (DynamoDB Local on ${dynamodbPort}, S3 on ${s3Port})`);
  runtime = await startLocalRuntime({ persistentDir: persistentDirOf(stateDir), dynamodbPort, s3Port });
  await writeRuntimeState(stateDir, {
    pid: process.pid,
    dynamodbPid: runtime.dynamodbPid,
    dynamodbEndpoint: runtime.dynamodbEndpoint,
    s3Endpoint: runtime.s3Endpoint,
    region: runtime.region,
    startedAt: new Date().toISOString(),
  });
  log(`ready: dynamodb ${runtime.dynamodbEndpoint}, s3 ${runtime.s3Endpoint}`);
  // If the JVM dies on its own, take the whole runtime down so status is honest.
  void runtime.exited.then(() => {
    if (!stopping) {
      log('DynamoDB Local exited unexpectedly');
      void shutdown(1);
    }
  });
} catch (err) {
  // localUp shows the tail of daemon.log; keep expected failures to one line.
  console.error(err instanceof LocalRuntimeError ? `${err.name}: ${err.message}` : err);
  process.exit(1);
}
