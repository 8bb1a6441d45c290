/**
 * Interleaved measurement: the raw SDK baseline and the primitives' side(s) take turns,
 * round after round, on the same emulators in the same process, so machine noise (GC,
 * JIT, the JVM, a neighbour's build) hits every side alike. Who goes first rotates each
 * round (R P, P R, R P …) so no side always runs on a warmer or colder store, and the
 * reported ratio is the median of per-round ratios.
 *
 * Rates are units per second, where a side's round reports how many units it did (ops,
 * or bytes). Nothing here asserts on speed: benches print, they do not pass or fail.
 */

/** One round of one side: does its work and returns how many units it completed. */
export type RoundFn = (round: number) => Promise<number>;

export interface Side {
  name: string;
  run: RoundFn;
}

export interface InterleaveOptions {
  /** Measured rounds per side. */
  rounds: number;
  /** Unmeasured rounds per side first (JIT, connection pool, JVM warm-up). */
  warmupRounds: number;
  /** The raw SDK side every other side is divided by. */
  baseline: Side;
  /** The primitives' side(s). */
  sides: readonly Side[];
  /** Called after every timed run, untimed (e.g. to delete the objects it wrote). */
  between?: () => Promise<void>;
  /** Progress line per round (stderr). */
  onRound?: (line: string) => void;
}

export interface SideResult {
  name: string;
  /** Units per second in each measured round. */
  rates: number[];
  median: number;
  /** side / baseline per measured round (measured back to back in the same round). */
  ratios: number[];
  /** Median of the per-round ratios (not the ratio of the medians). */
  medianRatio: number;
}

export interface InterleaveResult {
  baseline: { name: string; rates: number[]; median: number };
  sides: SideResult[];
}

/** Times one call with performance.now() and returns units per second. */
export async function rateOf(fn: RoundFn, round: number): Promise<number> {
  const start = performance.now();
  const units = await fn(round);
  const seconds = (performance.now() - start) / 1000;
  return seconds > 0 ? units / seconds : Number.POSITIVE_INFINITY;
}

export async function interleave(opts: InterleaveOptions): Promise<InterleaveResult> {
  const all: Side[] = [opts.baseline, ...opts.sides];
  const rates: number[][] = all.map(() => []);
  const total = opts.warmupRounds + opts.rounds;
  for (let round = 0; round < total; round++) {
    // Rotate who goes first, so no side always follows the same neighbour.
    const order = all.map((_, i) => (i + round) % all.length);
    const got: number[] = all.map(() => Number.NaN);
    for (const i of order) {
      got[i] = await rateOf((all[i] as Side).run, round);
      await opts.between?.();
    }
    const measured = round >= opts.warmupRounds;
    if (measured) got.forEach((rate, i) => (rates[i] as number[]).push(rate));
    const base = got[0] as number;
    const label = measured ? `round ${round - opts.warmupRounds + 1}/${opts.rounds}` : `warm-up ${round + 1}/${opts.warmupRounds}`;
    const parts = all.map((side, i) => `${side.name} ${fmt(got[i] as number)}`);
    const ratioParts = opts.sides.map((side, i) => `${side.name}/${opts.baseline.name} ${((got[i + 1] as number) / base).toFixed(3)}`);
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
export async function concurrently(concurrency: number, perWorker: (worker: number) => Promise<number>): Promise<number> {
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
