import { priceUsage, type PricedUsage } from '../../cost/price.js';
import { EXPRESS_BILLED_MB, PRICES } from '../../cost/prices.js';
import { progress, UsageError } from '../io.js';
import { parseOptions } from '../grammar.js';

export const costHelp = `cutpoint cost [--rows N] [--chunk-rows N] [--part-rows N] [--batch-records N] [--record-bytes N]
  what one delivered window and one appended batch cost on AWS, measured: runs the
  deliver-window flow (a window of --rows rows, default 960, ClickHouse → PostgreSQL) and
  the stream-append flow (one batch, default 100 records of 256 bytes) with the local runner
  on throw-away emulators, counts state transitions (the runner, Distributed Map children
  included), Lambda invocations and GB-seconds (every Task timed on this machine, at its
  function's memory), DynamoDB and S3 requests (RequestMeter), and prices them at AWS list
  prices (us-east-1, arm64, dated: src/cost/prices.ts); prints one JSON document`;

const OPTIONS = {
  rows: { type: 'string' },
  'chunk-rows': { type: 'string' },
  'part-rows': { type: 'string' },
  'batch-records': { type: 'string' },
  'record-bytes': { type: 'string' },
} as const;

export async function costCommand(args: string[]): Promise<unknown> {
  const { values } = parseOptions(args, OPTIONS, false);
  const rows = integer(values.rows, 'rows', 960, 1, 10_000);
  const chunkRows = integer(values['chunk-rows'], 'chunk-rows', 250, 1, 50_000);
  const partRows = integer(values['part-rows'], 'part-rows', 2_000_000, chunkRows, 2_000_000);
  const records = integer(values['batch-records'], 'batch-records', 100, 1, 1000);
  const recordBytes = integer(values['record-bytes'], 'record-bytes', 256, 1, 4096);
  if (records * recordBytes > 1024 * 1024)
    throw new UsageError('--batch-records × --record-bytes must stay within 1 MiB (the append limit)');

  // The emulators and the flows load only once the grammar is checked.
  const { measureAppendedBatch, measureDeliveredWindow, openCostWorld } = await import('../../cost/world.js');
  const world = await openCostWorld(progress);
  try {
    const window = await measureDeliveredWindow(world, { rows, chunkRows, partRows }, progress);
    const batch = await measureAppendedBatch(world, { records, recordBytes }, progress);
    return {
      prices: { ...PRICES, expressBilledMemoryMB: EXPRESS_BILLED_MB },
      measured:
        'locally, with the same ASL and handlers Lambda runs, on DynamoDB Local and the S3 emulator: transitions and request counts are exact; ' +
        'Lambda durations are this machine against loopback emulators (an estimate of GB-s); DynamoDB units assume items ≤ 1 KB written, ≤ 4 KB read, one item per transaction (a floor)',
      deliveredWindow: {
        flow: window.flow,
        type: window.type,
        rows,
        chunkRows,
        parts: window.parts,
        chunks: window.chunks,
        ...section(window),
      },
      appendedBatch: { flow: batch.flow, type: batch.type, records, recordBytes, ...section(batch) },
    };
  } finally {
    await world.close();
  }
}

function section(
  m: Parameters<typeof priceUsage>[0] & { requests: Record<string, number> },
): PricedUsage & { requests: Record<string, number> } {
  return { ...priceUsage(m), requests: m.requests };
}

function integer(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} takes an integer from ${min} to ${max}`);
  return Number(value);
}
