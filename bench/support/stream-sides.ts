import type { Ports } from '../../src/ports/index.js';
import { appendBatch } from '../../src/stream/append-batch.js';
import { LaneWriter } from '../../src/stream/append/lane-writer.js';
import { pipelinedProducer } from '../../src/stream/producer/pipelined-producer.js';
import type { SliceFn } from '../measure.js';
import { RequestCounter } from './port-requests.js';
import { expectCommitted, expectHead, ownedLane } from './stream-lane.js';

/**
 * The sides the stream append bench measures against its raw baseline, each on its own lane
 * with one owner and its own request counter (see bench/stream-append.ts):
 * - `appendBatch`: one appender, batch after batch, each under a caller's attempt id;
 * - `writer d=N`: the owner's LaneWriter, N batches in flight;
 * - `producer k=N`: N concurrent appenders through one group-commit producer.
 */
export interface Side {
  name: string;
  appenders: number;
  run: SliceFn;
  counter: RequestCounter;
  batches: () => number;
  groups: () => number;
  check: () => Promise<void>;
}

export interface SideOptions {
  batchSize: number;
  /** Batches each appender appends per slice. */
  batchesPerSlice: number;
  lingerMs: number;
}

/** In-flight batches of the plain LaneWriter sides, and of the producer's groups. */
export const WRITER_DEPTHS = [1, 8] as const;
const PRODUCER_DEPTH = 4;

export async function appendBatchSide(
  opts: SideOptions,
  ports: Ports,
  batches: Uint8Array[][],
  mode: string,
): Promise<Side> {
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
        const outcome = await appendBatch(
          { ...lane, attemptId, session, records: batches[appended % batches.length]! },
          counted,
        );
        expectCommitted(outcome, opts.batchSize, `append ${attemptId}`);
        appended++;
      }
      return opts.batchesPerSlice;
    },
    check: () => expectHead(ports, lane, appended * opts.batchSize),
  };
}

export async function writerSide(
  opts: SideOptions,
  ports: Ports,
  batches: Uint8Array[][],
  depth: number,
): Promise<Side> {
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

export async function producerSide(opts: SideOptions, ports: Ports, batches: Uint8Array[][], k: number): Promise<Side> {
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
