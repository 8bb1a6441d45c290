import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { bundleIsFresh } from '../../bin/bundle-freshness.js';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startLocalRuntime } from '../../src/local/runtime.js';
import { describeFailure, type ScheduleResult } from '../support/sched/run-schedule.js';
import { SCENARIOS } from './scenarios/index.js';
import { readResults, runShare, toLine, type AnyScenario, type Share } from './soak-worker.js';
import { SoakTally } from './soak-tally.js';

/**
 * `npm run soak -- --schedules 10000`: the scheduler's long run, on emulators it starts
 * itself. Schedules go round-robin over the scenarios (or those --scenario names), seeds
 * counting up from --first, spread over --workers processes; progress on stderr, one summary
 * JSON on stdout; exit 0 when every schedule held, 1 when one broke an invariant (each
 * failure with its replay command), 2 for bad arguments. `--scenario X --seed N --trace`
 * replays one schedule and prints its every move.
 */

const USAGE =
  'usage: npm run soak -- [--schedules N] [--scenario NAME[,NAME...]] [--first SEED] [--seed SEED] [--workers N] [--trace] [--stop-on-failure]';

const OPTIONS = {
  schedules: { type: 'string', default: '500' },
  scenario: { type: 'string' },
  first: { type: 'string', default: '1' },
  seed: { type: 'string' },
  workers: { type: 'string', default: '2' },
  trace: { type: 'boolean', default: false },
  'stop-on-failure': { type: 'boolean', default: false },
  // Internal: a worker process's share and the parent's emulators.
  'worker-of': { type: 'string' },
  dynamodb: { type: 'string' },
  s3: { type: 'string' },
} as const;

class UsageError extends Error {
  override name = 'Soak.Usage';
}

interface Plan extends Share {
  workers: number;
  trace: boolean;
}

function planOf(argv: string[]): Plan & { workerOf?: string; dynamodb?: string; s3?: string } {
  let values;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const names = values.scenario?.split(',').map((n) => n.trim()) ?? SCENARIOS.map((s) => s.name);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length)
    throw new UsageError(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const scenarios = SCENARIOS.filter((s) => names.includes(s.name)) as unknown as AnyScenario[];
  const seed = values.seed === undefined ? undefined : whole(values.seed, '--seed');
  const [index, of] = (values['worker-of'] ?? '0/1').split('/').map((n) => whole(n, '--worker-of'));
  return {
    scenarios,
    total: seed === undefined ? whole(values.schedules, '--schedules') : scenarios.length,
    first: whole(values.first, '--first'),
    seed,
    index: index!,
    of: of!,
    stopOnFailure: values['stop-on-failure'],
    workers: Math.max(1, whole(values.workers, '--workers')),
    trace: values.trace,
    workerOf: values['worker-of'],
    dynamodb: values.dynamodb,
    s3: values.s3,
  };
}

function whole(raw: string, flag: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new UsageError(`${flag} takes a non-negative integer, got "${raw}"`);
  return n;
}

/**
 * The CLI bundle built when it is missing or stale (a fresh worktree, an edit since): the
 * processes the schedules fork (the bounded reader's child) then start from it instead of
 * compiling their sources through tsx, which halved the publication schedules' time
 * (src/local/process-entry.ts decides by the same freshness rule).
 */
function ensureBundle(): void {
  const root = new URL('../../', import.meta.url);
  if (bundleIsFresh(root)) return;
  process.stderr.write('soak: building the CLI bundle (npm run build), so forked processes start from it\n');
  const built = spawnSync(process.execPath, [fileURLToPath(new URL('scripts/build-cli.mjs', root))], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status ?? built.signal})`);
}

async function main(argv: string[]): Promise<number> {
  const plan = planOf(argv);
  if (plan.workerOf) {
    await runShare(plan, { dynamodb: plan.dynamodb!, s3: plan.s3! }, (r) => process.stdout.write(`${toLine(r)}\n`));
    return 0;
  }
  ensureBundle();
  process.stderr.write('soak: starting DynamoDB Local and the S3 emulator\n');
  const runtime = await startLocalRuntime();
  const tally = new SoakTally();
  const workers = Math.min(plan.workers, plan.total);
  process.stderr.write(
    `soak: ${plan.total} schedules over ${plan.scenarios.map((s) => s.name).join(', ')}, ${workers} worker(s)\n`,
  );
  // Ctrl-C (SIGINT) or a stop (SIGTERM): the summary of the schedules run so far, marked
  // interrupted, then exit 1 (not a pass); the workers are stopped first. A schedule still
  // in flight then ends against emulators being stopped (ECONNREFUSED): not a finding, and
  // not reported as one.
  let stopping = false;
  const interrupted = (signal: NodeJS.Signals): void => {
    stopping = true;
    for (const child of WORKERS) child.kill('SIGTERM');
    process.stderr.write(`soak: ${signal} after ${tally.progress(plan.total)}\n`);
    process.stdout.write(`${JSON.stringify({ ...tally.summary(), interrupted: signal }, null, 2)}\n`);
    void runtime.stop().finally(() => process.exit(1));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  const onResult = (r: ScheduleResult): void => {
    if (stopping) return;
    tally.add(r);
    if (plan.trace) process.stderr.write(`${r.scenario} seed ${r.seed}:\n${r.trace.join('\n')}\n`);
    if (!r.ok) process.stderr.write(`soak: FAILED ${describeFailure(r)}\n`);
    if (tally.shouldPrint(tally.count === plan.total)) process.stderr.write(`soak: ${tally.progress(plan.total)}\n`);
  };
  try {
    const endpoints = { dynamodb: runtime.dynamodbEndpoint, s3: runtime.s3Endpoint };
    if (workers <= 1 || plan.trace) {
      await runShare({ ...plan, index: 0, of: 1 }, endpoints, onResult);
    } else {
      const shares = Array.from({ length: workers }, (_, i) => startWorker(argv, i, workers, endpoints, onResult));
      const codes = await Promise.all(shares);
      if (codes.some((c) => c !== 0)) throw new Error(`a soak worker exited with ${codes.join(', ')}`);
    }
  } finally {
    await runtime.stop();
  }
  process.stdout.write(`${JSON.stringify(tally.summary(), null, 2)}\n`);
  return tally.failed === 0 && tally.count === plan.total ? 0 : 1;
}

const WORKERS = new Set<ChildProcess>();

/** One worker process over the same emulators; its stderr passes through. */
async function startWorker(
  argv: string[],
  index: number,
  of: number,
  endpoints: { dynamodb: string; s3: string },
  onResult: (r: ScheduleResult) => void,
): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      ...argv,
      '--worker-of',
      `${index}/${of}`,
      '--dynamodb',
      endpoints.dynamodb,
      '--s3',
      endpoints.s3,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  WORKERS.add(child);
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  await readResults(child, onResult);
  return exited;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const usage = error instanceof UsageError;
    process.stderr.write(
      usage ? `soak.usage: ${error.message}\n${USAGE}\n` : `soak.failed: ${(error as Error).stack ?? String(error)}\n`,
    );
    process.exit(usage ? 2 : 1);
  },
);
