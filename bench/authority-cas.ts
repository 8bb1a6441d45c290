import { RawCasItem } from './raw-cas.js';
import { awsClients } from '../src/adapters/aws-clients.js';
import { inertFaults } from '../src/adapters/fault-injector.js';
import { awsPorts } from '../src/adapters/ports.js';
import type { CutpointConfig } from '../src/config.js';
import type { AuthorityStore, ItemKey } from '../src/ports/authority.js';
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
 * Authority CAS/s: `DynamoAuthorityStore.update` with a version expectation (and, as a
 * second primitive side, `transact` with that one update leg) against a raw SDK
 * conditional `UpdateItemCommand` on its own DynamoDBClient — same DynamoDB Local, same
 * item shape (`pk`, `sk`, `version`, `counter`), same condition (`version = :expected`).
 * Each side walks its own counter item(s) version by version, so every write is a
 * successful CAS; a CONFLICT would mean the bench is wrong and aborts it.
 */

export interface AuthorityCasOptions {
  config: CutpointConfig;
  /** CAS operations per side per slice (split across workers at concurrency > 1). */
  opsPerSlice: number;
  slicesPerRound: number;
  /** Measured rounds, at most: fewer when budgetMs runs out (at least 3). */
  rounds: number;
  warmupRounds: number;
  budgetMs: number;
  concurrency: number;
  /** Also measure `transact` with one update leg. */
  includeTransact: boolean;
  progress: (line: string) => void;
}

export interface AuthorityCasResult {
  concurrency: number;
  /** Per side: opsPerSlice × slicesPerRound. */
  opsPerRound: number;
  slicesPerRound: number;
  rounds: number;
  /** Median CAS/s per side. */
  primitiveCasPerSec: number;
  rawCasPerSec: number;
  /** Median of per-round primitive/raw ratios. */
  ratio: number;
  transact?: { casPerSec: number; ratio: number; requestsPerOp: Record<string, number> };
  /** From the RequestMeter for the primitive, from an SDK middleware for raw. */
  requestsPerOp: { primitive: Record<string, number>; raw: Record<string, number> };
  perRound: InterleaveResult;
}

/** One counter item per worker and side; distinct pk per side and run. */
function keysFor(side: string, concurrency: number): ItemKey[] {
  return Array.from({ length: concurrency }, (_, w) => ({ pk: `bench#cas#c${concurrency}#${side}`, sk: `item#${w}` }));
}

export async function benchAuthorityCas(opts: AuthorityCasOptions): Promise<AuthorityCasResult> {
  const { config, concurrency } = opts;
  const perWorker = Math.max(1, Math.floor(opts.opsPerSlice / concurrency));
  const opsPerSlice = perWorker * concurrency;
  const opsPerRound = opsPerSlice * opts.slicesPerRound;

  const meter = new RequestMeter();
  const authority: AuthorityStore = awsPorts(config, inertFaults, meter).authority;
  // The baseline uses the adapters' own client setup (same endpoint, handler, no SDK retries).
  const raw = awsClients(config).dynamoWriter;
  const rawCounts = new RequestMeter();
  countRawRequests(raw, 'dynamodb', rawCounts);

  try {
    // Setup (untimed, unmetered): version 1 of every counter item, same shape on both sides.
    const primitiveKeys = keysFor('primitive', concurrency);
    const transactKeys = keysFor('transact', concurrency);
    const rawKeys = keysFor('raw', concurrency);
    const rawItems = rawKeys.map((key) => new RawCasItem(raw, config.tableName, key));
    for (const key of [...primitiveKeys, ...transactKeys, ...rawKeys])
      await new RawCasItem(raw, config.tableName, key).create();
    const setupCounts = rawCounts.snapshot();

    // Primitive: update with a version expectation; the next version comes back in the item.
    const primitiveVersions = primitiveKeys.map(() => 1);
    const primitiveWorker = async (w: number): Promise<number> => {
      const key = primitiveKeys[w] as ItemKey;
      for (let i = 0; i < perWorker; i++) {
        const version = primitiveVersions[w] as number;
        const out = await authority.update('bench.authority.cas', key, { version }, { counter: version });
        if (out.status !== 'APPLIED')
          throw new Error(`bench bug: primitive CAS ${key.sk}@${version} ended ${out.status}`);
        primitiveVersions[w] = out.item.version;
      }
      return perWorker;
    };

    // Primitive transact: the same CAS as the only leg of a TransactWriteItems.
    const transactVersions = transactKeys.map(() => 1);
    const transactWorker = async (w: number): Promise<number> => {
      const key = transactKeys[w] as ItemKey;
      for (let i = 0; i < perWorker; i++) {
        const version = transactVersions[w] as number;
        const out = await authority.transact('bench.authority.transact', [
          { kind: 'update', key, expect: { version }, set: { counter: version } },
        ]);
        if (out.status !== 'APPLIED')
          throw new Error(`bench bug: transact CAS ${key.sk}@${version} ended ${out.status}`);
        transactVersions[w] = version + 1;
      }
      return perWorker;
    };

    // Raw: hand-written conditional UpdateItem, the idiomatic minimum (see raw-cas.ts).
    const rawWorker = async (w: number): Promise<number> => {
      const item = rawItems[w] as RawCasItem;
      for (let i = 0; i < perWorker; i++) await item.cas();
      return perWorker;
    };

    // Request counts per side, over every run (warm-up included).
    const metered = {
      primitive: { ops: 0, counts: {} as Record<string, number> },
      transact: { ops: 0, counts: {} as Record<string, number> },
    };
    const withMeter =
      (side: keyof typeof metered, worker: (w: number) => Promise<number>): SliceFn =>
      async () => {
        const before = meter.snapshot();
        const ops = await concurrently(concurrency, worker);
        const delta = meterDelta(before, meter.snapshot());
        const acc = metered[side];
        acc.ops += ops;
        for (const [k, n] of Object.entries(delta)) acc.counts[k] = (acc.counts[k] ?? 0) + n;
        return ops;
      };
    let rawOps = 0;
    const rawSlice: SliceFn = async () => {
      const ops = await concurrently(concurrency, rawWorker);
      rawOps += ops;
      return ops;
    };

    opts.progress(
      `authority CAS, concurrency ${concurrency}: ${opts.warmupRounds} warm-up + ${opts.rounds} rounds × ${opts.slicesPerRound} slices × ${opsPerSlice} ops per side`,
    );
    const result = await interleave({
      rounds: opts.rounds,
      warmupRounds: opts.warmupRounds,
      slicesPerRound: opts.slicesPerRound,
      budgetMs: opts.budgetMs,
      baseline: { name: 'raw', run: rawSlice },
      sides: [
        { name: 'primitive', run: withMeter('primitive', primitiveWorker) },
        ...(opts.includeTransact ? [{ name: 'transact', run: withMeter('transact', transactWorker) }] : []),
      ],
      onRound: (line) => opts.progress(`  ${line}`),
    });

    // Every CAS landed exactly once: each item is at 1 + the number of CAS on it.
    const roundsRun = result.baseline.rates.length + opts.warmupRounds;
    const expectedVersion = 1 + roundsRun * opts.slicesPerRound * perWorker;
    for (const [side, versions] of [
      ['primitive', primitiveVersions],
      ['raw', rawItems.map((item) => item.version)],
      ...(opts.includeTransact ? [['transact', transactVersions] as const] : []),
    ] as const) {
      if (versions.some((v) => v !== expectedVersion))
        throw new Error(`bench bug: ${side} versions ${versions.join(',')} ≠ ${expectedVersion}`);
    }

    const rawDelta = meterDelta(setupCounts, rawCounts.snapshot());
    const primitive = result.sides.find((s) => s.name === 'primitive');
    const transact = result.sides.find((s) => s.name === 'transact');
    if (!primitive) throw new Error('bench bug: no primitive side');
    return {
      concurrency,
      opsPerRound,
      slicesPerRound: opts.slicesPerRound,
      rounds: result.baseline.rates.length,
      primitiveCasPerSec: round3(primitive.median),
      rawCasPerSec: round3(result.baseline.median),
      ratio: round3(primitive.medianRatio),
      ...(transact && {
        transact: {
          casPerSec: round3(transact.median),
          ratio: round3(transact.medianRatio),
          requestsPerOp: perOp(metered.transact.counts, metered.transact.ops),
        },
      }),
      requestsPerOp: {
        primitive: perOp(metered.primitive.counts, metered.primitive.ops),
        raw: perOp(rawDelta, rawOps),
      },
      perRound: result,
    };
  } finally {
    raw.destroy();
  }
}
