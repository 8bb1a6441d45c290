import type { AuthorityCasResult } from './authority-cas.js';
import { cliStartLines, type CliStartResult } from './cli-start.js';
import type { DeliveryResult } from './delivery.js';
import { deliveryLines, deliveryTableNote, deliveryTableRows } from './delivery-print.js';
import { fmt } from './measure.js';
import type { ObjectThroughputResult } from './object-throughput.js';
import type { StreamAppendResult } from './stream-append.js';
import { streamLines, streamTableNote, streamTableRows } from './support/stream-print.js';

/** The bench's table and its summary lines on stdout (the JSON line is run.ts's). */
export function printTable(
  cas: readonly AuthorityCasResult[],
  objects: readonly ObjectThroughputResult[],
  stream: StreamAppendResult,
  delivery: DeliveryResult,
  cli: CliStartResult,
): void {
  const out: string[] = [];
  const W = 46;
  const row = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(W) : c.padStart(11))).join(' ');
  const spread = (ratios: readonly number[]): string =>
    ratios.length ? `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}` : '-';
  out.push('');
  out.push(row(['benchmark', 'primitives', 'raw SDK', 'ratio', 'round range', 'rounds']));
  out.push('-'.repeat(W + 5 * 12));
  for (const c of cas) {
    const p = c.perRound.sides.find((s) => s.name === 'primitive');
    out.push(
      row([
        `authority CAS/s, concurrency ${c.concurrency}`,
        fmt(c.primitiveCasPerSec),
        fmt(c.rawCasPerSec),
        c.ratio.toFixed(3),
        spread(p?.ratios ?? []),
        String(c.rounds),
      ]),
    );
    if (c.transact) {
      const t = c.perRound.sides.find((s) => s.name === 'transact');
      out.push(
        row([
          `  transact, 1 leg, CAS/s, concurrency ${c.concurrency}`,
          fmt(c.transact.casPerSec),
          fmt(c.rawCasPerSec),
          c.transact.ratio.toFixed(3),
          spread(t?.ratios ?? []),
          String(c.rounds),
        ]),
      );
    }
  }
  for (const o of objects) {
    const size = `${(o.objectBytes / 1024 / 1024).toFixed(0)} MiB`;
    const p = o.perRound.sides[0];
    out.push(
      row([
        `object PUT+GET MiB/s, ${size}, concurrency ${o.concurrency}`,
        fmt(o.primitiveMiBPerSec),
        fmt(o.rawMiBPerSec),
        o.ratio.toFixed(3),
        spread(p?.ratios ?? []),
        String(o.rounds),
      ]),
    );
  }
  out.push(...streamTableRows(stream, row, spread));
  out.push(...deliveryTableRows(delivery, row, spread));
  out.push('ratio = median over rounds of (primitives / raw), both sides interleaved slice by slice in each round;');
  out.push("the rate columns are each side's own median, so their quotient need not equal the ratio.");
  out.push('Object MiB/s counts bytes moved: each op PUTs and GETs one object (2 × size).');
  out.push(streamTableNote(stream));
  out.push(deliveryTableNote(delivery));
  out.push('');
  for (const c of cas) {
    out.push(
      `authority CAS/s (concurrency ${c.concurrency}): primitives ${fmt(c.primitiveCasPerSec)}, raw ${fmt(c.rawCasPerSec)}, ratio ${c.ratio.toFixed(2)}` +
        (c.transact ? `; transact ${fmt(c.transact.casPerSec)}, ratio ${c.transact.ratio.toFixed(2)}` : ''),
    );
  }
  for (const o of objects) {
    out.push(
      `object PUT+GET MiB/s (concurrency ${o.concurrency}): primitives ${fmt(o.primitiveMiBPerSec)}, raw ${fmt(o.rawMiBPerSec)}, ratio ${o.ratio.toFixed(2)}`,
    );
  }
  out.push(...streamLines(stream));
  out.push(...deliveryLines(delivery));
  out.push(...cliStartLines(cli));
  out.push('');
  out.push('requests per op:');
  const line = (label: string, perOp: Record<string, number>): string => `  ${label.padEnd(24)} ${counts(perOp)}`;
  const first = cas[0];
  if (first) {
    out.push(line('primitive CAS (update)', first.requestsPerOp.primitive));
    if (first.transact) out.push(line('primitive transact', first.transact.requestsPerOp));
    out.push(line('raw CAS', first.requestsPerOp.raw));
  }
  const obj = objects[0];
  if (obj) {
    out.push(line('putExact + readVerified', obj.requestsPerOp.primitive));
    out.push(line('raw PUT + GET', obj.requestsPerOp.raw));
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

function counts(perOp: Record<string, number>): string {
  const entries = Object.entries(perOp);
  return entries.length ? entries.map(([k, n]) => `${n} ${k}`).join(' + ') : '(none)';
}
