import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mutations, type FuzzCase } from '../support/fuzz-cli.js';
import { fuzzSuite, FUZZ_SEED, PROPERTY_MS, runs } from '../support/fuzz-suite.js';
import { STREAM } from '../support/fuzz-world.js';
import { envCases, faultCases, flagCases, objectCases, prototypeNameCases } from './cli-cases.js';
import { inspectCases, liveActionCases, runCases } from './delivery-cases.js';
import { flowInputCases, unknownFlowCases } from './flow-cases.js';
import { fifoManifestCases, stdinCases } from './stdin-cases.js';
import { appendRecordCases, pastEndCases, streamIdCases } from './stream-cases.js';

/**
 * The net of issue 8: property-based fuzzing of every CLI surface and flow input against a
 * seeded local world (test/support/fuzz-world.ts). Every generated command is invalid by
 * construction; each must be refused — exit 1 or 2, empty stdout, one stable diagnostic
 * code line, no stack, no secret or session id — with NOTHING mutated (authority scan,
 * bucket listing with ETags, target rows, local session files, and no execution history but of a FAILED one). In-process
 * (`main(argv)`) except where the process boundary is the subject (stdin, a FIFO).
 *
 * Seed, FUZZ_RUNS and FUZZ_SURVEY: test/support/fuzz-suite.ts. The world is compared every FUZZ_SNAPSHOT_EVERY cases
 * (default 25, and at the end of each property); a batch that mutated is replayed case by case. The surface added
 * since issue 8 (stream maintenance and cursors, quality, cost, --aws, the newer flows, the recovery dispatcher)
 * is in refusals-surface.test.ts, a second file the other vitest worker runs beside this one.
 */

const suite = fuzzSuite('test/fuzz/refusals.test.ts', async ({ world }) => {
  fence = await world.laneSession();
  fifo = join(world.inputs, 'route.fifo');
  execFileSync('mkfifo', [fifo]);
  // The world is what the properties think it is: something to damage in every store.
  const snap = await suite.world.snapshot();
  expect(snap.authority).toContain(`lane#${STREAM}/0`);
  expect(snap.authority).toContain(world.deliveredId);
  expect(snap.bucket.split('\n').length).toBeGreaterThan(10);
  const target = snap.target.split('\n').map((line) => JSON.parse(line) as unknown);
  expect(target).toContainEqual(['events', expect.objectContaining({ rows: 1200 })]);
  expect(target.filter((x) => (x as { invocation_id?: string }).invocation_id !== undefined)).toHaveLength(2);
  expect(snap.sessions).toContain(`${STREAM}-0.json`);
  expect(snap.clickhouse).toContain('"name":"events"');
});
let fence: { owner: string; session: string; epoch: number };
let fifo = '';
const seed = FUZZ_SEED;
const T = PROPERTY_MS;

describe(`every invalid command is refused and mutates nothing (seed ${seed})`, () => {
  it(
    'stream identifiers: malformed or missing stream, partition, attempt, owner, offsets',
    () => suite.runner.property('stream-ids', streamIdCases(), runs(100), seed),
    T,
  );
  it(
    'stream reads and trims past the committed end',
    () => suite.runner.property('stream-past-end', pastEndCases(suite.world), runs(10), seed),
    T,
  );
  it(
    'stream append records: reused attempt with other records, empty, oversize, forged session, unreadable file',
    () => suite.runner.property('stream-records', appendRecordCases(suite.world), runs(24), seed),
    T,
  );
  it(
    'flags: unknown, duplicated with another value, missing their value, booleans with a value, extra positionals, unknown (sub)commands',
    () => suite.runner.property('flags', flagCases(suite.world), runs(170), seed),
    T,
  );
  it(
    'object keys and digests: malformed keys, existing keys with other bytes, wrong or malformed sha256',
    () => suite.runner.property('objects', objectCases(suite.world), runs(110), seed),
    T,
  );
  it(
    'fault grammar: CUTPOINT_FAULTS / --faults with one bad rule in front of a command that would act',
    () => suite.runner.property('faults', faultCases(suite.world), runs(50), seed),
    T,
  );
  it(
    'numeric environment variables with garbage in front of commands that would act',
    () => suite.runner.property('env', envCases(suite.world), runs(30), seed),
    T,
  );
  it(
    'delivery inspect / inspect-all: malformed and unknown ids, bad target ids',
    () => suite.runner.property('delivery-inspect', inspectCases(suite.world), runs(90), seed),
    T,
  );
  it(
    'delivery reconcile / resume / retire: confirmation, ids, selectors, manifests, digests, flags',
    () => suite.runner.property('delivery-live', liveActionCases(suite.world), runs(230), seed),
    T,
  );
  it(
    'delivery run: manifests, selectors, invocation ids of other routes, flags',
    () => suite.runner.property('delivery-run', runCases(suite.world), runs(140), seed),
    T,
  );
  it(
    'flow run inputs: stream-append, stream-takeover, stream-trim, stream-resolve-append, commit-generation',
    () => suite.runner.property('flow-inputs', flowInputCases(suite.world, fence), runs(50), seed),
    T,
  );
  it('flow run: unknown flows', () => suite.runner.property('flow-unknown', unknownFlowCases, runs(30), seed), T);
  it(
    'prototype member names (__proto__, constructor, toString, …) at every level a name is resolved: unknown, never Object.prototype',
    async () => {
      for (const c of prototypeNameCases(suite.world))
        expect((await suite.runner.run(c)).violations, c.what).toEqual([]);
      expect(await suite.runner.settle()).toEqual([]);
    },
    T,
  );
  it(
    'the real bin: stdin shapes (written at once or late, small or past 64 KiB)',
    () => suite.runner.property('stdin', stdinCases(suite.world), runs(3), seed),
    T,
  );
  it(
    'the real bin: a FIFO as --manifest',
    () => suite.runner.property('fifo', fifoManifestCases(fifo), runs(1), seed),
    T,
  );

  it('control: a valid command run the same way is seen to mutate (the snapshot is not blind)', async () => {
    const before = await suite.world.snapshot();
    const created = await suite.runner.exec({
      what: 'control',
      argv: ['stream', 'create', `control-${seed}`, '--partitions', '1'],
    });
    expect(created.code, created.stderr).toBe(0);
    const put = await suite.runner.exec({
      what: 'control',
      argv: ['object', 'put', `control/${seed}`, '--file', '{{bytes}}'],
      files: { bytes: 'control' },
    });
    expect(put.code, put.stderr).toBe(0);
    const changed = mutations(before, await suite.world.snapshot()).map((m) => m.split(':')[0]);
    expect(changed).toEqual(['mutated authority', 'mutated bucket']);
  }, 120_000);

  it('control: a batch of cases that mutated is caught, and replayed case by case to name the case that did it', async () => {
    // A takeover mutates every time it runs (a new epoch), so the replay sees it again.
    const refusal: FuzzCase = { what: 'control refusal', argv: ['stream', 'frobnicate', STREAM] };
    const takeover: FuzzCase = {
      what: 'control takeover',
      argv: ['stream', 'takeover', STREAM, '--partition', '0', '--owner', 'control-owner'],
    };
    expect((await suite.runner.run(refusal)).violations).toEqual([]);
    expect((await suite.runner.run(takeover)).run.code).toBe(0);
    expect((await suite.runner.run(refusal)).violations).toEqual([]);
    const found = await suite.runner.settle();
    expect(found.map((m) => m.split(':')[0])).toContain('mutated authority');
    for (const m of found) expect(m).toMatch(/\(made by control takeover\n.*replayed from a batch of 3\)$/s);
  }, 120_000);
});
