import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { ConformanceCase } from './case.js';
import {
  catchOrder,
  distributedMap,
  growingState,
  inlineMap,
  passThrough,
  retryCount,
  retryThenCatch,
} from './sfn-fixtures.js';
import { isRefused, type Execution, type Started } from './sfn-target.js';
import type { ConformanceTarget } from './target.js';

/**
 * The Step Functions behaviours the flows (statemachines/*.asl.json) are written against,
 * each a small state machine (sfn-fixtures.ts) run by `t.machines`: the local runner under
 * `npm test`, Step Functions under `npm run test:aws`. What a case returns is a few fields
 * picked out in a fixed order (never timing, never ARNs), so it compares as JSON.
 */

const DG = 'https://docs.aws.amazon.com/step-functions/latest/dg';

/** The execution a start led to; a refused start is not what these cases expect, so it stops the case (runCases records it). */
function ran(s: Started): Execution {
  if (isRefused(s)) throw new Error(`StartExecution refused: ${s.refused.name}`);
  return s;
}

const ended = (e: Execution) => ({ status: e.status, error: e.error, cause: e.cause });
const times = (e: Execution, state: string) => e.entered.filter((s) => s === state).length;
/** Compact JSON of `n` UTF-8 bytes: `{"s":"xx…"}`. */
const ofBytes = (n: number) => ({ s: 'x'.repeat(n - '{"s":""}'.length) });

async function putJson(t: ConformanceTarget, key: string, value: unknown): Promise<void> {
  await t.s3.send(new PutObjectCommand({ Bucket: t.bucket, Key: key, Body: JSON.stringify(value) }));
}

async function getJson<T>(t: ConformanceTarget, key: string): Promise<T> {
  const out = await t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: key }));
  return JSON.parse(await out.Body!.transformToString()) as T;
}

/** Runs the distributed-map fixture over `parts`, written to S3 under `key` first. */
async function mapRun(t: ConformanceTarget, key: string, parts: unknown[]) {
  await putJson(t, `${key}/plan.json`, parts);
  const plan = { bucket: t.bucket, key: `${key}/plan.json`, maxConcurrency: 2, resultsPrefix: `${key}/map-results` };
  const [started] = await t.machines.run(key, distributedMap(), [{ fence: 7, plan }]);
  return { execution: ran(started!), plan };
}

interface Manifest {
  DestinationBucket?: string;
  MapRunArn?: string;
  ResultFiles?: Record<string, Array<{ Key: string }>>;
}

export const SFN_CASES: readonly ConformanceCase[] = [
  {
    name: 'sfn: Retry picks its retrier by error name, MaxAttempts 2 is three attempts, then Catch puts {Error, Cause} at ResultPath',
    reliedOnBy:
      'statemachines/*.asl.json every step (Retry of Cutpoint.OutcomeUnknown and friends, then Catch to $.failure)',
    documented: `${DG}/concepts-error-handling.html`,
    expect: {
      status: 'SUCCEEDED',
      attempts: 3,
      caught: 1,
      failure: { error: 'Cutpoint.OutcomeUnknown', cause: 'the step failed' },
      inputKept: true,
    },
    async run(t, key) {
      const input = { throw: 'Cutpoint.OutcomeUnknown', why: 'the step failed' };
      const e = ran((await t.machines.run(key, retryThenCatch(), [input]))[0]!);
      const out = (e.output ?? {}) as { why?: string; failure?: { Error?: string; Cause?: string } };
      return {
        status: e.status,
        attempts: times(e, 'StepThrows'),
        caught: times(e, 'Caught'),
        failure: { error: out.failure?.Error, cause: out.failure?.Cause },
        inputKept: out.why === input.why,
      };
    },
  },
  {
    name: 'sfn: $$.State.RetryCount in a retried state is the number of retries so far',
    reliedOnBy: 'statemachines/deliver-window.asl.json (every step passes `retry.$`: $$.State.RetryCount)',
    documented: `${DG}/input-output-contextobject.html`,
    expect: { status: 'FAILED', error: 'Cutpoint.OutcomeUnknown', cause: 'attempt 2' },
    emulator: {
      observed: { status: 'FAILED', error: 'Cutpoint.OutcomeUnknown', cause: 'attempt 0' },
      note: 'The local runner (aws-local-stepfunctions) reads $$.State.RetryCount as 0 on every attempt. No step depends on the count: a step handed a carried state that a previous attempt made stale refuses on it and decides again from the journal (rereadOnStale, src/delivery/steps/carried.ts), so a retry that looks like a first attempt still reads before it acts.',
    },
    async run(t, key) {
      const [started] = await t.machines.run(key, retryCount(), [{ throw: 'Cutpoint.OutcomeUnknown' }]);
      return ended(ran(started!));
    },
  },
  {
    name: 'sfn: the first Catcher whose ErrorEquals names the error wins; a later States.ALL takes the rest',
    reliedOnBy:
      'statemachines/deliver-window.asl.json (Delivery.NeedsRecovery caught before the refusals), commit-generation (States.ALL last)',
    documented: `${DG}/concepts-error-handling.html`,
    expect: [
      ['Step', 'StepThrows', 'StoppedForRecovery'],
      ['Step', 'StepThrows', 'Refused'],
    ],
    async run(t, key) {
      const runs = await t.machines.run(key, catchOrder(), [
        { throw: 'Delivery.NeedsRecovery', why: 'journal PARTIAL_PROVED' },
        { throw: 'Cutpoint.ValidationError', why: 'flow.input_unknown_field' },
      ]);
      return runs.map((s) => ran(s).entered);
    },
  },
  {
    name: "sfn: a Fail state's Error (static or ErrorPath) and Cause (CausePath) are the failed execution's error and cause",
    reliedOnBy:
      'src/recovery/dispatch.ts and src/recovery/designed-stops.ts (a failed execution matched by its error name)',
    documented: `${DG}/state-fail.html`,
    expect: [
      { status: 'FAILED', error: 'Delivery.NeedsRecovery', cause: 'journal PARTIAL_PROVED' },
      { status: 'FAILED', error: 'Cutpoint.ValidationError', cause: 'flow.input_unknown_field' },
    ],
    async run(t, key) {
      const runs = await t.machines.run(key, catchOrder(), [
        { throw: 'Delivery.NeedsRecovery', why: 'journal PARTIAL_PROVED' },
        { throw: 'Cutpoint.ValidationError', why: 'flow.input_unknown_field' },
      ]);
      return runs.map((s) => ended(ran(s)));
    },
  },
  {
    name: 'sfn: an inline Map with ItemSelector ($$.Map.Item.Value/Index, $ the Map input) outputs in item order; States.JsonToString is compact',
    reliedOnBy: 'statemachines/stream-maintain.asl.json (Lanes, FindFailed, AnyFailed)',
    documented: `${DG}/input-output-itemselector.html`,
    expect: [
      {
        status: 'SUCCEEDED',
        lanes: [
          [0, 'a', 'MAINTAINED', 't'],
          [1, 'b', 'MAINTAINED', 't'],
        ],
      },
      { status: 'FAILED', error: 'Stream.MaintenanceIncomplete', failed: ['broken'] },
    ],
    async run(t, key) {
      const lanes = (...streams: string[]) => ({ tag: 't', lanes: streams.map((stream) => ({ stream })) });
      const [ok, broken] = (await t.machines.run(key, inlineMap(), [lanes('a', 'b'), lanes('a', 'broken')])).map(ran);
      type Lane = { index?: number; stream?: string; status?: string; tag?: string };
      const summary = JSON.parse(broken!.cause ?? '[]') as Lane[];
      return [
        {
          status: ok!.status,
          lanes: ((ok!.output ?? []) as Lane[]).map((l) => [l.index, l.stream, l.status, l.tag]),
        },
        {
          status: broken!.status,
          error: broken!.error,
          failed: summary.filter((l) => l.status === 'FAILED').map((l) => l.stream),
        },
      ];
    },
  },
  {
    name: 'sfn: a Distributed Map reads its items from an S3 JSON array and, with a ResultWriter, outputs {MapRunArn, ResultWriterDetails: {Bucket, Key}} naming the manifest it wrote',
    reliedOnBy:
      'statemachines/deliver-window.asl.json, delivery-resume, publish-clickhouse (ExtractLoadParts/ContinueParts: the plan in S3, results under plan.resultsPrefix)',
    documented: `${DG}/input-output-resultwriter.html`,
    expect: {
      status: 'SUCCEEDED',
      output: ['MapRunArn', 'ResultWriterDetails'],
      details: ['Bucket', 'Key'],
      inOurBucket: true,
      manifestOfTheRun: true,
      manifest: { destination: true, mapRun: true, files: { FAILED: 0, PENDING: 0, SUCCEEDED: 1 } },
      children: ['SUCCEEDED 0 7', 'SUCCEEDED 1 7', 'SUCCEEDED 2 7'],
    },
    async run(t, key) {
      const { execution: e, plan } = await mapRun(t, key, [{ n: 0 }, { n: 1 }, { n: 2 }]);
      const written = ((e.output ?? {}) as { written?: Record<string, unknown> }).written ?? {};
      const details = (written.ResultWriterDetails ?? {}) as { Bucket?: string; Key?: string };
      const mapRunArn = String(written.MapRunArn);
      const runId = mapRunArn.slice(mapRunArn.lastIndexOf(':') + 1);
      const manifest = details.Key ? await getJson<Manifest>(t, details.Key) : {};
      const files = manifest.ResultFiles ?? {};
      const records = [];
      for (const file of files.SUCCEEDED ?? [])
        records.push(...(await getJson<Array<{ Status?: string; Output?: string }>>(t, file.Key)));
      return {
        status: e.status,
        output: Object.keys(written).sort(),
        details: Object.keys(details).sort(),
        inOurBucket: details.Bucket === t.bucket,
        manifestOfTheRun: details.Key === `${plan.resultsPrefix}/${runId}/manifest.json`,
        manifest: {
          destination: manifest.DestinationBucket === t.bucket,
          mapRun: manifest.MapRunArn === mapRunArn,
          files: Object.fromEntries(['FAILED', 'PENDING', 'SUCCEEDED'].map((s) => [s, files[s]?.length])),
        },
        children: records
          .map((r) => {
            const out = JSON.parse(r.Output ?? '{}') as { n?: number; fence?: number };
            return `${r.Status} ${out.n} ${out.fence}`;
          })
          .sort(),
      };
    },
  },
  {
    name: 'sfn: a Distributed Map with ToleratedFailurePercentage 0 fails on one failed child with States.ExceedToleratedFailureThreshold, which its Catch takes',
    reliedOnBy:
      'statemachines/deliver-window.asl.json, delivery-resume, publish-clickhouse (a refused part ends the flow refused, through the Map Catch)',
    documented: `${DG}/state-map-distributed.html#maprun-fail-threshold`,
    expect: { status: 'SUCCEEDED', entered: ['Parts', 'Refused'], caught: 'States.ExceedToleratedFailureThreshold' },
    async run(t, key) {
      const { execution: e } = await mapRun(t, key, [{ n: 0 }, { n: 1, refuse: true }, { n: 2 }]);
      const failure = ((e.output ?? {}) as { failure?: { Error?: string } }).failure;
      return { status: e.status, entered: e.entered, caught: failure?.Error };
    },
  },
  {
    name: 'sfn: an execution input of 262,144 bytes runs; one byte more and StartExecution refuses it',
    reliedOnBy: 'src/engine/flow-input.ts assertFlowInput (STEP_FUNCTIONS_INPUT_MAX_BYTES, a bulk input)',
    documented: `${DG}/service-quotas.html#service-limits-task-executions`,
    expect: { atLimit: 'SUCCEEDED', overLimit: 'refused' },
    emulator: {
      observed: { atLimit: 'SUCCEEDED', overLimit: 'SUCCEEDED' },
      note: 'The local runner has no StartExecution and no payload limit: it runs any input. The code does not rely on the refusal: every execution input is checked before it is started or read (assertFlowInput, src/engine/flow-input.ts: 64 KiB, a bulk input STEP_FUNCTIONS_INPUT_MAX_BYTES, one its first Task is passed twice TWICE_PASSED_MAX_BYTES; src/engine/flow-input-fields.ts) and refused by name, locally as on AWS.',
    },
    async run(t, key) {
      const [atLimit, overLimit] = await t.machines.run(key, passThrough(), [ofBytes(262_144), ofBytes(262_145)]);
      const status = (s: Started) => (isRefused(s) ? 'refused' : s.status);
      return { atLimit: status(atLimit!), overLimit: status(overLimit!) };
    },
  },
  {
    name: 'sfn: a state output over 262,144 bytes fails the execution with States.DataLimitExceeded',
    reliedOnBy:
      'statemachines/*.asl.json (bulk stays in S3: the Distributed Maps read the plan from S3 and write results to S3 with ResultPath null)',
    documented: `${DG}/concepts-error-handling.html`,
    expect: { status: 'FAILED', error: 'States.DataLimitExceeded' },
    emulator: {
      observed: { status: 'SUCCEEDED' },
      note: 'The local runner enforces no payload limit, so a state output over 256 KiB passes. The code stays under it without relying on the error: inputs are capped before a start (assertFlowInput, src/engine/flow-input.ts, src/engine/flow-input-fields.ts: the first Task of a bulk input passed twice is held to TWICE_PASSED_MAX_BYTES so its own input stays under the limit), and whatever grows with the data (plans, parts, map results, records) lives in S3, referenced by key, never in the state.',
    },
    async run(t, key) {
      const [started] = await t.machines.run(key, growingState(), [ofBytes(100 * 1024)]);
      const e = ran(started!);
      return e.status === 'SUCCEEDED' ? { status: e.status } : { status: e.status, error: e.error };
    },
  },
];
