import { fmt, round3 } from '../measure.js';
import type { StreamAppendResult } from '../stream-append.js';

/** Rows of the bench table: one per mode and side, ratio = records/s ÷ (raw CAS/s × batch size). */
export function streamTableRows(
  stream: StreamAppendResult,
  row: (cells: readonly string[]) => string,
  spread: (ratios: readonly number[]) => string,
): string[] {
  return stream.modes.flatMap((m) =>
    m.sides.map((s) =>
      row([
        `stream append records/s, ${m.mode === 'local' ? 'local' : 'AWS-like'}, ${s.name}`,
        fmt(s.recordsPerSec),
        fmt(m.rawCasPerSec * stream.batchSize),
        s.ratio.toFixed(3),
        spread(s.ratios),
        String(m.rounds),
      ]),
    ),
  );
}

export function streamTableNote(stream: StreamAppendResult): string {
  return (
    `Stream append: batches of ${stream.batchSize} × ${stream.recordBytes}-byte records on one lane per side, one owner; appendBatch = one appender, ` +
    'producer k=N = N concurrent appenders through one group-commit producer (one append per group); raw column = raw conditional UpdateItem/s × batch size, ' +
    'so ratio = records/s ÷ (raw CAS/s × batch size). AWS-like: latency slept before every port call and every raw CAS ' +
    `(${Object.entries(stream.latencyMs)
      .filter(([k]) => ['s3.PutObject', 's3.GetObject', 'dynamodb.GetItem', 'dynamodb.TransactWriteItems'].includes(k))
      .map(([k, ms]) => `${k.split('.')[1]} ${ms} ms`)
      .join(', ')}, other DynamoDB calls 5 ms).`
  );
}

/** The summary lines: ratio beside its goal, requests per batch by kind, the flow's cost. */
export function streamLines(stream: StreamAppendResult): string[] {
  const out: string[] = [];
  for (const m of stream.modes) {
    out.push(`stream append, ${m.mode} (raw conditional writes ${fmt(m.rawCasPerSec)}/s; goal ≥ ${m.goal}):`);
    for (const s of m.sides) {
      const verdict = s.ratio >= m.goal ? 'meets the goal' : 'below the goal';
      const groups =
        s.batchesPerGroup === undefined
          ? ''
          : `, ${s.batchesPerGroup} batch${s.batchesPerGroup === 1 ? '' : 'es'} per group`;
      out.push(
        `  ${s.name.padEnd(14)} ratio ${s.ratio.toFixed(3)} (${verdict}); ${fmt(s.recordsPerSec)} records/s${groups}; requests per batch: ${describeRequests(s.requestsPerBatch)}`,
      );
    }
  }
  const f = stream.flow;
  out.push(
    `  ${f.name} flow (${f.type}): ${f.transitions} state transitions per execution, ${f.lambdaInvocations} Lambda invocations, ` +
      `requests ${describeRequests(f.requests)}`,
  );
  out.push(
    f.type === 'EXPRESS'
      ? '  (an Express workflow is billed per request and duration, not per transition; the transitions are what it would cost as a Standard workflow)'
      : '  (a Standard workflow is billed per state transition: the dominant AWS cost of the flow)',
  );
  return out;
}

const SERVICES: Array<[prefix: string, label: string]> = [
  ['dynamodb', 'DynamoDB'],
  ['s3', 'S3'],
];

/**
 * `14 (DynamoDB 10: GetItem 6, PutItem 2, TransactWriteItems 2; S3 4: PutObject 2, GetObject 2)`
 * from request keys such as `dynamodb.GetItem`.
 */
export function describeRequests(counts: Record<string, number>): string {
  const num = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(2));
  const total = round3(Object.values(counts).reduce((a, b) => a + b, 0));
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
  return `${num(total)} (${groups.join('; ') || 'none'})`;
}
