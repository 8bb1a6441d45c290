import type { FaultKind } from '../faults.js';

/**
 * A game day's drills: each cut point a flow crosses, armed with a fault that lasts the
 * whole forward run (`<cut point>:<kind>*`, as the fault matrices arm it), so the run ends
 * the way that fault makes it end and recovery has something to resolve. Pure: the cut
 * points come from the catalogue (src/cut-points.ts), the order is the catalogue's.
 */
export interface Drill {
  flow: string;
  cutPoint: string;
  kind: DrillKind;
  /** The CUTPOINT_FAULTS spec that arms it. */
  spec: string;
}

/** The kinds that end a step differently: before or after its effect, its answer lost, a definite failure. */
export const DRILL_KINDS = [
  'crash-before',
  'crash-after',
  'lose-response',
  'fail',
] as const satisfies readonly FaultKind[];
export type DrillKind = (typeof DRILL_KINDS)[number];

export interface DrillChoice {
  /** `rotate`: one kind per cut point, the n-th cut point taking kind (n + seed) mod 4; else these kinds each. */
  kinds: 'rotate' | readonly DrillKind[];
  seed: number;
}

export function planDrills(flow: string, cutPoints: readonly string[], choice: DrillChoice): Drill[] {
  const drill = (cutPoint: string, kind: DrillKind): Drill => ({ flow, cutPoint, kind, spec: `${cutPoint}:${kind}*` });
  if (choice.kinds === 'rotate')
    return cutPoints.map((cp, i) => drill(cp, DRILL_KINDS[(i + choice.seed) % DRILL_KINDS.length]!));
  const kinds = choice.kinds;
  return cutPoints.flatMap((cp) => kinds.map((kind) => drill(cp, kind)));
}

/** `--kinds rotate|all|k1,k2`: undefined names a kind that is not a drill kind. */
export function parseDrillKinds(text: string): DrillChoice['kinds'] | undefined {
  if (text === 'rotate') return 'rotate';
  if (text === 'all') return DRILL_KINDS;
  const kinds = text.split(',').map((k) => k.trim());
  if (kinds.length === 0 || kinds.some((k) => !(DRILL_KINDS as readonly string[]).includes(k))) return undefined;
  return [...new Set(kinds)] as DrillKind[];
}
