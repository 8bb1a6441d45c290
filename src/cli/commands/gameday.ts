import { resolve } from 'node:path';
import { parseManifest, parseSelector, selectRoute, selectorText } from '../../domain/delivery/manifest.js';
import { CutpointError } from '../../domain/errors.js';
import { parseDrillKinds, DRILL_KINDS } from '../../domain/gameday/drill-plan.js';
import { quoted } from '../../domain/echo.js';
import { GAMEDAY_FLOWS, runGameday, type GamedayFlow } from '../../gameday/gameday.js';
import type { GamedayDriver } from '../../ports/gameday-driver.js';
import { AWS_HELP, AWS_OPTIONS, refuseAwsFlagsWithoutAws } from '../aws-runtime.js';
import { parseOptions, unexpectedArgument } from '../grammar.js';
import { printResult, progress, UsageError } from '../io.js';
import { readManifestFile } from './delivery-failures.js';

export const gamedayHelp = `cutpoint gameday [--manifest FILE#ROUTE] [--flows ${GAMEDAY_FLOWS.join(',')}] [--kinds rotate|all|KIND[,KIND...]] [--seed N] [--aws ...]
  a game day: every cut point each flow crosses (cutpoint faults list) armed in turn for
  one fresh run, then the recovery an operator gets, then the invariants.
  deliver-window (needs --manifest): a fresh invocation of the route; the automatic
  recovery flow, then the one command inspect prints, until the journal is final; the
  window's rows exactly once with one receipt and the checkpoint advanced once — or nothing
  published —, a proved window never retired, custody released, no stage left.
  commit-generation: two source objects under a fresh root; the same input re-run until it
  succeeds; one outcome the record, the head and the answer agree on, the committed bytes
  exactly the sources'.
  stream-append: one batch to a fresh lane with an owner session (for stream.append.retire,
  a lane another attempt suspended); stream-resolve-append of what holds the lane and of an
  attempt whose outcome is unknown, then the batch again under a new attempt once proven
  not committed, until acknowledged; the drilled attempt re-run answers what it settled
  to, the lane reads the batch exactly once from offset 0, every attempt committed or
  spent, the lane takes the next batch.
  stream-trim, stream-materialize, stream-compact, stream-gc, stream-maintain: a fresh lane
  of batches in the state the flow acts on: for stream-trim trimmed once; for stream-gc an
  orphan, generation 0, a trim, a compaction and a crashed reader's expired lease, with grace
  0s; for stream-maintain an orphan, a trim and that lease (its GC keeps the deployed grace);
  for generation.abort.cas a WAL object gone bad (stream-compact: two runs racing over one
  start). Recovery: the same input again, faults off, until a run succeeds (a range whose
  generation 0 aborted: its bytes restored, then compacted); once more finds nothing to do.
  Checked: every acknowledged record read exactly once from the trim, none below it; the trim
  at its target, never back; generation 0 and compactions COMMITTED, their bytes exactly their
  ranges', their tasks cleaned; every live copy kept and verified, everything else collected
  at grace 0 (every trimmed copy with the deployed grace), no root left MARKED or DELETING;
  nothing holds the lane (after a trim it takes the next batch).
  Every drill: the fault reached. --kinds: rotate (default: one kind per cut point, shifted by
  --seed), all, or a list of ${DRILL_KINDS.join(', ')}.
  Locally the flows run in this process against the local runtime (cutpoint local up) and
  the bindings' variables; the target must be PostgreSQL (its window is counted).
  Stdout: one JSON report (every drill, its trail and invariants, the violations);
  progress on stderr; exit 0 when every invariant held, 1 when one did not (gameday.invariant_violated)
  ${AWS_HELP.replace(/\n/g, '\n  ')}
  with --aws the drills run the deployed state machines, each fault armed in the
  environment of the stage's Lambdas: a stage deployed with gamedayFaults only
  (gameday.lambda_faults_disabled otherwise), never a production one`;

const OPTIONS = {
  manifest: { type: 'string' },
  flows: { type: 'string' },
  kinds: { type: 'string' },
  seed: { type: 'string' },
  ...AWS_OPTIONS,
} as const;

export class GamedayViolatedError extends CutpointError {
  constructor(violations: number) {
    super(
      'Gameday.InvariantViolated',
      'gameday.invariant_violated',
      `${violations} invariant(s) did not hold; the report on stdout names each drill and what was observed`,
    );
  }
}

export async function gamedayCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parseOptions(args, OPTIONS);
  if (positionals.length) throw unexpectedArgument(positionals[0]);
  refuseAwsFlagsWithoutAws(values);
  const flows = (values.flows ?? GAMEDAY_FLOWS.join(',')).split(',').map((f) => f.trim());
  const unknown = flows.find((f) => !(GAMEDAY_FLOWS as readonly string[]).includes(f));
  if (unknown !== undefined)
    throw new UsageError(`--flows: ${quoted(unknown)} is not drilled; drilled flows: ${GAMEDAY_FLOWS.join(', ')}`);
  if (flows.includes('deliver-window') && typeof values.manifest !== 'string')
    throw new UsageError('gameday of deliver-window needs --manifest FILE#ROUTE (or --flows without it)');
  const kinds = parseDrillKinds(values.kinds ?? 'rotate');
  if (!kinds) throw new UsageError(`--kinds takes rotate, all or a list of ${DRILL_KINDS.join(', ')}`);
  const seed = Number(values.seed ?? '0');
  if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError('--seed takes a non-negative integer');

  const delivery = values.manifest === undefined ? undefined : await routeOf(values.manifest);
  const driver: GamedayDriver = values.aws
    ? (await import('./gameday-aws.js')).awsGamedayDriver(values)
    : (await import('./gameday-local.js')).localGamedayDriver();
  const report = await runGameday(
    driver,
    { flows: flows as GamedayFlow[], choice: { kinds, seed }, ...(delivery ? { delivery } : {}) },
    progress,
  );
  if (report.violations.length === 0) return report;
  printResult(report);
  throw new GamedayViolatedError(report.violations.length);
}

async function routeOf(manifest: string) {
  const given = parseSelector(manifest);
  const file = resolve(given.file);
  const manifestText = await readManifestFile(file);
  return {
    route: selectRoute(parseManifest(manifestText, file), given),
    manifestText,
    selector: selectorText({ file, route: given.route }),
  };
}
