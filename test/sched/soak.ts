import { parseArgs } from 'node:util';
import { startLocalRuntime } from '../../src/local/runtime.js';
import { describeFailure, runSchedule, type ScheduleResult } from '../support/sched/run-schedule.js';
import type { Scenario } from '../support/sched/scenario.js';
import type { SchedStores } from '../support/sched/stores.js';
import { SCENARIOS } from './scenarios/index.js';
import { SoakTally } from './soak-tally.js';

/**
 * `npm run soak -- --schedules 10000`: the scheduler's long run, on emulators it starts
 * itself. Schedules go round-robin over the scenarios (or the ones --scenario names), seed
 * after seed from --first; progress on stderr, one summary JSON on stdout; exit 0 when
 * every schedule held, 1 when one broke an invariant (each failure with its replay command),
 * 2 for bad arguments. `--scenario X --seed N --trace` replays one schedule and prints its
 * every move.
 */

const USAGE = 'usage: npm run soak -- [--schedules N] [--scenario NAME[,NAME...]] [--first SEED] [--seed SEED] [--trace] [--stop-on-failure]';

type AnyScenario = Scenario<{ stores: SchedStores }>;

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        schedules: { type: 'string', default: '500' },
        scenario: { type: 'string' },
        first: { type: 'string', default: '1' },
        seed: { type: 'string' },
        trace: { type: 'boolean', default: false },
        'stop-on-failure': { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`soak.usage: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const count = wholeNumber(args.schedules, '--schedules');
  const first = wholeNumber(args.first, '--first');
  const seed = args.seed === undefined ? undefined : wholeNumber(args.seed, '--seed');
  const names = args.scenario?.split(',').map((n) => n.trim()) ?? SCENARIOS.map((s) => s.name);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (count === undefined || first === undefined || (args.seed !== undefined && seed === undefined) || unknown.length) {
    process.stderr.write(`soak.usage: ${unknown.length ? `unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}` : 'counts and seeds are non-negative integers'}\n${USAGE}\n`);
    return 2;
  }
  const scenarios = SCENARIOS.filter((s) => names.includes(s.name)) as AnyScenario[];
  process.stderr.write(`soak: starting DynamoDB Local and the S3 emulator\n`);
  const runtime = await startLocalRuntime();
  const endpoints = { dynamodb: runtime.dynamodbEndpoint, s3: runtime.s3Endpoint };
  const worlds = new Map<AnyScenario, { stores: SchedStores }>();
  const tally = new SoakTally();
  try {
    for (const scenario of scenarios) worlds.set(scenario, await scenario.open(endpoints));
    const total = seed === undefined ? count : scenarios.length;
    process.stderr.write(`soak: ${total} schedules over ${scenarios.map((s) => s.name).join(', ')}\n`);
    for (let i = 0; i < total; i++) {
      const scenario = scenarios[i % scenarios.length]!;
      const result = await runSchedule(scenario, worlds.get(scenario)!, seed ?? first + Math.floor(i / scenarios.length));
      tally.add(result);
      report(result, args.trace);
      if (tally.shouldPrint(i + 1 === total)) process.stderr.write(`soak: ${tally.progress(total)}\n`);
      if (!result.ok && args['stop-on-failure']) break;
    }
  } finally {
    for (const [scenario, world] of worlds) await scenario.close(world).catch(() => undefined);
    await runtime.stop();
  }
  process.stdout.write(`${JSON.stringify(tally.summary(), null, 2)}\n`);
  return tally.failed === 0 ? 0 : 1;
}

function report(result: ScheduleResult, trace: boolean): void {
  if (trace) process.stderr.write(`${result.scenario} seed ${result.seed}:\n${result.trace.join('\n')}\n`);
  if (!result.ok) process.stderr.write(`soak: FAILED ${describeFailure(result)}\n`);
}

function wholeNumber(raw: string, _flag: string): number | undefined {
  const n = Number(raw);
  return raw.trim() !== '' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak.failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
