import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { FLOWS } from '../../src/registry/index.js';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import { badAttempt, badFaultSpec, badOwner, badStreamName, freshSuffix, unknownFlag } from './arbitraries.js';

/**
 * `cutpoint flow run <flow> --input <json>` for the stream and generation flows, each
 * input a valid one with exactly one defect: a required field missing or of another type,
 * an identifier out of its alphabet, a field nobody knows, a lane that does not exist, a
 * forged session, a reused attempt id with other records, a trim past the committed end,
 * a source whose digest or size is wrong, a document nested too deep or too large, JSON
 * that does not parse. Flow inputs are validated as strictly as CLI arguments.
 */

type Input = Record<string, unknown>;
const b64 = (s: string) => Buffer.from(s).toString('base64');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export interface FlowBase {
  flow: string;
  input: Input;
  /** Per field, values that make it invalid besides the generic ones (missing, wrong type). */
  bad: Record<string, fc.Arbitrary<unknown>>;
  /** Fields the flow may go without (never generated as "missing"). */
  optional?: readonly string[];
  /** Per field, other values the flow accepts (never generated as "wrong type"). */
  validAlso?: Record<string, readonly unknown[]>;
}

const wrongType = fc.constantFrom<unknown>(null, true, [], {}, 'x', 1.5, -1, '0');
const missingLane = fc.oneof(
  freshSuffix.map((s) => ({ stream: `nope-${s}` })),
  fc.integer({ min: 2, max: 1023 }).map((p) => ({ partition: p })),
);

function bases(world: FuzzWorld, fence: { owner: string; session: string; epoch: number }, sfx: string): FlowBase[] {
  const lane = { stream: STREAM, partition: 0 };
  // Session ids of the right shape that the authority never issued (deterministic per case).
  const uuidOf = (tag: string) => `${sha(`${tag}${sfx}`).slice(0, 8)}-0000-4000-8000-${sha(sfx).slice(0, 12)}`;
  const laneBad = { stream: badStreamName, partition: fc.constantFrom<unknown>(-1, 1024, 1.5, '0', 2 ** 53) };
  return [
    {
      flow: 'stream-append',
      input: { ...lane, attemptId: `fz-${sfx}`, session: fence, records: [b64('fuzz-flow-record')] },
      bad: {
        ...laneBad,
        attemptId: badAttempt,
        session: fc.oneof(
          fc.constant({ ...fence, session: uuidOf('forged') }),
          fc.constantFrom(0, -1, 1.5, fence.epoch + 1, 2 ** 40).map((epoch) => ({ ...fence, epoch })),
          fc.constant({ ...fence, owner: `${fence.owner}-other` }),
          fc.constant({ owner: fence.owner, epoch: fence.epoch }),
        ),
        records: fc.oneof(
          fc.constant([]),
          fc.constant(['***not base64***']),
          fc.constant([1, 2]),
          fc.constant(['x'.repeat(300_000)]),
        ),
      },
    },
    {
      flow: 'stream-takeover',
      input: { ...lane, owner: 'fuzz-flow-owner', session: uuidOf('takeover') },
      bad: { ...laneBad, owner: badOwner, session: fc.constantFrom<unknown>('', 'x'.repeat(5000), 'a\nb') },
    },
    {
      flow: 'stream-trim',
      input: { ...lane, to: 0 },
      bad: {
        ...laneBad,
        to: fc.oneof(
          fc.integer({ min: world.committedEnd + 1, max: 2 ** 40 }),
          fc.constantFrom<unknown>(-1, 1.5, '3', 2 ** 60),
        ),
      },
    },
    {
      flow: 'stream-gc',
      input: { ...lane, grace: '1d', dryRun: true },
      optional: ['grace', 'dryRun'],
      bad: {
        ...laneBad,
        grace: fc.constantFrom<unknown>('10 minutes', -1, 1.5, '91d', '', 'x'.repeat(5000), 12, '12', '1h ', ' 1h'),
        dryRun: fc.constantFrom<unknown>('yes', 1, null),
      },
    },
    {
      flow: 'stream-resolve-append',
      input: { ...lane, attemptId: 'seed-1' },
      bad: { ...laneBad, attemptId: badAttempt },
    },
    {
      flow: 'commit-generation',
      input: {
        root: 'fuzz/gen',
        generation: 0,
        taskId: `t-${sfx}`,
        sources: [{ key: 'docs/readme.txt', sha256: sha('hello'), size: 5 }],
      },
      bad: {
        root: fc.constantFrom<unknown>('', 'Fuzz/Gen', '/abs', 'a//b', '../up', 'a/'.repeat(9) + 'a'),
        generation: fc.constantFrom<unknown>(-1, 1.5, '0', 1e10),
        taskId: badAttempt,
        // Not here: a source that is missing or whose bytes are not its sha256/size. That is found
        // by WriteObject after the task is registered, and the flow proves the abort (ABORTED, a
        // durable outcome of a SUCCEEDED execution), by design — not a refusal of the input.
        sources: fc.oneof(
          fc.constant([]),
          fc.constant([{ key: 'docs/readme.txt', sha256: sha('hello').toUpperCase(), size: 5 }]),
          fc.constant([{ key: 'docs/readme.txt', sha256: sha('hello'), size: -1 }]),
          fc.constant([{ key: 'bad key', sha256: sha('hello'), size: 5 }]),
          fc.constant(Array.from({ length: 1001 }, () => ({ key: 'docs/readme.txt', sha256: sha('hello'), size: 5 }))),
        ),
      },
    },
  ];
}

export function flowInputCases(
  world: FuzzWorld,
  fence: { owner: string; session: string; epoch: number },
): fc.Arbitrary<FuzzCase> {
  return flowDefectCases((sfx) => bases(world, fence, sfx), world);
}

/**
 * One flow input of `basesOf(sfx)` (a valid one, picked per case) with exactly one defect;
 * `world` supplies the committed attempts a stream-append input may reuse with other records.
 */
export function flowDefectCases(basesOf: (sfx: string) => FlowBase[], world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const text = (flow: string, json: string, what: string, extra: string[] = []): FuzzCase => ({
    what: `${flow} ${what}`,
    argv: ['flow', 'run', flow, '--input', json, ...extra],
  });
  return fc.tuple(freshSuffix, fc.nat()).chain(([sfx, pick]) => {
    const list = basesOf(sfx);
    const base = list[pick % list.length] as FlowBase;
    const { flow, input } = base;
    const keys = Object.keys(input);
    const key = fc.constantFrom(...keys);
    const required = keys.filter((k) => !(base.optional ?? []).includes(k));
    const mutated = (what: string, next: unknown) => text(flow, JSON.stringify(next), what);
    return fc.oneof(
      ...(required.length
        ? [
            fc
              .constantFrom(...required)
              .map((k) => mutated(`missing ${k}`, Object.fromEntries(Object.entries(input).filter(([x]) => x !== k)))),
          ]
        : []),
      fc
        .tuple(key, wrongType)
        .filter(
          ([k, v]) =>
            !(typeof input[k] === 'string' && typeof v === 'string') &&
            ![input[k], ...(base.validAlso?.[k] ?? [])].some((ok) => JSON.stringify(ok) === JSON.stringify(v)),
        )
        .map(([k, v]) => mutated(`wrong type ${k}=${JSON.stringify(v)}`, { ...input, [k]: v })),
      fc
        .constantFrom(...Object.keys(base.bad))
        .chain((k) =>
          (base.bad[k] as fc.Arbitrary<unknown>).map((v) =>
            mutated(`bad ${k}: ${JSON.stringify(v).slice(0, 60)}`, { ...input, [k]: v }),
          ),
        ),
      ...('stream' in input && 'partition' in input
        ? [missingLane.map((l) => mutated(`missing lane ${JSON.stringify(l)}`, { ...input, ...l }))]
        : []),
      ...(flow === 'stream-append'
        ? [
            fc.constantFrom(...world.committed).map((c) =>
              mutated(`reused attempt ${c.attemptId} with other records`, {
                ...input,
                attemptId: c.attemptId,
                records: [b64(`other-${sfx}`)],
              }),
            ),
          ]
        : []),
      // A field the flow does not read: refused by name (flow.input_unknown_field), never ignored.
      fc
        .constantFrom<[string, unknown]>(
          ['extra', 1],
          ['x', Array.from({ length: 50_000 }, () => 0)],
          ['constructor', { prototype: { polluted: true } }],
          ['pages', 0],
          ['pages', 1_000_000_000],
          ['next', 'garbage-token'],
          ['Stream', STREAM],
        )
        .map(([k, v]) => ({
          ...mutated(`unknown field ${k}`, { ...input, [k]: v }),
          forbiddenCodes: /^(?!flow\.input_unknown_field$)/,
        })),
      // -0 is no partition (JSON.stringify writes it as 0: the text is edited).
      ...('partition' in input
        ? [fc.constant(text(flow, JSON.stringify(input).replace(/"partition":\d+/, '"partition":-0'), 'partition -0'))]
        : []),
      fc
        .constantFrom<unknown>([], 1, 'x', null, true, [input])
        .map((v) => mutated(`not an object: ${JSON.stringify(v).slice(0, 30)}`, v)),
      // As text: building and stringifying a 5,000-deep value would overflow this stack, not the CLI's.
      fc
        .constantFrom(200, 5000)
        .map((d) =>
          text(
            flow,
            JSON.stringify({ ...input, [keys[0] as string]: 0 }).replace(
              /:0([,}])/,
              `:${'['.repeat(d)}0${']'.repeat(d)}$1`,
            ),
            `nested ${d} deep`,
          ),
        ),
      fc.constant(mutated('oversize (300 KB field)', { ...input, padding: 'p'.repeat(300_000) })),
      fc
        .constantFrom(
          JSON.stringify(input).slice(0, -1),
          `${JSON.stringify(input)}}`,
          JSON.stringify(input).replace(/"/g, "'"),
          '',
          '{',
          'undefined',
        )
        .map((t) => text(flow, t, `unparsable JSON ${JSON.stringify(t).slice(0, 30)}`)),
      badFaultSpec.map((spec) =>
        text(flow, JSON.stringify(input), `--faults: ${JSON.stringify(spec)}`, ['--faults', spec]),
      ),
      unknownFlag(['input', 'faults', 'aws', 'profile', 'region', 'stack', 'state-machine-arn', 'name']).map((f) =>
        text(flow, JSON.stringify(input), `unknown flag ${f}`, [f]),
      ),
      fc.constant<FuzzCase>({ what: `${flow} missing --input`, argv: ['flow', 'run', flow] }),
      fc.constantFrom('@/nonexistent.json', '@/', '@').map((v) => text(flow, v, `unreadable --input ${v}`)),
    );
  });
}

/** Unknown flow names. */
export const unknownFlowCases: fc.Arbitrary<FuzzCase> = fc
  .stringMatching(/^[a-z][a-z-]{0,20}$/)
  .filter((f) => !FLOWS.some((flow) => flow.name === f))
  .map((f) => ({ what: `flow run unknown flow ${f}`, argv: ['flow', 'run', f, '--input', '{}'] }));
