import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { OWNER, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import {
  badFaultSpec,
  badObjectKey,
  badSha256,
  freshSuffix,
  PROTOTYPE_NAMES,
  unknownFlag,
  unknownName,
} from './arbitraries.js';

/**
 * The grammar around every command (flags unknown, duplicated with another value, missing
 * their value, booleans given a value, extra positionals, unknown commands and
 * subcommands), object keys and digests, and CUTPOINT_FAULTS specs with one bad rule in
 * front of commands that would otherwise act.
 */

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const COMMAND_NAMES = ['demo', 'local', 'flow', 'object', 'stream', 'delivery', 'quality', 'faults', 'cost', 'help'];
const SUBCOMMANDS = [
  'read',
  'describe',
  'append',
  'takeover',
  'trim',
  'resolve',
  'create',
  'put',
  'get',
  'inspect',
  'inspect-all',
  'reconcile',
  'resume',
  'retire',
  'run',
];

interface Base {
  argv: string[];
  /** Positionals end here (the command path and its operands). */
  positionals: number;
  /** String flags with a second value that is valid on its own. */
  alternatives: Record<string, string>;
  booleans: string[];
  known: string[];
  files?: FuzzCase['files'];
}

function commandBases(world: FuzzWorld, sfx: string): Base[] {
  const file = world.manifestFile;
  const stream = ['aws', 'profile', 'region', 'stack', 'faults', 'state-machine-arn', 'name'];
  return [
    {
      argv: ['stream', 'read', STREAM, '--partition', '0', '--from', '0'],
      positionals: 3,
      alternatives: { partition: '1', from: '2' },
      booleans: ['text'],
      known: [...stream, 'partition', 'from', 'max-records', 'text'],
    },
    {
      argv: ['stream', 'describe', STREAM, '--partitions', '2'],
      positionals: 3,
      alternatives: { partitions: '1' },
      booleans: [],
      known: [...stream, 'partitions'],
    },
    {
      argv: ['stream', 'append', STREAM, '--partition', '0', '--attempt', `fz-${sfx}`, '--file', '{{records}}'],
      positionals: 3,
      alternatives: { partition: '1', attempt: `fz-alt-${sfx}` },
      booleans: [],
      known: [...stream, 'partition', 'attempt', 'file', 'input-format', 'format'],
      files: { records: 'flag-record\n' },
    },
    {
      argv: ['stream', 'takeover', STREAM, '--partition', '0', '--owner', OWNER],
      positionals: 3,
      alternatives: { partition: '1', owner: 'someone-else' },
      booleans: [],
      known: [...stream, 'partition', 'owner'],
    },
    {
      argv: ['stream', 'trim', STREAM, '--partition', '0', '--to', '0'],
      positionals: 3,
      alternatives: { to: '1' },
      booleans: [],
      known: [...stream, 'partition', 'to'],
    },
    {
      argv: ['stream', 'resolve', STREAM, '--partition', '0', '--attempt', 'seed-1'],
      positionals: 3,
      alternatives: { attempt: 'seed-2' },
      booleans: [],
      known: [...stream, 'partition', 'attempt'],
    },
    {
      argv: ['stream', 'create', `fz-${sfx}`, '--partitions', '1'],
      positionals: 3,
      alternatives: { partitions: '2' },
      booleans: [],
      known: [...stream, 'partitions'],
    },
    {
      argv: ['object', 'put', `fz/${sfx}`, '--file', '{{object}}'],
      positionals: 3,
      alternatives: {},
      booleans: [],
      known: ['file', 'sha256', 'aws', 'profile', 'region', 'stack'],
      files: { object: `object-${sfx}` },
    },
    {
      argv: ['object', 'get', 'docs/readme.txt', '--sha256', sha('hello')],
      positionals: 3,
      alternatives: {},
      booleans: [],
      known: ['file', 'sha256', 'aws', 'profile', 'region', 'stack'],
    },
    {
      argv: ['delivery', 'inspect', world.deliveredId, '--format', 'json'],
      positionals: 3,
      alternatives: {},
      booleans: ['aws'],
      known: ['aws', 'profile', 'region', 'stack', 'faults', 'format'],
    },
    {
      argv: ['delivery', 'inspect-all', '--format', 'json'],
      positionals: 2,
      alternatives: { target: 'warehouse.dwh.events' },
      booleans: ['aws'],
      known: ['aws', 'profile', 'region', 'stack', 'faults', 'format', 'target'],
    },
    {
      argv: ['delivery', 'reconcile', world.unknownId, '--manifest', `${file}#lossy`, '--yes', '--format', 'json'],
      positionals: 3,
      alternatives: { manifest: `${file}#daily` },
      booleans: ['yes', 'aws'],
      known: ['aws', 'profile', 'region', 'stack', 'faults', 'format', 'manifest', 'yes', 'state-machine-arn', 'name'],
    },
    {
      argv: ['flow', 'run', 'stream-trim', '--input', JSON.stringify({ stream: STREAM, partition: 0, to: 0 })],
      positionals: 3,
      alternatives: { input: JSON.stringify({ stream: STREAM, partition: 0, to: 1 }) },
      booleans: ['aws'],
      known: ['input', 'faults', 'aws', 'profile', 'region', 'stack', 'state-machine-arn', 'name'],
    },
  ];
}

export function flagCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc.tuple(freshSuffix, fc.nat(), fc.nat(), fc.nat()).chain(([sfx, pick, at, which]) => {
    const bases = commandBases(world, sfx);
    const b = bases[pick % bases.length] as Base;
    const at1 = b.positionals + (at % (b.argv.length - b.positionals + 1));
    const insert = (i: number, ...xs: string[]) => [...b.argv.slice(0, i), ...xs, ...b.argv.slice(i)];
    const valued = b.argv
      .map((a, i) => [a, i] as const)
      .filter(([a, i]) => a.startsWith('--') && i + 1 < b.argv.length && !(b.argv[i + 1] as string).startsWith('--'));
    const mk = (what: string, argv: string[]): FuzzCase => ({
      what: `${b.argv.slice(0, 2).join(' ')} ${what}`,
      argv,
      ...(b.files ? { files: b.files } : {}),
    });
    const options: Array<fc.Arbitrary<FuzzCase>> = [
      fc
        .tuple(unknownFlag(b.known), fc.option(fc.constantFrom('1', 'x', '--'), { nil: undefined }))
        .map(([f, v]) => mk(`unknown flag ${f}`, v === undefined ? insert(at1, f) : insert(at1, f, v))),
      fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/).map((p) => mk('extra positional', insert(b.positionals, p))),
      unknownName(SUBCOMMANDS).map((v) => mk(`unknown subcommand ${v}`, [b.argv[0] as string, v, ...b.argv.slice(2)])),
      unknownName(COMMAND_NAMES).map((c) => mk(`unknown command ${c}`, [c, ...b.argv.slice(1)])),
    ];
    if (valued.length) {
      const [flag, i] = valued[which % valued.length] as readonly [string, number];
      options.push(fc.constant(mk(`${flag} without its value`, [...b.argv.slice(0, i), ...b.argv.slice(i + 2), flag])));
      const name = flag.slice(2);
      const alt = b.alternatives[name];
      if (alt !== undefined)
        options.push(
          fc
            .boolean()
            .map((before) =>
              mk(
                `${flag} twice with different values`,
                before ? insert(b.positionals, flag, alt) : [...b.argv, flag, alt],
              ),
            ),
        );
    }
    for (const [name, alt] of Object.entries(b.alternatives)) {
      if (!b.argv.includes(`--${name}`))
        options.push(
          fc.constant(
            mk(`--${name} twice with different values`, [
              ...b.argv,
              `--${name}`,
              alt,
              `--${name}`,
              alt === '1' ? '2' : `${alt.slice(0, -1)}x`,
            ]),
          ),
        );
    }
    for (const bool of b.booleans) {
      if (bool !== 'aws')
        options.push(
          fc
            .constantFrom('no', 'false', '0', 'yes')
            .map((v) => mk(`--${bool}=${v}`, [...b.argv.filter((a) => a !== `--${bool}`), `--${bool}=${v}`])),
        );
    }
    return fc.oneof(...options);
  });
}

export function objectCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const bytes = fc.uint8Array({ minLength: 0, maxLength: 64 });
  return fc.oneof(
    fc.tuple(badObjectKey, bytes).map(([key, b]): FuzzCase => ({
      what: `object put malformed key: ${JSON.stringify(key).slice(0, 40)}`,
      argv: ['object', 'put', key, '--file', '{{bytes}}'],
      files: { bytes: b },
    })),
    // Objects are immutable by identity: an existing key with other bytes is a conflict.
    fc.tuple(fc.constantFrom(...world.objectKeys), bytes).map(([key, b]): FuzzCase => ({
      what: `object put existing key, other bytes: ${key.split('/').slice(0, 2).join('/')}`,
      argv: ['object', 'put', key, '--file', '{{bytes}}'],
      files: { bytes: new Uint8Array([...Buffer.from('fuzz-overwrite:'), ...b]) },
    })),
    badObjectKey.map((key): FuzzCase => ({
      what: `object get malformed key: ${JSON.stringify(key).slice(0, 40)}`,
      argv: ['object', 'get', key, '--sha256', sha('hello')],
    })),
    fc.tuple(fc.constantFrom(...world.objectKeys), badSha256).map(([key, s]): FuzzCase => ({
      what: 'object get malformed sha256',
      argv: ['object', 'get', key, '--sha256', s],
    })),
    fc
      .tuple(fc.constantFrom('docs/readme.txt', 'data/part-0001.bin'), fc.stringMatching(/^[a-z]{1,10}$/))
      .map(([key, s]): FuzzCase => ({
        what: 'object get wrong sha256',
        argv: ['object', 'get', key, '--sha256', sha(s)],
      })),
    freshSuffix.map((s): FuzzCase => ({
      what: 'object get missing key',
      argv: ['object', 'get', `missing/${s}`, '--sha256', sha('hello')],
    })),
    fc.constant<FuzzCase>({ what: 'object get without --sha256', argv: ['object', 'get', 'docs/readme.txt'] }),
    fc.tuple(freshSuffix, fc.constantFrom('/nonexistent/file', '/', '/proc/self/nope')).map(([s, f]): FuzzCase => ({
      what: `object put unreadable --file ${f}`,
      argv: ['object', 'put', `fz/${s}`, '--file', f],
    })),
    fc.constantFrom('list', 'delete', 'PUT', '', ...PROTOTYPE_NAMES).map((v): FuzzCase => ({
      what: `object unknown verb ${JSON.stringify(v)}`,
      argv: ['object', v, 'docs/readme.txt'],
    })),
  );
}

/** A bad CUTPOINT_FAULTS (env or --faults) in front of a command that would otherwise act (each with fresh identities). */
export function faultCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(
      badFaultSpec,
      freshSuffix,
      fc.constantFrom('append', 'append-flag', 'object', 'trim-flow', 'takeover', 'reconcile'),
    )
    .map(([spec, sfx, cmd]): FuzzCase => {
      const what = `faults on ${cmd}: ${JSON.stringify(spec)}`;
      const env = { CUTPOINT_FAULTS: spec };
      switch (cmd) {
        case 'append':
          return {
            what,
            argv: ['stream', 'append', STREAM, '--partition', '0', '--attempt', `fz-${sfx}`, '--file', '{{records}}'],
            files: { records: 'fault-record\n' },
            env,
          };
        case 'append-flag':
          return {
            what,
            argv: [
              'stream',
              'append',
              STREAM,
              '--partition',
              '0',
              '--attempt',
              `fz-${sfx}`,
              '--file',
              '{{records}}',
              '--faults',
              spec,
            ],
            files: { records: 'fault-record\n' },
          };
        case 'object':
          return { what, argv: ['object', 'put', `fz/${sfx}`, '--file', '{{bytes}}'], files: { bytes: sfx }, env };
        case 'trim-flow':
          return {
            what,
            argv: ['flow', 'run', 'stream-trim', '--input', JSON.stringify({ stream: STREAM, partition: 0, to: 1 })],
            env,
          };
        case 'takeover':
          return { what, argv: ['stream', 'takeover', STREAM, '--partition', '0', '--owner', OWNER, '--faults', spec] };
        default:
          return {
            what,
            argv: [
              'delivery',
              'reconcile',
              world.unknownId,
              '--manifest',
              `${world.manifestFile}#lossy`,
              '--yes',
              '--faults',
              spec,
            ],
          };
      }
    });
}

/**
 * Every prototype member name at every level the CLI resolves a name: the command, `help`'s
 * command and subcommand, each command's subcommand (stream, delivery, quality, local,
 * faults, demo, object, flow and flow run's flow, cost's positional), an option of each
 * command, a cut point of --faults, and a manifest's route. Each is unknown: refused with
 * its usage error or the refusal of an unknown name, never resolved to Object.prototype.
 */
export function prototypeNameCases(world: FuzzWorld): FuzzCase[] {
  const lane = [STREAM, '--partition', '0'];
  return PROTOTYPE_NAMES.flatMap((n): FuzzCase[] => {
    const levels: Array<[string, string[]]> = [
      ['command', [n, 'read', STREAM]],
      ['help <command>', ['help', n]],
      ['help stream <subcommand>', ['help', 'stream', n]],
      ['stream <subcommand>', ['stream', n, STREAM]],
      ['delivery <subcommand>', ['delivery', n, world.deliveredId]],
      ['quality <subcommand>', ['quality', n, world.deliveredId]],
      ['local <subcommand>', ['local', n]],
      ['faults <subcommand>', ['faults', n]],
      ['demo <name>', ['demo', n]],
      ['object <verb>', ['object', n, 'docs/readme.txt']],
      ['flow <subcommand>', ['flow', n, 'stream-trim']],
      ['flow run <flow>', ['flow', 'run', n, '--input', '{}']],
      ['cost <positional>', ['cost', n]],
      ['stream read --<option>', ['stream', 'read', ...lane, '--from', '0', `--${n}`]],
      [
        'stream create --<option>',
        ['stream', 'create', `proto-${n.toLowerCase().replace(/_/g, '')}`, '--partitions', '1', `--${n}`, '1'],
      ],
      ['object put --<option>', ['object', 'put', 'proto/x', '--file', '/dev/null', `--${n}`]],
      ['delivery inspect-all --<option>', ['delivery', 'inspect-all', `--${n}`]],
      ['quality inspect-all --<option>', ['quality', 'inspect-all', `--${n}`]],
      ['local status --<option>', ['local', 'status', `--${n}`]],
      ['faults list --<option>', ['faults', 'list', `--${n}`]],
      ['cost --<option>', ['cost', `--${n}`, '1']],
      [
        'flow run --<option>',
        ['flow', 'run', 'stream-trim', '--input', JSON.stringify({ stream: STREAM, partition: 0, to: 0 }), `--${n}`],
      ],
      ['--faults cut point', ['stream', 'takeover', ...lane, '--owner', OWNER, '--faults', `${n}.x:fail`]],
      [
        'manifest route',
        ['delivery', 'reconcile', world.unknownId, '--manifest', `${world.manifestFile}#${n}`, '--yes'],
      ],
    ];
    return levels.map(([level, argv]) => ({ what: `prototype name ${n} as ${level}`, argv }));
  });
}

/**
 * Numeric environment variables with garbage (`abc`, `Infinity`, `0x10`, a sign, a
 * fraction, spaces) in front of commands that would act: refused naming the variable
 * (one strict reader, src/domain/env-integer.ts), never ignored or read as something else.
 */
export function envCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const garbage = fc.constantFrom('abc', 'Infinity', '0x10', '-1', '1.5', '1e3', ' 5', '5 ', '+5', '٣');
  const acting = fc.constantFrom<string[]>(
    ['stream', 'create', 'fz-env', '--partitions', '1'],
    ['object', 'put', 'fz/env', '--file', world.manifestFile],
    ['stream', 'trim', STREAM, '--partition', '0', '--to', '1'],
  );
  return fc.oneof(
    fc.tuple(garbage, acting).map(([v, argv]): FuzzCase => ({
      what: `CUTPOINT_LOCAL_RETRY_MS=${JSON.stringify(v)} ${argv.slice(0, 2).join(' ')}`,
      argv,
      env: { CUTPOINT_LOCAL_RETRY_MS: v },
      forbiddenCodes: /^(?!local\.invalid_retry_ms$)/,
    })),
    fc.tuple(garbage, fc.constantFrom('0', '201')).map(([v, out]): FuzzCase => ({
      what: `CUTPOINT_GC_PAGES=${JSON.stringify(v)} / ${out} stream gc`,
      argv: ['stream', 'gc', STREAM, '--partition', '0', '--dry-run'],
      env: { CUTPOINT_GC_PAGES: v.length % 2 ? v : out },
    })),
    garbage.map((v): FuzzCase => ({
      what: `CUTPOINT_GC_GRACE=${JSON.stringify(v)} stream gc`,
      argv: ['stream', 'gc', STREAM, '--partition', '0', '--dry-run'],
      env: { CUTPOINT_GC_GRACE: v },
    })),
  );
}
