import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { FORGED_PARTITION, OWNER, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import { badAttempt, badInteger, badOwner, badPartition, badStreamName, freshSuffix } from './arbitraries.js';

/**
 * `cutpoint stream …` with one defect each: a malformed identifier (stream, partition,
 * attempt, owner, offset), a lane that does not exist, a read or trim past the committed
 * end, or — for append — records that conflict with a committed attempt, an empty or
 * oversize batch, a forged session, an unreadable file.
 */

const RECORDS = 'fuzz-record\n';
/** A stream name that is valid but was never created. */
const missingStream = freshSuffix.map((s) => `nope-${s}`);
/** A partition of STREAM that was never created (it has 2). */
const missingPartition = fc.integer({ min: 2, max: 1023 }).map(String);

interface Slots {
  stream: string;
  partition: string;
  attempt: string;
}

/** The verbs that take a lane, each as argv from its slots (all valid: the generator replaces one). */
const LANE_VERBS: Record<string, (s: Slots, x: { owner: string; offset: string }) => string[]> = {
  takeover: (s, x) => ['stream', 'takeover', s.stream, '--partition', s.partition, '--owner', x.owner],
  append: (s) => [
    'stream',
    'append',
    s.stream,
    '--partition',
    s.partition,
    '--attempt',
    s.attempt,
    '--file',
    '{{records}}',
  ],
  resolve: (s) => ['stream', 'resolve', s.stream, '--partition', s.partition, '--attempt', s.attempt],
  read: (s, x) => ['stream', 'read', s.stream, '--partition', s.partition, '--from', x.offset],
  trim: (s, x) => ['stream', 'trim', s.stream, '--partition', s.partition, '--to', x.offset],
};

/** A lane verb with exactly one malformed or missing identifier. */
export function streamIdCases(): fc.Arbitrary<FuzzCase> {
  const laneCase = fc
    .tuple(
      fc.constantFrom(...Object.keys(LANE_VERBS)),
      fc.constantFrom('stream', 'partition', 'attempt', 'owner', 'offset', 'missing-stream', 'missing-partition'),
      freshSuffix,
    )
    .chain(([verb, slot, sfx]) => {
      const bad: Record<string, fc.Arbitrary<string>> = {
        stream: badStreamName,
        partition: badPartition,
        attempt: badAttempt,
        owner: badOwner,
        offset: badInteger,
        'missing-stream': missingStream,
        'missing-partition': missingPartition,
      };
      return (bad[slot] as fc.Arbitrary<string>).map((value) => ({ verb, slot, sfx, value }));
    })
    .filter(
      ({ verb, slot }) =>
        (slot !== 'attempt' || verb === 'append' || verb === 'resolve') &&
        (slot !== 'owner' || verb === 'takeover') &&
        (slot !== 'offset' || verb === 'read' || verb === 'trim'),
    )
    .map(({ verb, slot, sfx, value }): FuzzCase => {
      const slots: Slots = {
        stream: slot === 'stream' || slot === 'missing-stream' ? value : STREAM,
        partition: slot === 'partition' || slot === 'missing-partition' ? value : '0',
        attempt: slot === 'attempt' ? value : `fz-${sfx}`,
      };
      const argv = (LANE_VERBS[verb] as (typeof LANE_VERBS)[string])(slots, {
        owner: slot === 'owner' ? value : OWNER,
        offset: slot === 'offset' ? value : '0',
      });
      return {
        what: `stream ${verb} ${slot}: ${JSON.stringify(value).slice(0, 60)}`,
        argv,
        files: { records: RECORDS },
      };
    });
  const other = fc.oneof(
    fc.tuple(badStreamName, fc.integer({ min: 1, max: 3 })).map(([s, n]): FuzzCase => ({
      what: `stream create stream: ${JSON.stringify(s).slice(0, 60)}`,
      argv: ['stream', 'create', s, '--partitions', String(n)],
    })),
    fc.tuple(freshSuffix, fc.oneof(badInteger, fc.constantFrom('1025', '4096', '0'))).map(([sfx, n]): FuzzCase => ({
      what: `stream create partitions: ${JSON.stringify(n)}`,
      argv: ['stream', 'create', `fz-${sfx}`, '--partitions', n],
    })),
    fc.oneof(badStreamName, missingStream).map((s): FuzzCase => ({
      what: `stream describe stream: ${JSON.stringify(s).slice(0, 60)}`,
      argv: ['stream', 'describe', s],
    })),
    badInteger.map((n): FuzzCase => ({
      what: `stream describe partitions: ${JSON.stringify(n)}`,
      argv: ['stream', 'describe', STREAM, '--partitions', n],
    })),
    badInteger.map((n): FuzzCase => ({
      what: `stream read max-records: ${JSON.stringify(n)}`,
      argv: ['stream', 'read', STREAM, '--partition', '0', '--from', '0', '--max-records', n],
    })),
  );
  return fc.oneof({ weight: 4, arbitrary: laneCase }, { weight: 1, arbitrary: other });
}

/** Reads and trims past the committed end: nothing there yet, so nothing to hand out or to make unreadable. */
export function pastEndCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom('read', 'trim'), fc.integer({ min: 1, max: 1_000_000 }))
    .map(([verb, k]): FuzzCase => {
      const offset = String(world.committedEnd + k);
      const flag = verb === 'read' ? '--from' : '--to';
      return {
        what: `stream ${verb} past the committed end: +${k}`,
        argv: ['stream', verb, STREAM, '--partition', '0', flag, offset],
      };
    });
}

/** Appends whose records or session make them invalid. */
export function appendRecordCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const append = (partition: number | string, attempt: string, extra: string[] = []) => [
    'stream',
    'append',
    STREAM,
    '--partition',
    String(partition),
    '--attempt',
    attempt,
    ...extra,
  ];
  const lines = fc.array(
    fc.string({ unit: 'grapheme', minLength: 0, maxLength: 20 }).map((s) => s.replace(/\n/g, ' ')),
    { minLength: 1, maxLength: 5 },
  );
  return fc.oneof(
    // The same attempt id with other records: an identity conflict, never the old batch reported as success.
    fc
      .tuple(fc.constantFrom(...world.committed), lines, fc.constantFrom('lines', 'raw'))
      .filter(([c, l]) => `${l.join('\n')}\n` !== c.text)
      .map(([c, l, format]): FuzzCase => ({
        what: `append reused attempt, other records: ${c.attemptId}`,
        argv: append(0, c.attemptId, ['--file', '{{records}}', '--input-format', format]),
        files: { records: `${l.join('\n')}\n` },
      })),
    freshSuffix.map((sfx): FuzzCase => ({
      what: 'append empty batch',
      argv: append(0, `fz-${sfx}`, ['--file', '{{records}}']),
      files: { records: '' },
    })),
    fc.tuple(freshSuffix, fc.integer({ min: 200_000, max: 400_000 })).map(([sfx, n]): FuzzCase => ({
      what: `append oversize batch: ${n} bytes raw`,
      argv: append(0, `fz-${sfx}`, ['--file', '{{records}}', '--input-format', 'raw']),
      files: { records: 'x'.repeat(n) },
    })),
    fc.tuple(freshSuffix, lines).map(([sfx, l]): FuzzCase => ({
      what: 'append with a forged session',
      argv: append(FORGED_PARTITION, `fz-${sfx}`, ['--file', '{{records}}']),
      files: { records: `${l.join('\n')}\n` },
    })),
    fc
      .tuple(freshSuffix, fc.constantFrom('/nonexistent/records.txt', '/', '/proc/self/nope'))
      .map(([sfx, file]): FuzzCase => ({
        what: `append unreadable --file: ${file}`,
        argv: append(0, `fz-${sfx}`, ['--file', file]),
      })),
    fc
      .tuple(
        freshSuffix,
        fc.stringMatching(/^[a-z]{1,8}$/).filter((f) => f !== 'lines' && f !== 'raw'),
      )
      .map(([sfx, format]): FuzzCase => ({
        what: `append unknown --input-format: ${format}`,
        argv: append(0, `fz-${sfx}`, ['--file', '{{records}}', '--input-format', format]),
        files: { records: RECORDS },
      })),
  );
}
