import { ValidationError } from './errors.js';

/**
 * The five ways an effect at a cut point can go wrong (see "Cut points and faults" in
 * DESIGN.md):
 * - crash-before: the worker dies before the effect; nothing is applied.
 * - crash-after: the effect is applied, then the worker dies before it can record that.
 * - lose-response: the effect is applied, the caller sees an UNKNOWN outcome.
 * - fail: a definite failure; nothing is applied.
 * - delay: the effect is applied after a pause (a slow provider, a stale writer).
 * - lose-request: the caller sees an UNKNOWN outcome and nothing was applied (a timeout
 *   before the request arrived). The caller cannot tell it from lose-response; it is
 *   what makes MAY_HAVE_COMMITTED resolve to "not committed".
 */
export const FAULT_KINDS = ['crash-before', 'crash-after', 'lose-response', 'fail', 'delay', 'lose-request'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  cutPoint: string;
  kind: FaultKind;
  /** How many hits fire the fault; `Infinity` for every hit. */
  times: number;
  /** Which hit fires first (1-based): `@2` skips the first hit. */
  fromHit: number;
  /** Pause for `delay` faults. */
  delayMs: number;
}

const CUT_POINT = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;
const DEFAULT_DELAY_MS = 250;

/**
 * Parses the `CUTPOINT_FAULTS` grammar: a comma-separated list of
 * `<cut-point>:<kind>[=<delay-ms>][@<hit>][*<times>|*]`, e.g.
 * `generation.commit.cas:lose-response`, `generation.object.put:fail*3`,
 * `stream.append.head-cas:delay=500`, `generation.record.put:crash-after@2`.
 * By default a rule fires once, on the first hit. With `known` (the cut point registry,
 * src/cut-points.ts), a name outside it is refused (`faults.unknown_cut_point`, listing
 * the valid ones): a misspelt cut point would otherwise arm nothing, silently.
 */
export function parseFaultSpec(spec: string, known?: ReadonlySet<string>): FaultRule[] {
  const rules: FaultRule[] = [];
  for (const raw of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const match = /^([^:]+):([a-z-]+)(?:=(\d+))?(?:@(\d+))?(?:\*(\d*))?$/.exec(raw);
    if (!match) {
      throw new ValidationError('faults.invalid_spec', `invalid fault rule "${raw}": expected <cut-point>:<kind>[=ms][@hit][*times]`);
    }
    const [, cutPoint = '', kind = '', delay, hit, times] = match;
    if (!CUT_POINT.test(cutPoint)) {
      throw new ValidationError('faults.invalid_cut_point', `invalid cut point "${cutPoint}"`);
    }
    if (known && !known.has(cutPoint)) {
      throw new ValidationError(
        'faults.unknown_cut_point',
        `unknown cut point "${cutPoint}"${closest(cutPoint, known)}; valid cut points (\`cutpoint faults list\`): ${[...known].sort().join(', ')}`,
      );
    }
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw new ValidationError('faults.invalid_kind', `unknown fault kind "${kind}"; expected one of ${FAULT_KINDS.join(', ')}`);
    }
    if (delay !== undefined && kind !== 'delay') {
      throw new ValidationError('faults.invalid_spec', `"=ms" only applies to delay faults: "${raw}"`);
    }
    rules.push({
      cutPoint,
      kind: kind as FaultKind,
      delayMs: delay === undefined ? DEFAULT_DELAY_MS : Number(delay),
      fromHit: hit === undefined ? 1 : Math.max(1, Number(hit)),
      times: times === undefined ? 1 : times === '' ? Infinity : Math.max(1, Number(times)),
    });
  }
  return rules;
}

/** ` (did you mean "x"?)` for the known name nearest by edit distance, if it is near. */
function closest(name: string, known: ReadonlySet<string>): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Renders rules back to the grammar, for evidence and for re-arming a child process. */
export function formatFaultRule(rule: FaultRule): string {
  const delay = rule.kind === 'delay' ? `=${rule.delayMs}` : '';
  const hit = rule.fromHit === 1 ? '' : `@${rule.fromHit}`;
  const times = rule.times === 1 ? '' : rule.times === Infinity ? '*' : `*${rule.times}`;
  return `${rule.cutPoint}:${rule.kind}${delay}${hit}${times}`;
}

/**
 * Decides, hit by hit, which rule fires. Pure state: the injector adapter owns the I/O
 * (sleeping, throwing).
 */
export class FaultSchedule {
  private readonly hits = new Map<string, number>();
  private readonly fired = new Map<FaultRule, number>();
  constructor(private readonly rules: readonly FaultRule[]) {}

  /** Records one hit at the cut point and returns the rule that fires on it, if any. */
  hit(cutPoint: string): FaultRule | undefined {
    const n = (this.hits.get(cutPoint) ?? 0) + 1;
    this.hits.set(cutPoint, n);
    for (const rule of this.rules) {
      if (rule.cutPoint !== cutPoint || n < rule.fromHit) continue;
      const fired = this.fired.get(rule) ?? 0;
      if (fired >= rule.times) continue;
      this.fired.set(rule, fired + 1);
      return rule;
    }
    return undefined;
  }

  /** Hit counts per cut point: evidence that a test actually reached its cut point. */
  hitCounts(): Record<string, number> {
    return Object.fromEntries(this.hits);
  }

  firedCount(): number {
    let total = 0;
    for (const n of this.fired.values()) total += n;
    return total;
  }
}
