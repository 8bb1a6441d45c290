import { awsClients } from '../src/adapters/aws-clients.js';
import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import { sha256Hex } from '../src/domain/digest.js';
import { putExact, readVerified } from '../src/objects/exact-object.js';
import { RequestMeter } from '../src/adapters/request-meter.js';
import {
  concurrently,
  interleave,
  meterDelta,
  perOp,
  round3,
  type InterleaveResult,
  type SliceFn,
  countRawRequests,
} from './measure.js';

/**
 * Object PUT+GET MiB/s: `putExact` + `readVerified` (SHA-256 computed for the metadata,
 * `If-None-Match: *` on the PUT, every byte of the read verified) against a raw SDK
 * `PutObjectCommand` + `GetObjectCommand` on the adapters' S3 client — same S3 emulator, same
 * object size, a distinct key per operation. MiB/s counts bytes moved: one op moves the
 * object up and back down, i.e. 2 × size.
 */

const MiB = 1024 * 1024;

export interface ObjectThroughputOptions {
  config: CutpointConfig;
  objectBytes: number;
  /** PUT+GET pairs per side per slice (split across workers at concurrency > 1). */
  opsPerSlice: number;
  slicesPerRound: number;
  /** Measured rounds, at most: fewer when budgetMs runs out (at least 3). */
  rounds: number;
  warmupRounds: number;
  budgetMs: number;
  concurrency: number;
  progress: (line: string) => void;
}

export interface ObjectThroughputResult {
  concurrency: number;
  objectBytes: number;
  /** Per side: opsPerSlice × slicesPerRound. */
  opsPerRound: number;
  slicesPerRound: number;
  rounds: number;
  /** Median MiB/s moved (PUT + GET bytes) per side. */
  primitiveMiBPerSec: number;
  rawMiBPerSec: number;
  /** Median of per-round primitive/raw ratios. */
  ratio: number;
  /** One op = one PUT + one GET. From the RequestMeter for the primitive, from an SDK middleware for raw. */
  requestsPerOp: { primitive: Record<string, number>; raw: Record<string, number> };
  perRound: InterleaveResult;
}

export async function benchObjectThroughput(opts: ObjectThroughputOptions): Promise<ObjectThroughputResult> {
  const { config, concurrency, objectBytes } = opts;
  const perWorker = Math.max(1, Math.floor(opts.opsPerSlice / concurrency));
  const opsPerSlice = perWorker * concurrency;
  const opsPerRound = opsPerSlice * opts.slicesPerRound;

  const meter = new RequestMeter();
  const objects = awsPorts(config, inertFaults, meter).objects;
  // The baseline uses the adapters' own client setup (same endpoint, handler, no SDK retries).
  const raw = awsClients(config).s3;
  const rawCounts = new RequestMeter();
  countRawRequests(raw, 's3', rawCounts);

  // A few distinct payloads, generated untimed; keys are distinct per op regardless.
  const payloads = Array.from({ length: 4 }, () => new Uint8Array(randomBytes(objectBytes)));
  const payload = (i: number): Uint8Array => payloads[i % payloads.length] as Uint8Array;
  const written: string[] = [];
  let seq = 0;

  const primitiveWorker =
    (round: number) =>
    async (w: number): Promise<number> => {
      for (let i = 0; i < perWorker; i++) {
        const key = `bench/objects/primitive/r${round}/w${w}/${seq++}`;
        const bytes = payload(i + w);
        const sha256 = sha256Hex(bytes);
        written.push(key);
        const put = await putExact(objects, 'bench.object.put', key, bytes, { sha256 });
        if (put.status !== 'WRITTEN') throw new Error(`bench bug: putExact ${key} ended ${put.status}`);
        const got = await readVerified(objects, key, sha256);
        if (got.size !== objectBytes) throw new Error(`bench bug: read ${got.size} bytes of ${key}`);
      }
      return perWorker * 2 * objectBytes;
    };

  const rawWorker =
    (round: number) =>
    async (w: number): Promise<number> => {
      for (let i = 0; i < perWorker; i++) {
        const key = `bench/objects/raw/r${round}/w${w}/${seq++}`;
        const bytes = payload(i + w);
        written.push(key);
        await raw.send(
          new PutObjectCommand({ Bucket: config.bucketName, Key: key, Body: bytes, ContentLength: bytes.byteLength }),
        );
        const out = await raw.send(new GetObjectCommand({ Bucket: config.bucketName, Key: key }));
        const got = out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
        if (got.byteLength !== objectBytes) throw new Error(`bench bug: read ${got.byteLength} bytes of ${key}`);
      }
      return perWorker * 2 * objectBytes;
    };

  let primitiveOps = 0;
  const meterTotals: Record<string, number> = {};
  const primitiveSlice: SliceFn = async (round) => {
    const before = meter.snapshot();
    const bytes = await concurrently(concurrency, primitiveWorker(round));
    for (const [k, n] of Object.entries(meterDelta(before, meter.snapshot())))
      meterTotals[k] = (meterTotals[k] ?? 0) + n;
    primitiveOps += opsPerSlice;
    return bytes / MiB;
  };
  let rawOps = 0;
  const rawTotals: Record<string, number> = {};
  const rawSlice: SliceFn = async (round) => {
    const before = rawCounts.snapshot();
    const bytes = await concurrently(concurrency, rawWorker(round));
    for (const [k, n] of Object.entries(meterDelta(before, rawCounts.snapshot())))
      rawTotals[k] = (rawTotals[k] ?? 0) + n;
    rawOps += opsPerSlice;
    return bytes / MiB;
  };

  // Untimed between runs: the emulator keeps objects in this process's memory.
  const cleanup = async (): Promise<void> => {
    const keys = written.splice(0);
    for (const key of keys) await raw.send(new DeleteObjectCommand({ Bucket: config.bucketName, Key: key }));
  };

  try {
    opts.progress(
      `object PUT+GET, ${(objectBytes / MiB).toFixed(2)} MiB objects, concurrency ${concurrency}: ` +
        `${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices × ${opsPerSlice} ops per side`,
    );
    const result = await interleave({
      rounds: opts.rounds,
      warmupRounds: opts.warmupRounds,
      slicesPerRound: opts.slicesPerRound,
      budgetMs: opts.budgetMs,
      baseline: { name: 'raw', run: rawSlice },
      sides: [{ name: 'primitive', run: primitiveSlice }],
      between: cleanup,
      onRound: (line) => opts.progress(`  ${line} (MiB/s)`),
    });
    const primitive = result.sides[0];
    if (!primitive) throw new Error('bench bug: no primitive side');
    return {
      concurrency,
      objectBytes,
      opsPerRound,
      slicesPerRound: opts.slicesPerRound,
      rounds: result.baseline.rates.length,
      primitiveMiBPerSec: round3(primitive.median),
      rawMiBPerSec: round3(result.baseline.median),
      ratio: round3(primitive.medianRatio),
      requestsPerOp: { primitive: perOp(meterTotals, primitiveOps), raw: perOp(rawTotals, rawOps) },
      perRound: result,
    };
  } finally {
    await cleanup().catch(() => undefined);
    raw.destroy();
  }
}
