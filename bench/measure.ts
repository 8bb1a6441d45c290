import type { RequestMeter } from '../src/adapters/request-meter.js';
/**
 * Interleaved measurement: the raw SDK baseline and the primitives' side(s) take turns on
 * the same emulators in the same process, so machine noise (GC, JIT, the JVM warming up,
 * a neighbour's build on the same cores) hits every side alike.
 *
 * A round is cut into slices; in every slice each side runs once, and who goes first
 * rotates slice by slice (R P, P R, R P …). A side's rate for the round is its units over
 * its own summed time across the round's slices, so slow drift lands on all sides
 * equally instead of on whichever side happened to run during a noisy second. The
 * reported ratio is the median of the per-round ratios.
 *
 * Rates are units per second, where a side's slice reports how many units it did (ops,
 * or MiB). Nothing here asserts on speed: benches print, they do not pass or fail.
 */

/**
 * One slice of one side: does its work and returns how many units it completed, or the
 * units and the milliseconds of the slice that count (a side whose slice also sets up and
 * tears down something untimed, e.g. a fresh table around a bulk load, times itself).
 */
export type SliceFn = (round: number, slice: number) => Promise<number | { units: number; ms: number }>;

export interface Side {
  name: string;
  run: SliceFn;
}

export interface InterleaveOptions {
  /** Measured rounds (at most; see budgetMs). */
  rounds: number;
  /** Unmeasured rounds first (JIT, connection pool, JVM warm-up). */
  warmupRounds: number;
  /** Slices per round; every side runs once per slice. */
  slicesPerRound: number;
  /** The raw SDK side every other side is divided by. */
  baseline: Side;
  /** The primitives' side(s). */
  sides: readonly Side[];
  /**
   * Wall-clock budget for the whole interleave: once spent, no new round starts after
   * the third measured one, so a busy machine shortens the bench instead of stretching it.
   */
  budgetMs?: number;
  /** Called after every timed slice, untimed (e.g. to delete the objects it wrote). */
  between?: () => Promise<void>;
  /** Progress line per round (stderr). */
  onRound?: (line: string) => void;
}

export interface SideResult {
  name: string;
  /** Units per second in each measured round. */
  rates: number[];
  median: number;
  /** side / baseline per measured round (measured in the same interleaved slices). */
  ratios: number[];
  /** Median of the per-round ratios (not the ratio of the medians). */
  medianRatio: number;
}

export interface InterleaveResult {
  baseline: { name: string; rates: number[]; median: number };
  sides: SideResult[];
}

const MIN_MEASURED_ROUNDS = 3;

export async function interleave(opts: InterleaveOptions): Promise<InterleaveResult> {
  const all: Side[] = [opts.baseline, ...opts.sides];
  const rates: number[][] = all.map(() => []);
  const total = opts.warmupRounds + opts.rounds;
  const startedAt = performance.now();
  let turn = 0;
  for (let round = 0; round < total; round++) {
    const measuredSoFar = round - opts.warmupRounds;
    if (
      opts.budgetMs !== undefined &&
      measuredSoFar >= MIN_MEASURED_ROUNDS &&
      performance.now() - startedAt > opts.budgetMs
    ) {
      opts.onRound?.(
        `time budget of ${(opts.budgetMs / 1000).toFixed(0)} s spent: stopping after ${measuredSoFar} measured rounds`,
      );
      break;
    }
    const units = all.map(() => 0);
    const millis = all.map(() => 0);
    for (let slice = 0; slice < opts.slicesPerRound; slice++, turn++) {
      for (let k = 0; k < all.length; k++) {
        const i = (k + turn) % all.length;
        const start = performance.now();
        const done = await (all[i] as Side).run(round, slice);
        const elapsed = performance.now() - start;
        units[i] = (units[i] as number) + (typeof done === 'number' ? done : done.units);
        millis[i] = (millis[i] as number) + (typeof done === 'number' ? elapsed : done.ms);
        await opts.between?.();
      }
    }
    const got = all.map((_, i) => ((units[i] as number) * 1000) / (millis[i] as number));
    const measured = round >= opts.warmupRounds;
    if (measured) got.forEach((rate, i) => (rates[i] as number[]).push(rate));
    const base = got[0] as number;
    const label = measured
      ? `round ${round - opts.warmupRounds + 1}/${opts.rounds}`
      : `warm-up ${round + 1}/${opts.warmupRounds}`;
    const parts = all.map((side, i) => `${side.name} ${fmt(got[i] as number)}`);
    const ratioParts = opts.sides.map(
      (side, i) => `${side.name}/${opts.baseline.name} ${((got[i + 1] as number) / base).toFixed(3)}`,
    );
    opts.onRound?.(`${label}: ${parts.join(', ')}; ${ratioParts.join(', ')}`);
  }
  const baseRates = rates[0] as number[];
  return {
    baseline: { name: opts.baseline.name, rates: baseRates, median: median(baseRates) },
    sides: opts.sides.map((side, i) => {
      const sideRates = rates[i + 1] as number[];
      const ratios = sideRates.map((rate, r) => rate / (baseRates[r] as number));
      return { name: side.name, rates: sideRates, median: median(sideRates), ratios, medianRatio: median(ratios) };
    }),
  };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const hi = sorted[mid] as number;
  return sorted.length % 2 === 1 ? hi : ((sorted[mid - 1] as number) + hi) / 2;
}

/** Runs `perWorker` on `concurrency` workers at once; resolves with the summed units. */
export async function concurrently(
  concurrency: number,
  perWorker: (worker: number) => Promise<number>,
): Promise<number> {
  const done = await Promise.all(Array.from({ length: concurrency }, (_, w) => perWorker(w)));
  return done.reduce((a, b) => a + b, 0);
}

/** Per-key difference of two RequestMeter snapshots. */
export function meterDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(after)) {
    const d = n - (before[key] ?? 0);
    if (d !== 0) out[key] = d;
  }
  return out;
}

/** Divides every count by `ops` (requests per operation). */
export function perOp(counts: Record<string, number>, ops: number): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, round3(n / ops)]));
}

export function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export function fmt(n: number): string {
  return n >= 100 ? n.toFixed(1) : n.toFixed(2);
}

/** The one thing a raw SDK client needs to have its requests counted. */
interface MiddlewareHost {
  middlewareStack: { add(middleware: unknown, options: { step: 'deserialize'; name: string }): void };
}

type Counted = (
  next: (args: unknown) => Promise<unknown>,
  context: { commandName?: string },
) => (args: unknown) => Promise<unknown>;

/**
 * Counts a raw baseline client's requests into a meter, once per HTTP attempt (the
 * deserialize step runs inside the retry middleware), so baselines report requests per op
 * the same way the adapters' RequestMeter does.
 */
export function countRawRequests(client: MiddlewareHost, service: string, meter: RequestMeter): void {
  const counted: Counted = (next, context) => async (args) => {
    meter.count(service, context.commandName?.replace(/Command$/, '') ?? 'unknown');
    return next(args);
  };
  client.middlewareStack.add(counted, { step: 'deserialize', name: 'benchRequestCounter' });
}
