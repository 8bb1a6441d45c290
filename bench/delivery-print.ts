import type { DeliveryResult } from './delivery.js';
import { fmt } from './measure.js';
import { describeRequests } from './stream-append.js';

/**
 * The delivery section of `npm run bench`'s table and its detail lines (stdout), and its
 * part of the JSON line. Only prints what delivery.ts measured; no speed assertion.
 */

type Row = (cells: readonly string[]) => string;
type Spread = (ratios: readonly number[]) => string;

/** Four rows of the main table: delivery vs (a), (b) and (a∥b); (b) vs (a). */
export function deliveryTableRows(d: DeliveryResult, row: Row, spread: Spread): string[] {
  const rounds = String(d.rounds);
  return [
    row([
      `delivery rows/s ÷ (a) raw read+parse, ${d.rows} rows`,
      fmt(d.deliveryRowsPerSec),
      fmt(d.rawReadRowsPerSec),
      d.deliveryOfRead.toFixed(3),
      spread(d.perRoundRatios.deliveryOfRead),
      rounds,
    ]),
    row([
      `delivery rows/s ÷ (b) raw bulk load, ${d.rows} rows`,
      fmt(d.deliveryRowsPerSec),
      fmt(d.rawLoadRowsPerSec),
      d.deliveryOfLoad.toFixed(3),
      spread(d.perRoundRatios.deliveryOfLoad),
      rounds,
    ]),
    row([
      `delivery rows/s ÷ (a∥b) raw read and load at once`,
      fmt(d.deliveryRowsPerSec),
      fmt(d.rawBothRowsPerSec),
      d.deliveryOfBoth.toFixed(3),
      spread(d.perRoundRatios.deliveryOfBoth),
      rounds,
    ]),
    row([
      `  sink bound: (b) raw load ÷ (a) raw read`,
      fmt(d.rawLoadRowsPerSec),
      fmt(d.rawReadRowsPerSec),
      d.sinkBound.toFixed(3),
      spread(d.perRoundRatios.sinkBound),
      rounds,
    ]),
  ];
}

export function deliveryTableNote(d: DeliveryResult): string {
  return (
    `Delivery: deliverWindow of one fixed window, embedded ClickHouse (chdb) -> embedded PostgreSQL (${engineName(d)}), replace_window, a fresh invocation each time, ` +
    `interleaved slice by slice with (a) the raw read of the same window (the source adapter's exact windowQuery through the handle's streaming read, every row JSON.parse'd) ` +
    `and (b) the raw bulk load of the same rows (chunks of chunk_rows as COPY text prepared beforehand, COPY FROM STDIN, ${d.maxConcurrency} loaders, a fresh key-less table on the same server), ` +
    `and (a∥b) both at once.`
  );
}

export function deliveryLines(d: DeliveryResult): string[] {
  const out: string[] = [];
  const mark = (got: number, goal: number): string => (got >= goal ? 'meets' : 'below');
  out.push(
    `delivery (${d.rows} rows, ${d.parts} part${d.parts === 1 ? '' : 's'} of part_rows ${d.partRows}, chunk_rows ${d.chunkRows}, max_concurrency ${d.maxConcurrency}, ${engineName(d)}): ` +
      `${fmt(d.deliveryRowsPerSec)} rows/s; (a) raw read+parse ${fmt(d.rawReadRowsPerSec)} rows/s; (b) raw bulk load ${fmt(d.rawLoadRowsPerSec)} rows/s (medians over ${d.rounds} rounds)`,
  );
  out.push(
    `  delivery/(a) ${d.deliveryOfRead.toFixed(3)}, goal ≥ ${d.goals.deliveryOfRead} (${mark(d.deliveryOfRead, d.goals.deliveryOfRead)}); ` +
      `the sink's own bound (b)/(a) ${d.sinkBound.toFixed(3)}: no design that loads through this sink can exceed it`,
  );
  out.push(
    `  delivery/(b) ${d.deliveryOfLoad.toFixed(3)}, goal ≥ ${d.goals.deliveryOfLoad} (${mark(d.deliveryOfLoad, d.goals.deliveryOfLoad)}); ` +
      `the source's own bound (a)/(b) ${(1 / d.sinkBound).toFixed(3)}: a delivery reads every row, so no design can exceed it either`,
  );
  out.push(
    `  delivery/(a∥b) ${d.deliveryOfBoth.toFixed(3)}: (a∥b) ${fmt(d.rawBothRowsPerSec)} rows/s reads and loads the window at once on the same cores with nothing else ` +
      `(no chunk object, digest, journal or custody); (a∥b)/(b) ${(d.rawBothRowsPerSec / d.rawLoadRowsPerSec).toFixed(3)} is what reading alone leaves of the sink's rate here`,
  );
  const f = d.fit;
  out.push(
    `  per window: fixed ${fmt(f.fixedMs)} ms + ${f.perRowUs.toFixed(2)} µs per row ` +
      `(median delivery of ${f.smallRows} rows ${fmt(f.smallMs)} ms, of ${d.rows} rows ${fmt(f.bigMs)} ms, same route settings); ` +
      `per row against (a)'s ${(1e6 / d.rawReadRowsPerSec).toFixed(2)} µs: ${(1e6 / d.rawReadRowsPerSec / f.perRowUs).toFixed(3)}, what delivery/(a) tends to as windows grow`,
  );
  out.push(`  requests per delivery of ${d.rows} rows: ${describeRequests(d.requestsPerDelivery)}`);
  const z = d.compression;
  out.push(
    `  chunk objects (${z.chunks} chunks, ${z.rows} rows): JSONL ${fmt(z.jsonlBytes)} B, stored gzip level ${z.gzipLevel} ${fmt(z.storedBytes)} B, ratio ${z.ratio.toFixed(2)}; ` +
      `encode ${fmt(z.encodeRowsPerSec)} rows/s, encode + gzip ${fmt(z.encodeGzipRowsPerSec)} rows/s, ratio ${z.rateRatio.toFixed(3)}`,
  );
  for (const t of d.transitionsPerWindow) {
    out.push(
      `  ${d.flow.name} flow (${d.flow.type}), ${t.rows} rows, ${t.parts} part${t.parts === 1 ? '' : 's'}, ${t.chunks} chunk${t.chunks === 1 ? '' : 's'} of ${t.chunkRows}: ` +
        `${t.transitions} state transitions per window (budget 10 + 2 × parts = ${t.transitionBudget}: ${t.transitions <= t.transitionBudget ? 'within' : 'over'}), ` +
        `${t.lambdaInvocations} Lambda invocations (${t.parentTasks} parent Tasks + ${t.childTasks} part Tasks), requests ${describeRequests(t.requests)}`,
    );
  }
  const c = d.continued;
  out.push(
    `  continue (${c.rows} rows, ${c.parts} parts, part ${c.failedPart} down): the source yielded ${fmt(c.reextractedByContinue)} rows to the continue, ` +
      `${fmt(c.reextractedByRerun)} to a full re-run of the window (retire + a new invocation): ratio ${c.rowsRatio.toFixed(3)}; ` +
      `time ${fmt(c.continueMs)} ms against ${fmt(c.rerunMs)} ms, ratio ${c.timeRatio.toFixed(3)}`,
  );
  return out;
}

/** The JSON line's `delivery` field. */
export function deliveryJson(
  d: DeliveryResult,
): Omit<DeliveryResult, 'perRound'> & { perRoundRowsPerSec: DeliveryResult['perRound'] } {
  const { perRound, ...rest } = d;
  return { ...rest, perRoundRowsPerSec: perRound };
}

function engineName(d: DeliveryResult): string {
  return d.postgres === 'postgres' ? 'the real PostgreSQL server' : 'PGlite, the fallback: one connection, one core';
}
