import { FAULT_KINDS, type FaultKind } from '../../src/domain/faults.js';

/**
 * The fault matrices in two lanes (the governance F1/F2 of docs/testing.md#governance-acceptance,
 * the stream's append, gen0, GC and cursor matrices, generation commit, and the delivery's
 * window, flow and recovery). `npm run test:matrix`
 * (CUTPOINT_MATRIX=full; CI runs it after `npm test`) runs every cut point × every fault
 * kind. `npm test` runs every cut point with ONE kind, rotated along the cut points so
 * that every kind is exercised (`kindsAt(i)` = FAULT_KINDS[i mod 6]), and (F2) one entry
 * state per cut point, rotated likewise (`sampleOf`): a full matrix case
 * is a whole operation with a bounded-reader process, and all ~300 of them do not fit the
 * suite's ten minutes on two cores. The sample is deterministic, so a failure replays.
 */
export const FULL_MATRIX = process.env.CUTPOINT_MATRIX === 'full';

export const MATRIX_LANE = FULL_MATRIX ? 'full matrix' : 'one kind per cut point; the full matrix: npm run test:matrix';

/** The fault kinds the i-th cut point (or combination) runs with in this lane. */
export function kindsAt(i: number, kinds: readonly FaultKind[] = FAULT_KINDS): readonly FaultKind[] {
  return FULL_MATRIX ? kinds : [kinds[i % kinds.length]!];
}

/**
 * The items of a list this lane runs: all of them in the full matrix; in the sample, the
 * first item of each group (`groupOf`), rotated along the groups — e.g. one governance
 * entry state per cut point, a different one at each cut point.
 */
export function sampleOf<T>(items: readonly T[], groupOf: (item: T) => string): T[] {
  if (FULL_MATRIX) return [...items];
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(groupOf(item), [...(groups.get(groupOf(item)) ?? []), item]);
  return [...groups.values()].map((group, i) => group[i % group.length]!);
}

/**
 * `[item, kind]` for every item of a list and every kind of its lane. `offset` shifts the
 * rotation, so two sampled sets over the same items (e.g. a one-shot and a persistent
 * fault) exercise different kinds.
 */
export function withKinds<T>(
  items: readonly T[],
  offset = 0,
  kinds: readonly FaultKind[] = FAULT_KINDS,
): Array<[T, FaultKind]> {
  return items.flatMap((item, i) => kindsAt(i + offset, kinds).map((kind): [T, FaultKind] => [item, kind]));
}
