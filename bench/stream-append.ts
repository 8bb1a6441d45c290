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
import { appendBatch } from '../src/stream/append-batch.js';
import { createStream } from '../src/stream/create-stream.js';
import { LaneWriter } from '../src/stream/append/lane-writer.js';
import { pipelinedProducer } from '../src/stream/producer/pipelined-producer.js';
import { takeOverWithNewSession } from '../src/stream/takeover.js';
import { interleave, meterDelta, perOp, round3, type SliceFn } from './measure.js';
import { AWS_LIKE_LATENCY_MS, RequestCounter, sleep, withLatency } from './support/port-requests.js';

/**
 * Stream append records/s against the raw rate of the same store, side by side in one run:
 *
 *   ratio = appended records/s ÷ (raw conditional writes/s × batch size)
 *
 * 1.0 means appending a batch costs what one raw conditional write costs. Sides, each on
 * its own lane with one owner, interleaved slice by slice with the raw baseline (a
 * conditional UpdateItem walking one item, raw-cas.ts):
 * - `appendBatch`: one appender, batch after batch, each under a caller's attempt id (the
 *   flow's path: the id's evidence is checked first, one LIST + one GetItem);
 * - `writer d=N`: the owner's LaneWriter (carried head, minted attempt ids), N batches in
 *   flight (WAL PUTs ahead, head CASes in order);
 * - `producer k=N`: N concurrent appenders (each awaiting its ack before its next batch)
 *   through one group-commit producer over the LaneWriter (pipelinedProducer, depth
 *   PRODUCER_DEPTH): one WAL PUT + one head CAS per group.
 * Two modes: the local emulators as they are, and AWS-like latency injected before EVERY
 * port call and every raw CAS alike (bench/support/port-requests.ts). Requests per batch
 * by kind come from a counting port decorator. Prints only: no speed assertion anywhere.
 */

export interface StreamAppendOptions {
  config: CutpointConfig;
  batchSize: number;
  recordBytes: number;
  /** Concurrent appenders for the producer sides. */
  appenders: readonly number[];
  /** Batches each appender appends per slice. */
  batchesPerSlice: number;
  rawCasPerSlice: number;
  slicesPerRound: number;
  rounds: number;
  warmupRounds: number;
  /** Wall-clock budget per mode (at least 3 measured rounds regardless). */
  budgetMsPerMode: number;
  lingerMs: number;
  progress: (line: string) => void;
}

export interface StreamSideResult {
  name: string;
  /** Concurrent appenders; 0 for the plain appendBatch side. */
  appenders: number;
  recordsPerSec: number;
  /** Median over rounds of records/s ÷ (raw CAS/s × batch size). */
  ratio: number;
  ratios: number[];
  requestsPerBatch: Record<string, number>;
  /** Producer sides: batches per group (one append each). */
  batchesPerGroup?: number;
}

export interface StreamModeResult {
  mode: 'local' | 'aws-like latency';
  goal: number;
  rounds: number;
  rawCasPerSec: number;
  sides: StreamSideResult[];
}

export interface StreamAppendResult {
  batchSize: number;
  recordBytes: number;
  latencyMs: Readonly<Record<string, number>>;
  modes: StreamModeResult[];
  /** One execution of statemachines/stream-append.asl.json through the local runner. */
  flow: { name: string; type: 'STANDARD' | 'EXPRESS'; batchSize: number; transitions: number; lambdaInvocations: number; requests: Record<string, number> };
}

const GOALS = { local: 0.8, 'aws-like latency': 0.6 } as const;

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

function expectCommitted(outcome: { status: string; start?: number; end?: number }, size: number, what: string): void {
  if (outcome.status !== 'KNOWN_COMMITTED' || outcome.end === undefined || outcome.start === undefined || outcome.end - outcome.start !== size) {
    throw new Error(`bench bug: ${what} ended ${JSON.stringify(outcome)}, expected KNOWN_COMMITTED with ${size} records`);
  }
}

export async function benchStreamAppend(opts: StreamAppendOptions): Promise<StreamAppendResult> {
  const raw = awsClients(opts.config).dynamoWriter;
  try {
    const base = awsPorts(opts.config, inertFaults);
    const modes: StreamModeResult[] = [];
    for (const mode of ['local', 'aws-like latency'] as const) {
      const latency = mode === 'aws-like latency';
      modes.push(await measureMode(opts, mode, latency ? withLatency(base) : base, raw, latency));
    }
    const flow = await oneFlowExecution(opts.config, opts.batchSize, opts.recordBytes);
    return { batchSize: opts.batchSize, recordBytes: opts.recordBytes, latencyMs: AWS_LIKE_LATENCY_MS, modes, flow };
  } finally {
    raw.destroy();
  }
}

interface Side {
  name: string;
  appenders: number;
  run: SliceFn;
  counter: RequestCounter;
  batches: () => number;
  groups: () => number;
  check: () => Promise<void>;
}

async function measureMode(
  opts: StreamAppendOptions,
  mode: StreamModeResult['mode'],
  ports: Ports,
  raw: ReturnType<typeof awsClients>['dynamoWriter'],
  latency: boolean,
): Promise<StreamModeResult> {
  const batches = Array.from({ length: 4 }, () => batchOf(opts.batchSize, opts.recordBytes));
  const sides: Side[] = [await appendBatchSide(opts, ports, batches, mode)];
  for (const depth of WRITER_DEPTHS) sides.push(await writerSide(opts, ports, batches, depth));
  for (const k of opts.appenders) sides.push(await producerSide(opts, ports, batches, k));

  const rawItem = new RawCasItem(raw, opts.config.tableName, { pk: `bench#stream#raw#${mode}`, sk: 'item' });
  await rawItem.create();
  const rawCasLatency = AWS_LIKE_LATENCY_MS['dynamodb.UpdateItem'] ?? 0;
  const rawSlice: SliceFn = async () => {
    for (let i = 0; i < opts.rawCasPerSlice; i++) {
      if (latency) await sleep(rawCasLatency);
      await rawItem.cas();
    }
    return opts.rawCasPerSlice;
  };
  opts.progress(
    `stream append, ${mode}: batch ${opts.batchSize} × ${opts.recordBytes} B; sides ${sides.map((s) => s.name).join(', ')}; ` +
      `${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices`,
  );
  const result = await interleave({
    rounds: opts.rounds,
    warmupRounds: opts.warmupRounds,
    slicesPerRound: opts.slicesPerRound,
    budgetMs: opts.budgetMsPerMode,
    baseline: { name: 'raw CAS', run: rawSlice },
    sides: sides.map((s) => ({ name: s.name, run: s.run })),
    onRound: (line) => opts.progress(`  ${line} (batches/s vs CAS/s)`),
  });
  for (const side of sides) await side.check();
  return {
    mode,
    goal: GOALS[mode],
    rounds: result.baseline.rates.length,
    rawCasPerSec: round3(result.baseline.median),
    sides: sides.map((side, i) => {
      const measured = result.sides[i];
      if (!measured) throw new Error(`bench bug: no result for ${side.name}`);
      const out: StreamSideResult = {
        name: side.name,
        appenders: side.appenders,
        recordsPerSec: round3(measured.median * opts.batchSize),
        ratio: round3(measured.medianRatio),
        ratios: measured.ratios.map(round3),
        requestsPerBatch: perOp(side.counter.snapshot(), side.batches()),
      };
      if (side.appenders > 0) out.batchesPerGroup = round3(side.batches() / side.groups());
      return out;
    }),
  };
}

async function appendBatchSide(opts: StreamAppendOptions, ports: Ports, batches: Uint8Array[][], mode: string): Promise<Side> {
  const counter = new RequestCounter();
  const counted = counter.wrap(ports);
  const { lane, session } = await ownedLane(ports, 'single');
  let appended = 0;
  return {
    name: 'appendBatch',
    appenders: 0,
    counter,
    batches: () => appended,
    groups: () => appended,
    run: async () => {
      for (let i = 0; i < opts.batchesPerSlice; i++) {
        const attemptId = `single-${mode.replace(/\W/g, '')}-${appended}`;
        const outcome = await appendBatch({ ...lane, attemptId, session, records: batches[appended % batches.length]! }, counted);
        expectCommitted(outcome, opts.batchSize, `append ${attemptId}`);
        appended++;
      }
      return opts.batchesPerSlice;
    },
    check: () => expectHead(ports, lane, appended * opts.batchSize),
  };
}

/** In-flight batches of the plain LaneWriter sides, and of the producer's groups. */
const WRITER_DEPTHS = [1, 8] as const;
const PRODUCER_DEPTH = 4;

async function writerSide(opts: StreamAppendOptions, ports: Ports, batches: Uint8Array[][], depth: number): Promise<Side> {
  const counter = new RequestCounter();
  const { lane, session } = await ownedLane(ports, `w${depth}`);
  const writer = new LaneWriter(counter.wrap(ports), lane, session, { depth });
  let appended = 0;
  return {
    name: `writer d=${depth}`,
    appenders: 0,
    counter,
    batches: () => appended,
    groups: () => appended,
    run: async () => {
      // `depth` batches per slice's step, so a pipelined writer has its window full.
      const count = opts.batchesPerSlice * depth;
      await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const outcome = await writer.append(batches[i % batches.length]!);
          expectCommitted(outcome, opts.batchSize, `writer d=${depth} batch`);
          appended++;
        }),
      );
      return count;
    },
    check: () => expectHead(ports, lane, appended * opts.batchSize),
  };
}

async function producerSide(opts: StreamAppendOptions, ports: Ports, batches: Uint8Array[][], k: number): Promise<Side> {
  const counter = new RequestCounter();
  const { lane, session } = await ownedLane(ports, `k${k}`);
  let groups = 0;
  let appended = 0;
  const producer = pipelinedProducer(lane, session, counter.wrap(ports), {
    depth: PRODUCER_DEPTH,
    lingerMs: opts.lingerMs,
    maxRecords: Math.max(k * opts.batchSize, 1),
    onGroup: () => groups++,
  });
  return {
    name: `producer k=${k}`,
    appenders: k,
    counter,
    batches: () => appended,
    groups: () => groups,
    run: async () => {
      await Promise.all(
        Array.from({ length: k }, async (_, a) => {
          for (let i = 0; i < opts.batchesPerSlice; i++) {
            const ack = await producer.append(batches[(a + i) % batches.length]!);
            expectCommitted(ack, opts.batchSize, `producer k=${k} batch`);
            appended++;
          }
        }),
      );
      return k * opts.batchesPerSlice;
    },
    check: async () => {
      await producer.close();
      await expectHead(ports, lane, appended * opts.batchSize);
    },
  };
}

/** Every append landed once: the head is at the records appended. */
async function expectHead(ports: Ports, lane: LaneRef, records: number): Promise<void> {
  const head = await ports.authority.get(laneKeys.head(lane));
  if (head?.committedEnd !== records) throw new Error(`bench bug: head of ${lane.stream} at ${String(head?.committedEnd)} after ${records} records`);
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
  expectCommitted(result.output as AppendOutcome, batchSize, `${name} execution`);
  const tasks = new Set(taskStates(loadAsl(name)).map((t) => t.state));
  const lambdaInvocations = result.events.filter((e) => e.type === 'StateEntered' && e.state !== undefined && tasks.has(e.state)).length;
  const type = FLOWS.find((f) => f.name === name)?.type ?? 'STANDARD';
  return { name, type, batchSize, transitions: result.transitions, lambdaInvocations, requests };
}

export { describeRequests } from './support/stream-print.js';
