import { provisionLocal } from '../src/adapters/provision.js';
import type { CutpointConfig } from '../src/config.js';
import { startLocalRuntime, type LocalRuntime } from '../src/local/runtime.js';
import { benchAuthorityCas, type AuthorityCasResult } from './authority-cas.js';
import { fmt } from './measure.js';
import { benchObjectThroughput, type ObjectThroughputResult } from './object-throughput.js';

/**
 * `npm run bench`: starts throw-away emulators (in-memory, free loopback ports), measures
 * the primitives against the raw SDK on the same stores in the same run, prints a table
 * and one JSON line on stdout (progress on stderr), stops the emulators. Prints only:
 * no speed assertion anywhere.
 */

const ROUNDS = 5;
const WARMUP_ROUNDS = 1;
const CAS_OPS_PER_ROUND = 300;
const OBJECT_BYTES = 1024 * 1024;
const OBJECT_OPS_PER_ROUND = 20;

const progress = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`);
};

async function main(): Promise<void> {
  const started = performance.now();
  progress('starting DynamoDB Local and the S3 emulator (in-memory, loopback only) …');
  const runtime: LocalRuntime = await startLocalRuntime();
  try {
    const config: CutpointConfig = {
      tableName: 'cutpoint-bench',
      bucketName: 'cutpoint-bench',
      region: runtime.region,
      endpoints: { dynamodb: runtime.dynamodbEndpoint, s3: runtime.s3Endpoint },
    };
    await provisionLocal(config);
    progress(`emulators up in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const cas: AuthorityCasResult[] = [];
    for (const concurrency of [1, 8]) {
      cas.push(
        await benchAuthorityCas({
          config,
          concurrency,
          opsPerRound: CAS_OPS_PER_ROUND,
          rounds: ROUNDS,
          warmupRounds: WARMUP_ROUNDS,
          includeTransact: true,
          progress,
        }),
      );
    }
    const objects: ObjectThroughputResult[] = [
      await benchObjectThroughput({
        config,
        concurrency: 1,
        objectBytes: OBJECT_BYTES,
        opsPerRound: OBJECT_OPS_PER_ROUND,
        rounds: ROUNDS,
        warmupRounds: WARMUP_ROUNDS,
        progress,
      }),
    ];

    const elapsedSeconds = (performance.now() - started) / 1000;
    printTable(cas, objects);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'cutpoint',
        node: process.version,
        emulators: { dynamodb: 'DynamoDB Local (in-memory)', s3: 'fauxqs (in-process)' },
        rounds: ROUNDS,
        warmupRounds: WARMUP_ROUNDS,
        authorityCas: cas.map(({ perRound, ...rest }) => ({ ...rest, perRoundRatios: perRound.sides.map((s) => ({ side: s.name, ratios: s.ratios.map(r3) })) })),
        objectThroughput: objects.map(({ perRound, ...rest }) => ({ ...rest, perRoundRatios: perRound.sides.map((s) => ({ side: s.name, ratios: s.ratios.map(r3) })) })),
        elapsedSeconds: r3(elapsedSeconds),
      })}\n`,
    );
  } finally {
    progress('stopping emulators …');
    await runtime.stop();
    progress(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

function printTable(cas: readonly AuthorityCasResult[], objects: readonly ObjectThroughputResult[]): void {
  const out: string[] = [];
  const row = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(44) : c.padStart(12))).join(' ');
  out.push('');
  out.push(row(['benchmark (median of per-round ratios)', 'primitives', 'raw SDK', 'ratio']));
  out.push('-'.repeat(44 + 3 * 13));
  for (const c of cas) {
    out.push(row([`authority CAS/s, concurrency ${c.concurrency}`, fmt(c.primitiveCasPerSec), fmt(c.rawCasPerSec), c.ratio.toFixed(3)]));
    if (c.transact) {
      out.push(row([`  transact (1 leg) CAS/s, concurrency ${c.concurrency}`, fmt(c.transact.casPerSec), fmt(c.rawCasPerSec), c.transact.ratio.toFixed(3)]));
    }
  }
  for (const o of objects) {
    const size = `${(o.objectBytes / 1024 / 1024).toFixed(0)} MiB`;
    out.push(row([`object PUT+GET MiB/s, ${size}, concurrency ${o.concurrency}`, fmt(o.primitiveMiBPerSec), fmt(o.rawMiBPerSec), o.ratio.toFixed(3)]));
  }
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
  out.push('');
  out.push('requests per op:');
  const first = cas[0];
  if (first) {
    out.push(`  primitive CAS        ${counts(first.requestsPerOp.primitive)}`);
    if (first.transact) out.push(`  primitive transact   ${counts(first.transact.requestsPerOp)}`);
    out.push(`  raw CAS              ${counts(first.requestsPerOp.raw)}`);
  }
  const obj = objects[0];
  if (obj) {
    out.push(`  putExact+readVerified ${counts(obj.requestsPerOp.primitive)}`);
    out.push(`  raw PUT+GET          ${counts(obj.requestsPerOp.raw)}`);
  }
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

function counts(perOp: Record<string, number>): string {
  const entries = Object.entries(perOp);
  return entries.length ? entries.map(([k, n]) => `${n} ${k}`).join(' + ') : '(none)';
}

function r3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

main().then(
  () => {
    process.exitCode = 0;
  },
  (error: unknown) => {
    process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
