import fc from 'fast-check';
import { DELIVERY_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { FAULT_KINDS, MAX_FAULT_DELAY_MS, MAX_FAULT_HITS } from '../../src/domain/faults.js';
import { GENERATION_CUT_POINTS } from '../../src/generation/cut-points.js';
import { TARGET_CUT_POINTS } from '../../src/domain/delivery/target-rules.js';
import { STREAM_CUT_POINTS } from '../../src/stream/cut-points.js';

/**
 * Values that are invalid by construction, one family per identifier the CLI and the flows
 * accept. Each family is a valid-looking value with one defect (a character outside the
 * alphabet, a length past the limit, a sign, a case, an injected line), filtered against
 * the accepting rule so no valid value slips through.
 */

/** Characters no identifier accepts, including ones an echo must escape. */
const HOSTILE = [
  '/',
  ' ',
  '#',
  '%',
  '\\',
  '"',
  "'",
  '$',
  '`',
  ';',
  '\t',
  '\n',
  '\u001b[31m',
  '\u0007',
  '\u00e9',
  '\u{1F4A5}',
  '\u202e',
  '\r',
];

/** `base` with one hostile character spliced in at a random position. */
export const spliced = (base: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(base, fc.constantFrom(...HOSTILE), fc.nat()).map(([s, bad, at]) => {
    const i = s.length ? at % (s.length + 1) : 0;
    return `${s.slice(0, i)}${bad}${s.slice(i)}`;
  });

const lowerWord = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/);
const attemptWord = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);

const STREAM_RULE = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const ATTEMPT_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const OWNER_RULE = /^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$/;
export const INVOCATION_RULE = /^inv-[a-z2-7]{25}[aeimquy4]$/;
const KEY_RULE = /^[A-Za-z0-9!_.*'()/=-]{1,900}$/;
/** A key whose path segments are all names (src/objects/object-key.ts). */
const validKey = (s: string) =>
  KEY_RULE.test(s) && !s.split('/').some((seg) => seg === '' || seg === '.' || seg === '..');

export const badStreamName: fc.Arbitrary<string> = fc
  .oneof(
    fc.constant(''),
    spliced(lowerWord),
    lowerWord.map((s) => `${s}X`),
    fc.constantFrom('-', '.', '_').chain((p) => lowerWord.map((s) => `${p}${s}`)),
    fc.integer({ min: 65, max: 300 }).map((n) => 'a'.repeat(n)),
    fc.constantFrom('Orders', 'ORDERS', 'orders/0', 'orders\nstream.fake: forged', '../orders', 'lane#orders'),
  )
  .filter((s) => !STREAM_RULE.test(s));

export const badPartition: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '-1',
    '1024',
    '1025',
    '99999999999999999999',
    '1.5',
    '0x1',
    ' 1',
    '',
    'one',
    '1e3',
    '+1',
    '0 ',
    '٣',
    'NaN',
    'Infinity',
  ),
  fc.integer({ min: 1024, max: 2 ** 40 }).map(String),
  fc.integer({ min: -(2 ** 31), max: -1 }).map(String),
);

export const badAttempt: fc.Arbitrary<string> = fc
  .oneof(
    fc.constant(''),
    spliced(attemptWord),
    fc.constantFrom('-', '.', '_').chain((p) => attemptWord.map((s) => `${p}${s}`)),
    fc.integer({ min: 129, max: 400 }).map((n) => 'a'.repeat(n)),
  )
  .filter((s) => !ATTEMPT_RULE.test(s));

export const badOwner: fc.Arbitrary<string> = fc
  .oneof(
    fc.constant(''),
    spliced(attemptWord),
    fc.integer({ min: 129, max: 300 }).map((n) => 'o'.repeat(n)),
    fc.constant('-owner'),
  )
  .filter((s) => !OWNER_RULE.test(s));

/** A non-negative integer option spelled wrongly. */
export const badInteger: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('-1', '1.5', '0x10', '', 'ten', '1e2', ' 3', '+2', '99999999999999999999', 'NaN'),
  fc.integer({ min: -1000, max: -1 }).map(String),
);

/** A well-formed invocation id, corrupted in one way (wrong final digit, case, length, prefix, alphabet). */
export function badInvocationId(valid: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom(...valid),
      fc.nat(),
      fc.constantFrom('b', 'c', 'z', '2', '7', 'A', '1', '0', '8', '-', '\u001b', '\n'),
    )
    .chain(([id, at, ch]) =>
      fc.constantFrom(
        `${id.slice(0, -1)}${ch}`,
        id.toUpperCase(),
        id.slice(0, -1),
        `${id}a`,
        id.replace('inv-', 'inv_'),
        id.replace('inv-', ''),
        `${id.slice(0, 4 + (at % 25))}${ch}${id.slice(5 + (at % 25))}`,
        ` ${id}`,
        `${id}\n`,
      ),
    )
    .filter((s) => !INVOCATION_RULE.test(s));
}

/** A well-formed invocation id the journal has never seen. */
export const unknownInvocationId: fc.Arbitrary<string> = fc
  .tuple(fc.stringMatching(/^[a-z2-7]{25}$/), fc.constantFrom('a', 'e', 'i', 'm', 'q', 'u', 'y', '4'))
  .map(([body, last]) => `inv-${body}${last}`);

export const badObjectKey: fc.Arbitrary<string> = fc
  .oneof(
    spliced(fc.stringMatching(/^[A-Za-z0-9/._-]{1,30}$/)),
    fc.integer({ min: 901, max: 1200 }).map((n) => 'k'.repeat(n)),
    fc.constantFrom('key?x', 'a b', 'x#y', 'naïve', 'tab\tkey', 'x\u0000y'),
    // Path segments that are not names: a store may resolve them to another key.
    fc.constantFrom(
      'x/../docs/readme.txt',
      '../docs/readme.txt',
      'docs/./readme.txt',
      'docs//readme.txt',
      '/docs/readme.txt',
      'docs/',
      '.',
      '..',
      'docs/readme.txt/..',
    ),
  )
  .filter((s) => s.length > 0 && !validKey(s));

/** A SHA-256 that is not 64 lower-case hex digits. */
export const badSha256: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^[0-9a-f]{1,63}$/),
  fc.stringMatching(/^[0-9a-f]{65,70}$/),
  fc.stringMatching(/^[0-9A-F]{64}$/).filter((s) => /[A-F]/.test(s)),
  fc.stringMatching(/^[0-9a-f]{63}$/).map((s) => `${s}g`),
  fc.constant(''),
);

/** Every cut point the product defines (and the CLI's own object put). */
export const KNOWN_CUT_POINTS: readonly string[] = [
  ...new Set([
    ...[STREAM_CUT_POINTS, GENERATION_CUT_POINTS, DELIVERY_CUT_POINTS, TARGET_CUT_POINTS].flatMap((o) =>
      Object.values(o as Record<string, string>),
    ),
    'cli.object.put',
  ]),
];

/** A cut point name one edit away from a real one (a typo an operator makes), never a real one. */
export const misspeltCutPoint: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...KNOWN_CUT_POINTS),
    fc.nat(),
    fc.constantFrom('drop', 'double', 'swap', 'suffix', 'plural', 'dash'),
  )
  .map(([cp, at, how]) => {
    const i = 1 + (at % Math.max(1, cp.length - 2));
    switch (how) {
      case 'drop':
        return cp.slice(0, i) + cp.slice(i + 1);
      case 'double':
        return cp.slice(0, i) + (cp[i] ?? 'x') + cp.slice(i);
      case 'swap':
        return cp.slice(0, i) + (cp[i + 1] ?? '') + (cp[i] ?? '') + cp.slice(i + 2);
      case 'suffix':
        return `${cp}.x`;
      case 'plural':
        return `${cp}s`;
      default:
        return cp.replace(/-/g, '_').replace(/\./, '-');
    }
  })
  .filter((cp) => !KNOWN_CUT_POINTS.includes(cp));

const kind = fc.constantFrom(...FAULT_KINDS.filter((k) => k !== 'delay'));

/** A CUTPOINT_FAULTS value with exactly one bad rule (grammar, kind, cut point, misplaced =ms, a bound, an empty rule), maybe beside a valid one. */
export const badFaultSpec: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      fc.tuple(misspeltCutPoint, kind).map(([cp, k]) => `${cp}:${k}`),
      fc
        .tuple(
          fc.constantFrom(...KNOWN_CUT_POINTS),
          fc.stringMatching(/^[a-z-]{1,14}$/).filter((k) => !(FAULT_KINDS as readonly string[]).includes(k)),
        )
        .map(([cp, k]) => `${cp}:${k}`),
      fc
        .tuple(
          fc.constantFrom(...KNOWN_CUT_POINTS),
          kind,
          fc.constantFrom('=5', '@', '@x', '**', '*x', '=', ':', ' extra'),
        )
        .map(([cp, k, s]) => `${cp}:${k}${s}`),
      fc.constantFrom(...KNOWN_CUT_POINTS).map((cp) => cp),
      fc.constantFrom(
        'garbage',
        ':',
        'Stream.Append.Wal:fail',
        'stream:fail',
        '.x:fail',
        'stream..wal:fail',
        'stream.append.wal:FAIL',
      ),
      // Out of the grammar's bounds: a count or hit of 0 or past MAX_FAULT_HITS, a delay past MAX_FAULT_DELAY_MS.
      fc
        .tuple(
          fc.constantFrom(...KNOWN_CUT_POINTS),
          kind,
          fc.constantFrom(
            '*0',
            '@0',
            '*99999999999999999999',
            '@99999999999999999999',
            `*${MAX_FAULT_HITS + 1}`,
            `@${MAX_FAULT_HITS + 1}`,
          ),
        )
        .map(([cp, k, s]) => `${cp}:${k}${s}`),
      fc
        .tuple(
          fc.constantFrom(...KNOWN_CUT_POINTS),
          fc.constantFrom('1e20', '100000000000000000000', String(MAX_FAULT_DELAY_MS + 1), ''),
        )
        .map(([cp, ms]) => `${cp}:delay=${ms}`),
      // An empty rule: a trailing, leading or doubled comma (never the blank spec, which arms nothing).
      fc
        .tuple(fc.constantFrom(...KNOWN_CUT_POINTS), kind)
        .chain(([cp, k]) => fc.constantFrom(`${cp}:${k},`, `,${cp}:${k}`, `${cp}:${k},,${cp}:${k}`, ' , ')),
    ),
    fc.option(
      fc.tuple(fc.constantFrom(...KNOWN_CUT_POINTS), kind).map(([cp, k]) => `${cp}:${k}`),
      { nil: undefined },
    ),
    fc.boolean(),
  )
  .map(([bad, good, first]) => (good === undefined ? bad : first ? `${bad},${good}` : `${good},${bad}`));

/**
 * Names every JavaScript object inherits: a command table looked up with a plain `table[name]`
 * resolves them (`stream __proto__` once ended cutpoint.internal_error). Each is an unknown
 * name at every level: command, subcommand, verb, flow, demo, option, route.
 */
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
] as const;

/** An unknown (sub)command name: a lower-case word none of `known` is, or a prototype member name. */
export function unknownName(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.stringMatching(/^[a-z][a-z-]{0,10}$/).filter((v) => !known.includes(v)),
    fc.constantFrom(...PROTOTYPE_NAMES),
  );
}

/** A flag name no command knows (never --help/-h, which are valid), prototype member names among them. */
export function unknownFlag(known: readonly string[]): fc.Arbitrary<string> {
  return fc
    .oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,14}$/), fc.constantFrom(...PROTOTYPE_NAMES))
    .filter((n) => !known.includes(n) && n !== 'help' && n !== 'h')
    .map((n) => `--${n}`);
}

/** A fresh, valid attempt id or name suffix, unique enough per case. */
export const freshSuffix: fc.Arbitrary<string> = fc.stringMatching(/^[a-z0-9]{10}$/);
