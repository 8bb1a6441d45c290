import { RawCasItem } from './raw-cas.js';
import { awsClients } from '../src/adapters/aws-clients.js';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import type { Ports } from '../src/ports/index.js';
import { interleave, perOp, round3, type SliceFn } from './measure.js';
import { AWS_LIKE_LATENCY_MS, sleep, withLatency } from './support/port-requests.js';
import { oneFlowExecution, type FlowCost } from './support/stream-flow.js';
import { batchOf } from './support/stream-lane.js';
import { appendBatchSide, producerSide, writerSide, WRITER_DEPTHS, type Side } from './support/stream-sides.js';

/**
 * Stream append records/s against the raw rate of the same store, side by side in one run:
 *
 *   ratio = appended records/s ÷ (raw conditional writes/s × batch size)
 *
 * 1.0 means appending a batch costs what one raw conditional write costs. Sides, each on
 * its own lane with one owner, interleaved slice by slice with the raw baseline (a
 * conditional UpdateItem walking one item, raw-cas.ts):
 * - `appendBatch`: one appender, batch after batch, each under a caller's attempt id (the
 *   flow's path: the id's evidence is checked first: a LIST beside the spent marker's
 *   GetItem, then the collected record's GetItem, read after the listing);
 * - `writer d=N`: the owner's LaneWriter (carried head, minted attempt ids), N batches in
 *   flight (WAL PUTs ahead, head CASes in order);
 * - `producer k=N`: N concurrent appenders (each awaiting its ack before its next batch)
 *   through one group-commit producer over the LaneWriter (pipelinedProducer, depth
 *   PRODUCER_DEPTH): one WAL PUT + one head CAS per group.
 * Two modes: the local emulators as they are, and AWS-like latency injected before EVERY
 * port call and every raw CAS alike (bench/support/port-requests.ts). Requests per batch
 * by kind come from a counting port decorator. Prints only: no speed assertion anywhere.
 * The sides are built in bench/support/stream-sides.ts, the one flow execution in
 * bench/support/stream-flow.ts.
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
  flow: FlowCost;
}

const GOALS = { local: 0.8, 'aws-like latency': 0.6 } as const;

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

export { describeRequests } from './support/stream-print.js';
