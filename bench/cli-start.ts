import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../src/local/asl.js';

/**
 * The CLI's start, as an operator meets it: each case is a whole process (spawn to exit,
 * wall clock), side by side with `node -e 0` on the same Node in the same run. Rounds
 * rotate the order of the cases, so a noisy second hits every case alike; each case's
 * figure is its median, and its ratio the median over rounds of (case / node -e 0) in the
 * same round. Prints only: nothing here asserts on speed.
 */

export interface CliCase {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** The exit status this case must end with (a wrong one voids the measurement). */
  exit: number;
}

export interface CliCaseResult {
  name: string;
  command: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** Median over rounds of this case's time / node -e 0's time in the same round. */
  ratio: number;
}

export interface CliStartResult {
  node: string;
  build: string;
  rounds: number;
  cases: CliCaseResult[];
  /** Why the old-Node hand-over was not measured, if it was not. */
  notes: string[];
}

const BIN = join(REPO_ROOT, 'bin/cutpoint.js');

/** A Node older than 22 on this machine (the bin hands over from it to the bundled Node 24). */
function olderNode(): string | undefined {
  const candidates = [
    ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'node')),
    '/usr/bin/node',
    '/usr/local/bin/node',
  ];
  for (const path of new Set(candidates)) {
    if (!existsSync(path)) continue;
    const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (Number(/^v(\d+)/.exec(version)?.[1] ?? 99) < 22) return path;
  }
  return undefined;
}

export function cliCases(): { cases: CliCase[]; notes: string[] } {
  const node = process.execPath;
  const cli = (name: string, args: string[], exit = 0, env?: Record<string, string>): CliCase => ({
    name,
    command: node,
    args: [BIN, ...args],
    exit,
    ...(env ? { env } : {}),
  });
  const cases: CliCase[] = [
    { name: 'node -e 0', command: node, args: ['-e', '0'], exit: 0 },
    cli('cutpoint --version', ['--version']),
    cli('cutpoint --help', ['--help']),
    cli('cutpoint stream --help', ['stream', '--help']),
    cli('cutpoint stream append --help', ['stream', 'append', '--help']),
    cli('refused: stream read --partition x', ['stream', 'read', 'orders', '--partition', 'x', '--from', '0'], 2),
    cli('refused: delivery inspect-all --format yaml', ['delivery', 'inspect-all', '--format', 'yaml'], 2),
    cli('from source (tsx): cutpoint --help', ['--help'], 0, { CUTPOINT_CLI_FROM_SOURCE: '1' }),
    cli('from source (tsx): refused stream read', ['stream', 'read', 'orders', '--partition', 'x', '--from', '0'], 2, {
      CUTPOINT_CLI_FROM_SOURCE: '1',
    }),
  ];
  const notes: string[] = [];
  const old = olderNode();
  if (old)
    cases.push({
      name: `hand-over from ${spawnSync(old, ['--version'], { encoding: 'utf8' }).stdout.trim()}: cutpoint --help`,
      command: old,
      args: [BIN, '--help'],
      exit: 0,
    });
  else notes.push('no Node older than 22 on this machine: the hand-over to the bundled Node 24 was not measured');
  return { cases, notes };
}

function timeOnce(c: CliCase): number {
  const started = performance.now();
  const r = spawnSync(c.command, c.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, CUTPOINT_CLI_FROM_SOURCE: '', ...c.env },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const ms = performance.now() - started;
  if (r.status !== c.exit)
    throw new Error(`${c.name} exited ${r.status}, expected ${c.exit}: ${r.stderr.slice(0, 300)}`);
  return ms;
}

/** The bundle the bin would run, built first when missing or stale (as `npm ci` would have). */
function ensureBundle(progress: (line: string) => void): string {
  const version = () =>
    JSON.parse(
      spawnSync(process.execPath, [BIN, '--version', '--format', 'json'], {
        encoding: 'utf8',
        env: { ...process.env, CUTPOINT_CLI_FROM_SOURCE: '' },
      }).stdout,
    ) as { build: string };
  if (version().build === 'bundle') return 'bundle';
  progress('the CLI bundle is missing or older than the sources: npm run build …');
  const built = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/build-cli.mjs')], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build failed: ${built.stderr}`);
  return version().build;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

export function benchCliStart(options: {
  rounds: number;
  warmupRounds: number;
  progress: (line: string) => void;
}): CliStartResult {
  const build = ensureBundle(options.progress);
  const { cases, notes } = cliCases();
  const times = cases.map(() => [] as number[]);
  const ratios = cases.map(() => [] as number[]);
  for (let round = 0; round < options.warmupRounds + options.rounds; round++) {
    const ms = cases.map(() => 0);
    // Rotate who goes first, round by round.
    for (let k = 0; k < cases.length; k++) {
      const i = (k + round) % cases.length;
      ms[i] = timeOnce(cases[i] as CliCase);
    }
    if (round < options.warmupRounds) continue;
    ms.forEach((t, i) => {
      times[i]?.push(t);
      ratios[i]?.push(t / (ms[0] as number));
    });
    options.progress(
      `cli start round ${round - options.warmupRounds + 1}/${options.rounds}: node -e 0 ${(ms[0] as number).toFixed(0)} ms, --help ${(ms[2] as number).toFixed(0)} ms`,
    );
  }
  return {
    node: process.version,
    build,
    rounds: options.rounds,
    notes,
    cases: cases.map((c, i) => ({
      name: c.name,
      command: [
        c.command === process.execPath ? 'node' : c.command,
        ...c.args.map((a) => (a === BIN ? 'bin/cutpoint.js' : a)),
      ].join(' '),
      medianMs: Math.round(median(times[i] as number[])),
      minMs: Math.round(Math.min(...(times[i] as number[]))),
      maxMs: Math.round(Math.max(...(times[i] as number[]))),
      ratio: Math.round(median(ratios[i] as number[]) * 100) / 100,
    })),
  };
}

export function cliStartLines(result: CliStartResult): string[] {
  const row = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(46) : c.padStart(10))).join(' ');
  return [
    '',
    `CLI start (whole process, wall clock; ${result.rounds} rounds, order rotated; node ${result.node}; the bin ran the ${result.build})`,
    row(['case', 'median ms', 'min ms', 'max ms', '× node -e 0']),
    '-'.repeat(46 + 4 * 11),
    ...result.cases.map((c) => row([c.name, String(c.medianMs), String(c.minMs), String(c.maxMs), c.ratio.toFixed(2)])),
    '× node -e 0 = median over rounds of (case / node -e 0 in the same round).',
    ...result.notes,
  ];
}
