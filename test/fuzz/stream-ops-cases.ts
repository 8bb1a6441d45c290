import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { GROUP, OWNER, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import {
  badAttempt,
  badInteger,
  badOwner,
  badPartition,
  badStreamName,
  freshSuffix,
  spliced,
  unknownFlag,
} from './arbitraries.js';

/**
 * The stream verbs added since issue 8, each with one defect: consume / cursors / seek /
 * policy (the consumer cursors and the retention policy), gc / leases / quarantine
 * (collection and its evidence), compact / materialize (lane maintenance) and append
 * --from FILE.jsonl (the group-commit producer). Each starts from a command that would act
 * on the seeded lane (STREAM, 0) — whose group GROUP has a committed cursor the policy
 * names — and breaks exactly one thing: an identifier, a knob out of its range, a missing
 * confirmation, a lane that does not exist, a seek outside [trim, committed end], a
 * release of a key that is not quarantined, a JSON Lines file that does not parse.
 */

const GROUP_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const badGroup: fc.Arbitrary<string> = fc
  .oneof(
    fc.constant(''),
    spliced(fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,12}$/)),
    fc.constantFrom('-billing', '.x', 'g'.repeat(65)),
  )
  .filter((g) => !GROUP_RULE.test(g));

const missingLane = fc.oneof(
  freshSuffix.map((s) => ({ stream: `nope-${s}`, partition: '0' })),
  fc.integer({ min: 2, max: 1023 }).map((p) => ({ stream: STREAM, partition: String(p) })),
);

/** Each verb from valid slots; the generator spoils one. */
type Slots = { stream: string; partition: string };
const VERBS: Record<string, { argv: (s: Slots) => string[]; flags: string[] }> = {
  consume: {
    argv: (s) => [
      'stream',
      'consume',
      s.stream,
      '--partition',
      s.partition,
      '--group',
      GROUP,
      '--max',
      '1',
      '--owner',
      OWNER,
    ],
    flags: ['partition', 'group', 'max', 'batch', 'follow', 'text', 'owner'],
  },
  cursors: { argv: (s) => ['stream', 'cursors', s.stream, '--partition', s.partition], flags: ['partition'] },
  seek: {
    argv: (s) => ['stream', 'seek', s.stream, '--partition', s.partition, '--group', GROUP, '--to', '1', '--yes'],
    flags: ['partition', 'group', 'to', 'owner', 'yes'],
  },
  gc: {
    argv: (s) => ['stream', 'gc', s.stream, '--partition', s.partition, '--grace', '1d'],
    flags: ['partition', 'grace', 'dry-run', 'state-machine-arn', 'name'],
  },
  leases: { argv: (s) => ['stream', 'leases', s.stream, '--partition', s.partition], flags: ['partition'] },
  quarantine: {
    argv: (s) => ['stream', 'quarantine', s.stream, '--partition', s.partition],
    flags: ['partition', 'release'],
  },
  compact: {
    argv: (s) => ['stream', 'compact', s.stream, '--partition', s.partition, '--max-ranges', '2'],
    flags: ['partition', 'max-ranges', 'state-machine-arn', 'name'],
  },
  materialize: {
    argv: (s) => ['stream', 'materialize', s.stream, '--partition', s.partition, '--max', '1'],
    flags: ['partition', 'max', 'state-machine-arn', 'name'],
  },
};
const COMMON = ['aws', 'profile', 'region', 'stack', 'faults'];

/** A lane verb with a malformed or missing stream or partition, an unknown flag, an extra positional. */
export function laneOpsCases(): fc.Arbitrary<FuzzCase> {
  const verb = fc.constantFrom(...Object.keys(VERBS));
  const of = (v: string) => VERBS[v] as (typeof VERBS)[string];
  const valid: Slots = { stream: STREAM, partition: '0' };
  return fc.oneof(
    fc.tuple(verb, badStreamName).map(([v, stream]): FuzzCase => ({
      what: `stream ${v} stream: ${JSON.stringify(stream).slice(0, 50)}`,
      argv: of(v).argv({ ...valid, stream }),
    })),
    fc.tuple(verb, badPartition).map(([v, partition]): FuzzCase => ({
      what: `stream ${v} partition: ${JSON.stringify(partition)}`,
      argv: of(v).argv({ ...valid, partition }),
    })),
    fc.tuple(verb, missingLane).map(([v, lane]): FuzzCase => ({
      what: `stream ${v} missing lane ${lane.stream}/${lane.partition}`,
      argv: of(v).argv(lane),
    })),
    verb.map((v): FuzzCase => ({
      what: `stream ${v} without --partition`,
      argv: of(v)
        .argv(valid)
        .filter((a, i, all) => a !== '--partition' && all[i - 1] !== '--partition'),
    })),
    fc.tuple(verb, fc.constant(null)).chain(([v]) =>
      unknownFlag([...COMMON, ...of(v).flags]).map((f): FuzzCase => ({
        what: `stream ${v} unknown flag ${f}`,
        argv: [...of(v).argv(valid), f],
      })),
    ),
    fc.tuple(verb, fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/)).map(([v, p]): FuzzCase => ({
      what: `stream ${v} extra positional`,
      argv: [...of(v).argv(valid).slice(0, 3), p, ...of(v).argv(valid).slice(3)],
    })),
  );
}

/** consume / seek / policy: groups, knobs, confirmation, offsets outside the lane. */
export function cursorCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const consume = (extra: string[], group = GROUP) => [
    'stream',
    'consume',
    STREAM,
    '--partition',
    '0',
    '--group',
    group,
    '--owner',
    OWNER,
    ...extra,
  ];
  const seek = (to: string, extra: string[] = ['--yes'], group = GROUP) => [
    'stream',
    'seek',
    STREAM,
    '--partition',
    '0',
    '--group',
    group,
    '--to',
    to,
    ...extra,
  ];
  const policy = (groups: string) => ['stream', 'policy', STREAM, '--groups', groups];
  return fc.oneof(
    badGroup.map((g): FuzzCase => ({
      what: `consume --group ${JSON.stringify(g).slice(0, 40)}`,
      argv: consume(['--max', '1'], g),
    })),
    fc.constant<FuzzCase>({
      what: 'consume without --group',
      argv: ['stream', 'consume', STREAM, '--partition', '0', '--max', '1'],
    }),
    fc
      .oneof(badInteger, fc.constantFrom('0', '100001', '99999999'))
      .filter((b) => !/^[1-9]\d{0,3}$|^[1-9]\d{4}$|^100000$/.test(b))
      .map((b): FuzzCase => ({ what: `consume --batch ${JSON.stringify(b)}`, argv: consume(['--batch', b]) })),
    fc
      .oneof(badInteger, fc.constant('0'))
      .map((m): FuzzCase => ({ what: `consume --max ${JSON.stringify(m)}`, argv: consume(['--max', m]) })),
    badOwner.map((o): FuzzCase => ({
      what: `consume --owner ${JSON.stringify(o).slice(0, 40)}`,
      argv: ['stream', 'consume', STREAM, '--partition', '0', '--group', GROUP, '--max', '1', '--owner', o],
    })),
    fc
      .constantFrom('no', 'false', '1')
      .map((v): FuzzCase => ({ what: `consume --follow=${v}`, argv: consume(['--max', '1', `--follow=${v}`]) })),
    // A seek outside [trim offset, committed end]: nothing there to move to.
    fc
      .integer({ min: world.committedEnd + 1, max: 2 ** 40 })
      .map((to): FuzzCase => ({ what: `seek past the committed end: ${to}`, argv: seek(String(to)) })),
    badInteger.map((to): FuzzCase => ({ what: `seek --to ${JSON.stringify(to)}`, argv: seek(to) })),
    fc
      .constantFrom<string[]>([], ['--yes=no'], ['--yes=false'])
      .map((extra): FuzzCase => ({ what: `seek without confirmation ${extra.join(' ')}`, argv: seek('1', extra) })),
    badGroup.map((g): FuzzCase => ({
      what: `seek --group ${JSON.stringify(g).slice(0, 40)}`,
      argv: seek('1', ['--yes'], g),
    })),
    badOwner.map((o): FuzzCase => ({
      what: `seek --owner ${JSON.stringify(o).slice(0, 40)}`,
      argv: [...seek('1'), '--owner', o],
    })),
    // The list is split on commas and each name trimmed ("billing, audit"): a bad name stays bad trimmed.
    fc
      .oneof(
        badGroup.filter((g) => !GROUP_RULE.test(g.trim())).map((g) => `${GROUP},${g}`),
        fc.constantFrom(`${GROUP},${GROUP}`, ',', `${GROUP},`, ' , '),
      )
      .map((g): FuzzCase => ({ what: `policy --groups ${JSON.stringify(g).slice(0, 40)}`, argv: policy(g) })),
    freshSuffix.map((s): FuzzCase => ({
      what: 'policy of a stream that does not exist',
      argv: ['stream', 'policy', `nope-${s}`, '--groups', GROUP],
    })),
    fc.constant<FuzzCase>({ what: 'policy without --groups', argv: ['stream', 'policy', STREAM] }),
    fc.constant<FuzzCase>({ what: 'policy with --partition', argv: [...policy(GROUP), '--partition', '0'] }),
  );
}

/** gc / quarantine / compact / materialize: grace, keys, knobs out of range. */
export function maintenanceCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const lane = (verb: string, extra: string[]) => ['stream', verb, STREAM, '--partition', '0', ...extra];
  const key = fc.constantFrom(...world.objectKeys);
  return fc.oneof(
    fc
      .constantFrom('10 minutes', '-1s', '1.5h', '', '1w', '91d', '0x10s', 'x'.repeat(300), '٣d', '1h ', ' 1h', '12')
      .map((g): FuzzCase => ({
        what: `gc --grace ${JSON.stringify(g).slice(0, 30)}`,
        argv: lane('gc', ['--grace', g, '--dry-run']),
      })),
    fc
      .constantFrom('no', 'false')
      .map((v): FuzzCase => ({ what: `gc --dry-run=${v}`, argv: lane('gc', [`--dry-run=${v}`]) })),
    // Only a quarantined copy can be released; these keys exist and are sound (or do not exist at all).
    fc
      .oneof(
        key,
        freshSuffix.map((s) => `missing/${s}`),
      )
      .map((k): FuzzCase => ({
        what: 'quarantine --release of a key not quarantined',
        argv: lane('quarantine', ['--release', k]),
      })),
    fc.constantFrom('', 'a b', 'x#y', 'k'.repeat(1000)).map((k): FuzzCase => ({
      what: `quarantine --release ${JSON.stringify(k).slice(0, 20)}`,
      argv: lane('quarantine', ['--release', k]),
    })),
    fc.oneof(badInteger, fc.constantFrom('0', '1', '1001', '4096')).map((n): FuzzCase => ({
      what: `compact --max-ranges ${JSON.stringify(n)}`,
      argv: lane('compact', ['--max-ranges', n]),
    })),
    fc.oneof(badInteger, fc.constantFrom('0', '1001', '100000')).map((n): FuzzCase => ({
      what: `materialize --max ${JSON.stringify(n)}`,
      argv: lane('materialize', ['--max', n]),
    })),
    fc.constantFrom('compact', 'materialize', 'gc').map((v): FuzzCase => ({
      what: `${v} --state-machine-arn without --aws`,
      argv: lane(v, ['--state-machine-arn', 'arn:aws:states:us-east-1:111111111111:stateMachine:x']),
    })),
  );
}

/** `stream append --from FILE.jsonl`: knobs, combinations, files that are not JSON Lines, attempt prefixes. */
export function appendFromCases(): fc.Arbitrary<FuzzCase> {
  const from = (attempt: string, extra: string[] = []) => [
    'stream',
    'append',
    STREAM,
    '--partition',
    '0',
    '--attempt',
    attempt,
    '--from',
    '{{events.jsonl}}',
    ...extra,
  ];
  const jsonl = '{"n":1}\n{"n":2}\n';
  const files = { 'events.jsonl': jsonl };
  return fc.oneof(
    fc.tuple(freshSuffix, fc.oneof(badInteger, fc.constantFrom('0', '1000001'))).map(([s, n]): FuzzCase => ({
      what: `append --from --max-records ${JSON.stringify(n)}`,
      argv: from(`fz-${s}`, ['--max-records', n]),
      files,
    })),
    fc.tuple(freshSuffix, fc.oneof(badInteger, fc.constantFrom('0', '1', '99999999999'))).map(([s, n]): FuzzCase => ({
      what: `append --from --max-bytes ${JSON.stringify(n)}`,
      argv: from(`fz-${s}`, ['--max-bytes', n]),
      files,
    })),
    fc
      .tuple(
        freshSuffix,
        fc.constantFrom<string[]>(
          ['--file', '{{events.jsonl}}'],
          ['--input-format', 'raw'],
          ['--name', 'x'],
          ['--state-machine-arn', 'arn'],
        ),
      )
      .map(([s, extra]): FuzzCase => ({ what: `append --from with ${extra[0]}`, argv: from(`fz-${s}`, extra), files })),
    fc
      .tuple(
        freshSuffix,
        fc.constantFrom('{"n":1}\nnot json\n', '{"n":1}\n{', '\u0000\n', '{"n":1}\n\n{"n":2}\n', '[1,\n2]\n', ''),
      )
      .map(([s, text]): FuzzCase => ({
        what: `append --from a file that is not JSON Lines: ${JSON.stringify(text).slice(0, 30)}`,
        argv: from(`fz-${s}`),
        files: { 'events.jsonl': text },
      })),
    fc.tuple(freshSuffix, fc.constantFrom('/nonexistent.jsonl', '/', '')).map(([s, f]): FuzzCase => ({
      what: `append --from unreadable ${JSON.stringify(f)}`,
      argv: ['stream', 'append', STREAM, '--partition', '0', '--attempt', `fz-${s}`, '--from', f],
    })),
    // More than one command's 1,000 groups at the knobs given: refused after reading that far, nothing appended.
    freshSuffix.map((s): FuzzCase => ({
      what: 'append --from a file needing over 1,000 groups',
      argv: from(`fz-${s}`, ['--max-records', '5']),
      files: { 'events.jsonl': '{"n":1}\n'.repeat(5001) },
    })),
    // The attempt is a prefix: -g<group> is appended, so it must leave room for the widest suffix.
    fc.oneof(badAttempt, fc.constant('a'.repeat(120))).map((a): FuzzCase => ({
      what: `append --from attempt prefix ${JSON.stringify(a).slice(0, 30)}`,
      argv: from(a),
      files,
    })),
  );
}
