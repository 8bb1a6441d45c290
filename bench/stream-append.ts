import { RawCasItem } from './raw-cas.js';
import { randomBytes } from 'node:crypto';
import { FLOWS } from '../functions/registry.js';
import { awsClients } from '../src/adapters/aws-clients.js';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import { laneKeys, type AppendOutcome, type LaneRef } from '../src/domain/stream.js';
import { loadAsl, taskStates } from '../src/local/asl.js';
import { runFlow } from '../src/local/flow-runner.js';
import type { Fence } from '../src/ports/authority.js';
import type { Ports } from '../src/ports/index.js';
import { RequestMeter } from '../src/ports/meter.js';
import { commitHead } from '../src/stream/append/commit-head.js';
import { materializeGen0 } from '../src/stream/append/materialize-gen0.js';
import { writeIndex } from '../src/stream/append/write-index.js';
import { writeWal } from '../src/stream/append/write-wal.js';
import { appendBatch } from '../src/stream/append-batch.js';
import { createStream } from '../src/stream/create-stream.js';
import { takeOverWithNewSession } from '../src/stream/takeover.js';
import { interleave, meterDelta, perOp, round3, type InterleaveResult, type SliceFn } from './measure.js';

/**
 * Stream append records/s: `appendBatch` (the in-process append — WAL object, intent,
 * fenced head CAS, index, generation 0) on one lane with one owner, batch after batch in
 * order (group commit: one WAL object and one head CAS per batch), against the raw rate
 * of a conditional `UpdateItemCommand` on the same DynamoDB Local — the same raw baseline
 * as authority-cas.ts, interleaved slice by slice. The ratio is
 *
 *   appended records/s ÷ (raw conditional writes/s × batch size)
 *
 * per round, median over rounds: 1.0 would mean appending a batch costs what one raw
 * conditional write costs. Alongside: AWS requests per appended batch (RequestMeter),
 * split into the append's own steps and generation-0 materialization, and the state
 * transitions of one stream-append execution through the local flow runner.
 */

export interface StreamAppendOptions {
  config: CutpointConfig;
  batchSizes: readonly number[];
  recordBytes: number;
  /** Batches appended per slice (the append side). */
  appendsPerSlice: number;
  /** Raw conditional writes per slice (the baseline side). */
  rawCasPerSlice: number;
  slicesPerRound: number;
  /** Measured rounds per batch size, at most: fewer when budgetMsPerSize runs out (at least 3). */
  rounds: number;
  warmupRounds: number;
  budgetMsPerSize: number;
  progress: (line: string) => void;
}

export interface StreamAppendSizeResult {
  batchSize: number;
  rounds: number;
  /** Median appended records/s. */
  recordsPerSec: number;
  /** Median raw conditional writes/s, measured in the same slices. */
  rawCasPerSec: number;
  /** Median over rounds of records/s ÷ (raw CAS/s × batch size); 1.0 = one raw conditional write per batch. */
  ratio: number;
  /** Requests per appended batch over every timed append (warm-up included). */
  requestsPerBatch: Record<string, number>;
  perRound: InterleaveResult;
}

export interface StepRequests {
  step: string;
  requests: Record<string, number>;
}

export interface StreamAppendResult {
  recordBytes: number;
  sizes: StreamAppendSizeResult[];
  /** One batch appended step by step (the steps appendBatch runs, in its order). */
  breakdown: {
    batchSize: number;
    steps: StepRequests[];
    appendSteps: Record<string, number>;
    generation0: Record<string, number>;
  };
  /** One execution of statemachines/stream-append.asl.json through the local runner. */
  flow: {
    name: string;
    type: 'STANDARD' | 'EXPRESS';
    batchSize: number;
    transitions: number;
    /** Task states entered: one Lambda invocation each when deployed. */
    lambdaInvocations: number;
    requests: Record<string, number>;
  };
}

let laneSeq = 0;

/** A fresh single-partition stream with one owner session. */
async function ownedLane(ports: Ports, label: string): Promise<{ lane: LaneRef; session: Fence }> {
  const stream = `bench-${label}-${Date.now().toString(36)}-${laneSeq++}`;
  await createStream({ stream, partitions: 1 }, ports);
  const lane = { stream, partition: 0 };
  const session = await takeOverWithNewSession(lane, 'bench-writer', ports);
  return { lane, session };
}

function batchOf(size: number, recordBytes: number): Uint8Array[] {
  return Array.from({ length: size }, () => new Uint8Array(randomBytes(recordBytes)));
}

function expectCommitted(outcome: AppendOutcome, start: number, size: number, what: string): void {
  if (outcome.status !== 'KNOWN_COMMITTED' || outcome.start !== start || outcome.end !== start + size || outcome.pendingRepairs) {
    throw new Error(`bench bug: ${what} ended ${JSON.stringify(outcome)}, expected KNOWN_COMMITTED [${start}, ${start + size})`);
  }
}

export async function benchStreamAppend(opts: StreamAppendOptions): Promise<StreamAppendResult> {
  const { config } = opts;
  const meter = new RequestMeter();
  const ports = awsPorts(config, inertFaults, meter);
  // The baseline: the adapters' own writer client setup (same endpoint, no SDK retries).
  const raw = awsClients(config).dynamoWriter;
  try {
    const sizes: StreamAppendSizeResult[] = [];
    for (const batchSize of opts.batchSizes) sizes.push(await measureSize(opts, batchSize, ports, meter, raw));
    const largest = Math.max(...opts.batchSizes);
    const breakdown = await stepByStep(config, largest, opts.recordBytes);
    const flow = await oneFlowExecution(config, largest, opts.recordBytes);
    const appendBatchRequests = sizes.find((s) => s.batchSize === largest)?.requestsPerBatch ?? {};
    const stepTotal = sumCounts(breakdown.steps.map((s) => s.requests));
    if (total(stepTotal) !== total(appendBatchRequests)) {
      opts.progress(`note: step-by-step ${total(stepTotal)} requests vs appendBatch ${total(appendBatchRequests)} per batch of ${largest}`);
    }
    return { recordBytes: opts.recordBytes, sizes, breakdown, flow };
  } finally {
    raw.destroy();
  }
}

async function measureSize(
  opts: StreamAppendOptions,
  batchSize: number,
  ports: Ports,
  meter: RequestMeter,
  raw: ReturnType<typeof awsClients>['dynamoWriter'],
): Promise<StreamAppendSizeResult> {
  const { config } = opts;
  const { lane, session } = await ownedLane(ports, `b${batchSize}`);
  // A few distinct batches, generated untimed; attempt ids are distinct per append regardless.
  const batches = Array.from({ length: 4 }, () => batchOf(batchSize, opts.recordBytes));
  let appended = 0;
  let nextStart = 0;
  const counts: Record<string, number> = {};
  const appendSlice: SliceFn = async (round, slice) => {
    const before = meter.snapshot();
    for (let i = 0; i < opts.appendsPerSlice; i++) {
      const attemptId = `b${batchSize}-r${round}-s${slice}-${i}`;
      const records = batches[appended % batches.length]!;
      const outcome = await appendBatch({ ...lane, attemptId, session, records }, ports);
      expectCommitted(outcome, nextStart, batchSize, `append ${attemptId}`);
      nextStart += batchSize;
      appended++;
    }
    for (const [k, n] of Object.entries(meterDelta(before, meter.snapshot()))) counts[k] = (counts[k] ?? 0) + n;
    return opts.appendsPerSlice; // units: batches, so side/baseline is batches per raw CAS
  };

  // Raw: the same conditional UpdateItem baseline as the authority bench (raw-cas.ts).
  const rawItem = new RawCasItem(raw, config.tableName, { pk: `bench#stream#raw#b${batchSize}`, sk: 'item' });
  await rawItem.create();
  const rawSlice: SliceFn = async () => {
    for (let i = 0; i < opts.rawCasPerSlice; i++) await rawItem.cas();
    return opts.rawCasPerSlice;
  };

  opts.progress(
    `stream append, batch ${batchSize} × ${opts.recordBytes} B: ${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices ` +
      `(${opts.appendsPerSlice} appends vs ${opts.rawCasPerSlice} raw CAS per slice)`,
  );
  const result = await interleave({
    rounds: opts.rounds,
    warmupRounds: opts.warmupRounds,
    slicesPerRound: opts.slicesPerRound,
    budgetMs: opts.budgetMsPerSize,
    baseline: { name: 'raw CAS', run: rawSlice },
    sides: [{ name: 'append', run: appendSlice }],
    onRound: (line) => opts.progress(`  ${line} (batches/s vs CAS/s)`),
  });
  const side = result.sides[0];
  if (!side) throw new Error('bench bug: no append side');
  // Every append landed once, in order: the head is at the records appended.
  const head = await ports.authority.get(laneKeys.head(lane));
  if (head?.committedEnd !== nextStart) throw new Error(`bench bug: head at ${String(head?.committedEnd)} after ${nextStart} records`);
  return {
    batchSize,
    rounds: result.baseline.rates.length,
    recordsPerSec: round3(side.median * batchSize),
    rawCasPerSec: round3(result.baseline.median),
    ratio: round3(side.medianRatio),
    requestsPerBatch: perOp(counts, appended),
    perRound: result,
  };
}

/** The steps appendBatch runs, one by one on their own meter: who spends which request. */
async function stepByStep(config: CutpointConfig, batchSize: number, recordBytes: number): Promise<StreamAppendResult['breakdown']> {
  const meter = new RequestMeter();
  const ports = awsPorts(config, inertFaults, meter);
  const { lane, session } = await ownedLane(ports, `steps${batchSize}`);
  let steps: StepRequests[] = [];
  // The first append of a lane is not special, but warm the code paths once anyway.
  for (let n = 0; n < 2; n++) {
    const ref = { ...lane, attemptId: `steps-${n}`, session };
    const records = batchOf(batchSize, recordBytes).map((r) => Buffer.from(r).toString('base64'));
    steps = [];
    const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      const before = meter.snapshot();
      const out = await run();
      steps.push({ step: name, requests: meterDelta(before, meter.snapshot()) });
      return out;
    };
    const wal = await step('WriteWal', () => writeWal({ ...ref, records }, ports));
    const committed = await step('CommitHead', () => commitHead(wal, ports));
    expectCommitted(committed, n * batchSize, batchSize, `step-by-step append ${ref.attemptId}`);
    await step('WriteIndex', () => writeIndex(ref, ports));
    const gen0 = await step('MaterializeGen0', () => materializeGen0(ref, ports));
    if (!gen0.gen0) throw new Error(`bench bug: generation 0 of ${ref.attemptId} did not commit`);
  }
  return {
    batchSize,
    steps,
    appendSteps: sumCounts(steps.filter((s) => s.step !== 'MaterializeGen0').map((s) => s.requests)),
    generation0: sumCounts(steps.filter((s) => s.step === 'MaterializeGen0').map((s) => s.requests)),
  };
}

/** One stream-append execution through the local runner: transitions and requests. */
async function oneFlowExecution(config: CutpointConfig, batchSize: number, recordBytes: number): Promise<StreamAppendResult['flow']> {
  const name = 'stream-append';
  const meter = new RequestMeter();
  const ports = awsPorts(config, inertFaults, meter);
  const { lane, session } = await ownedLane(ports, `flow${batchSize}`);
  const records = batchOf(batchSize, recordBytes).map((r) => Buffer.from(r).toString('base64'));
  const before = meter.snapshot();
  const result = await runFlow(name, { ...lane, attemptId: 'flow-1', session, records }, { ports });
  const requests = meterDelta(before, meter.snapshot());
  if (result.status !== 'SUCCEEDED') throw new Error(`bench bug: ${name} ${result.status}: ${result.error} ${result.cause}`);
  expectCommitted(result.output as AppendOutcome, 0, batchSize, `${name} execution`);
  const tasks = new Set(taskStates(loadAsl(name)).map((t) => t.state));
  const lambdaInvocations = result.events.filter((e) => e.type === 'StateEntered' && e.state !== undefined && tasks.has(e.state)).length;
  const type = FLOWS.find((f) => f.name === name)?.type ?? 'STANDARD';
  return { name, type, batchSize, transitions: result.transitions, lambdaInvocations, requests };
}

function sumCounts(list: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const counts of list) for (const [k, n] of Object.entries(counts)) out[k] = (out[k] ?? 0) + n;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function total(counts: Record<string, number>): number {
  return round3(Object.values(counts).reduce((a, b) => a + b, 0));
}

const SERVICES: Array<[prefix: string, label: string]> = [
  ['dynamodb', 'DynamoDB'],
  ['s3', 'S3'],
];

/**
 * `14 (DynamoDB 10: GetItem 6, PutItem 2, TransactWriteItems 2; S3 4: PutObject 2, GetObject 2)`
 * from RequestMeter keys such as `dynamodb.GetItem`.
 */
export function describeRequests(counts: Record<string, number>): string {
  const num = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));
  const groups: string[] = [];
  for (const [prefix, label] of SERVICES) {
    const ops = Object.entries(counts)
      .filter(([k]) => k.startsWith(`${prefix}.`))
      .sort(([, a], [, b]) => b - a);
    if (!ops.length) continue;
    const sum = round3(ops.reduce((s, [, n]) => s + n, 0));
    groups.push(`${label} ${num(sum)}: ${ops.map(([k, n]) => `${k.slice(prefix.length + 1)} ${num(n)}`).join(', ')}`);
  }
  const others = Object.entries(counts).filter(([k]) => !SERVICES.some(([p]) => k.startsWith(`${p}.`)));
  if (others.length) groups.push(others.map(([k, n]) => `${k} ${num(n)}`).join(', '));
  return `${num(total(counts))} (${groups.join('; ') || 'none'})`;
}
