import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureMain, missingStateDir } from './cli-capture.js';

/**
 * One exit-code rule for every command, pinned argv by argv: 0 success (help, version, a
 * read that needs no runtime), 2 usage error (the command line's shape: an unknown
 * command, subcommand or option, a missing argument, an option value of the wrong type,
 * range or spelling — stdout empty, `cli.usage:`/`cli.unknown_command:` on stderr), 1
 * refusal or failure (a value the system refuses, a missing runtime, a failed effect —
 * stdout empty, the stable code on stderr). Runs `main()` in this process against a state
 * directory that does not exist: nothing may create it.
 */

const dirs = missingStateDir('cutpoint-exit-');
let jsonl = '';

beforeAll(async () => {
  jsonl = join(dirs.root, 'records.jsonl');
  await writeFile(jsonl, '{"a":1}\n');
});

const lane = ['orders', '--partition', '0'];

/** argv → exit status; `FILE` stands for a valid JSON Lines file. */
const USAGE: string[][] = [
  [],
  ['frobnicate'],
  ['help', 'frobnicate'],
  ['help', 'stream', 'frobnicate'],
  ['--version', 'extra'],
  ['--version', '--format', 'yaml'],
  ['stream'],
  ['stream', 'frobnicate'],
  ['stream', 'read', 'orders', '--partition', 'x', '--from', '0'],
  ['stream', 'read', 'orders', '--lane', '0', '--from', '0'],
  ['stream', 'read', ...lane, '--from', '0', '--from', '1'],
  ['stream', 'read', ...lane, '--from', '0', '--format', 'yaml'],
  ['stream', 'read', ...lane, '--from', '0', '--format'],
  ['stream', 'read', ...lane, '--from', '0', '--max-records', '0'],
  ['stream', 'read', ...lane, '--from', '0', '--max-records', '10001'],
  ['stream', 'append', ...lane, '--attempt', 'a1', '--format', 'raw'],
  ['stream', 'append', ...lane, '--attempt', 'a1', '--input-format', 'csv'],
  ['stream', 'append', ...lane, '--attempt', 'a1', '--from', 'FILE', '--max-records', '0'],
  ['stream', 'append', ...lane, '--attempt', 'a1', '--from', 'FILE', '--max-bytes', 'x'],
  ['stream', 'describe', 'orders', '--faults', 'stream.nope:fail'],
  ['stream', 'describe', 'orders', '--faults', 'stream.trim.cas:explode'],
  ['stream', 'describe', 'orders', '--faults', 'stream.trim.cas:fail*0'],
  ['stream', 'describe', 'orders', '--faults', 'stream.trim.cas:fail,'],
  ['stream', 'describe', 'orders', '--faults', 'stream.trim.cas:delay=600001'],
  ['stream', 'gc', ...lane, '--grace', 'forever'],
  ['stream', 'compact', ...lane, '--max-ranges', '1'],
  ['stream', 'materialize', ...lane, '--max', '0'],
  ['stream', 'consume', ...lane, '--group', 'g', '--batch', '0'],
  ['stream', 'seek', ...lane, '--group', 'g', '--to', '5'],
  ['delivery'],
  ['delivery', 'frobnicate'],
  ['delivery', 'inspect', '--format', 'json'],
  ['delivery', 'inspect', 'inv-x', '--format', 'csv'],
  ['delivery', 'inspect-all', '--format', 'yaml'],
  ['delivery', 'run'],
  ['delivery', 'run', '--manifest', 'a.yaml#d', '--faults', 'nonsense'],
  ['quality', 'inspect-all', '--format', 'yaml'],
  ['quality', 'observe', 'inv-x', '--manifest', 'a.yaml#d'],
  ['local', 'up', '--dynamodb-port', 'x'],
  ['local', 'frobnicate'],
  ['local', 'status', '--format', 'xml'],
  ['flow', 'run', 'no-such-flow', '--input', '{}'],
  ['flow', 'run', 'stream-trim', '--input', '{}', '--faults', 'nope'],
  ['object', 'get', 'key'],
  ['object', 'put', 'key', '--sha256', '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'],
  [
    'object',
    'get',
    'key',
    '--sha256',
    '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    '--file',
    'out.bin',
  ],
  ['object', 'get', 'key', '--sha256', 'abc'],
  ['object', 'frobnicate', 'key'],
  ['faults'],
  ['faults', 'list', 'extra'],
  ['faults', 'list', '--format', 'yaml'],
  ['demo', 'nope'],
];

/**
 * Names every object inherits, at every level a name is looked up: each is unknown (exit 2),
 * never a member of Object.prototype (`stream __proto__ orders` ended cutpoint.internal_error).
 */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
USAGE.push(
  ...PROTOTYPE_NAMES.flatMap((n) => [
    [n, 'orders'],
    ['help', n],
    ['help', 'stream', n],
    ['stream', n, 'orders'],
    ['delivery', n, 'inv-x'],
    ['quality', n, 'inv-x'],
    ['local', n],
    ['faults', n],
    ['demo', n],
    ['object', n, 'key'],
    ['flow', n],
    ['flow', 'run', n, '--input', '{}'],
    ['cost', n],
    ['stream', 'read', ...lane, '--from', '0', `--${n}`],
  ]),
);

/** Refusals with their stable code: nothing runs, stdout stays empty. */
const REFUSED: Array<[string[], string, Record<string, string>?]> = [
  [['delivery', 'reconcile', 'inv-x', '--manifest', 'a.yaml#d'], 'delivery.recovery_confirmation_required'],
  [['stream', 'read', 'Bad!', '--partition', '0', '--from', '0'], 'stream.invalid_stream'],
  [['stream', 'describe', 'orders'], 'faults.invalid_spec', { CUTPOINT_FAULTS: 'nonsense' }],
  [['stream', 'describe', 'orders'], 'local.runtime_down'],
  [['object', 'put', 'wal/x'], 'objects.reserved_key'],
];

const OK: string[][] = [
  ['--help'],
  ['-h'],
  ['help'],
  ['help', 'stream'],
  ['help', 'stream', 'append'],
  ['--version'],
  ['--version', '--format', 'json'],
  ['stream', '--help'],
  ['stream', 'append', '--help'],
  ['stream', 'read', 'orders', '--partition', 'x', '--help'],
  ['delivery', 'reconcile', '--help'],
  ['faults', 'list'],
  ['faults', 'list', '--format', 'text'],
  ['faults', 'list', '--format=json'],
];

const withFile = (argv: string[]) => argv.map((a) => (a === 'FILE' ? jsonl : a));

describe('one exit-code rule across every command', () => {
  it.each(USAGE.map((argv) => [argv.join(' ') || '(no arguments)', argv]))(
    'usage error, exit 2: %s',
    async (_, argv) => {
      const r = await captureMain(main, withFile(argv as string[]));
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
      if ((argv as string[]).length) expect(r.stderr).toMatch(/^cli\.(usage|unknown_command): /);
      expect(existsSync(dirs.stateDir)).toBe(false);
    },
  );

  it.each(REFUSED.map(([argv, code, env]) => [argv.join(' '), argv, code, env ?? {}]))(
    'refused, exit 1: %s',
    async (_, argv, code, env) => {
      const r = await captureMain(main, argv as string[], env as Record<string, string>);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(new RegExp(`^${(code as string).replace(/\./g, '\\.')}: `));
      expect(existsSync(dirs.stateDir)).toBe(false);
    },
  );

  it.each(OK.map((argv) => [argv.join(' '), argv]))('success, exit 0: %s', async (_, argv) => {
    const r = await captureMain(main, argv as string[]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout.length).toBeGreaterThan(0);
    expect(existsSync(dirs.stateDir)).toBe(false);
  });

  it('bare cutpoint prints the help on stderr (exit 2); --help prints it on stdout (exit 0)', async () => {
    const bare = await captureMain(main, []);
    const help = await captureMain(main, ['--help']);
    expect(bare.stderr).toContain('usage: cutpoint <command>');
    expect(help.stdout).toBe(bare.stderr);
  });

  it('the old input spelling of stream append is refused naming the new one', async () => {
    const r = await captureMain(main, ['stream', 'append', ...lane, '--attempt', 'a1', '--format', 'lines']);
    expect(r.stderr).toMatch(/^cli\.usage: .*--input-format lines/);
  });

  it('a bad --faults value is a usage error that names the fault code; the same spec in CUTPOINT_FAULTS is a refusal', async () => {
    const flag = await captureMain(main, ['stream', 'describe', 'orders', '--faults', 'stream.nope:fail']);
    expect(flag.stderr).toMatch(/^cli\.usage: --faults: faults\.unknown_cut_point: /);
    const env = await captureMain(main, ['stream', 'describe', 'orders'], { CUTPOINT_FAULTS: 'stream.nope:fail' });
    expect([env.code, env.stderr]).toEqual([1, expect.stringMatching(/^faults\.unknown_cut_point: /)]);
  });
});
