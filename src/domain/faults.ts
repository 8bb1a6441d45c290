import { quoted, someOf } from './echo.js';
import { ValidationError } from './errors.js';

/**
 * The five ways an effect at a cut point can go wrong (see docs/architecture.md, "Cut points
 * and the fault model"):
 * - crash-before: the worker dies before the effect; nothing is applied.
 * - crash-after: the effect is applied, then the worker dies before it can record that.
 * - lose-response: the effect is applied, the caller sees an UNKNOWN outcome.
 * - fail: a definite failure; nothing is applied.
 * - delay: the effect is applied after a pause (a slow provider, a stale writer).
 * - lose-request: the caller sees an UNKNOWN outcome and nothing was applied (a timeout
 *   before the request arrived). The caller cannot tell it from lose-response; it is
 *   what makes MAY_HAVE_COMMITTED resolve to "not committed".
 */
/** Set to `enabled` on a deployed Lambda, it lets CUTPOINT_FAULTS arm there: a game day stage only. */
export const FAULTS_IN_LAMBDA_ENV = 'CUTPOINT_FAULTS_IN_LAMBDA';

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
/** The longest `delay` a rule may ask for: 10 minutes (600000 ms). */
export const MAX_FAULT_DELAY_MS = 600_000;
/** The largest `@<hit>` and `*<times>`: 1000000 (`*` alone fires on every hit). */
export const MAX_FAULT_HITS = 1_000_000;

/** The grammar as `cutpoint faults list`, the help and docs/testing.md "Fault injection" state it. */
export const FAULT_GRAMMAR = `<cut-point>:<kind>[=<delay-ms>][@<hit>][*<times>|*], comma-separated (delay-ms 0-${MAX_FAULT_DELAY_MS}, hit and times 1-${MAX_FAULT_HITS})`;

/**
 * Parses the `CUTPOINT_FAULTS` grammar (FAULT_GRAMMAR): a comma-separated list of
 * `<cut-point>:<kind>[=<delay-ms>][@<hit>][*<times>|*]`, e.g.
 * `generation.commit.cas:lose-response`, `generation.object.put:fail*3`,
 * `stream.append.head-cas:delay=500`, `generation.record.put:crash-after@2`.
 * By default a rule fires once, on the first hit. With `known` (the cut point registry,
 * src/cut-points.ts), a name outside it is refused (`faults.unknown_cut_point`, listing
 * the valid ones): a misspelt cut point would otherwise arm nothing, silently. A blank
 * spec arms nothing; an empty rule (a leading, trailing or doubled comma), a hit or count
 * of 0 or past MAX_FAULT_HITS, and a delay past MAX_FAULT_DELAY_MS are refused, each with
 * its own `faults.*` code, before anything runs.
 */
export function parseFaultSpec(spec: string, known?: ReadonlySet<string>): FaultRule[] {
  if (spec.trim() === '') return [];
  return spec.split(',').map((raw, i) => parseRule(raw.trim(), i + 1, known));
}

function parseRule(raw: string, position: number, known: ReadonlySet<string> | undefined): FaultRule {
  if (raw === '') {
    throw new ValidationError(
      'faults.invalid_spec',
      `fault rule ${position} is empty (a leading, trailing or doubled comma); expected ${FAULT_GRAMMAR}`,
    );
  }
  const match = /^([^:]+):([a-z-]+)(?:=([^@*]*))?(?:@([^*]*))?(?:\*(.*))?$/.exec(raw);
  if (!match) {
    throw new ValidationError(
      'faults.invalid_spec',
      `invalid fault rule ${quoted(raw)}: expected <cut-point>:<kind>[=ms][@hit][*times]`,
    );
  }
  const [, cutPoint = '', kind = '', delay, hit, times] = match;
  if (!CUT_POINT.test(cutPoint)) {
    throw new ValidationError('faults.invalid_cut_point', `invalid cut point ${quoted(cutPoint)}`);
  }
  if (known && !known.has(cutPoint)) {
    throw new ValidationError(
      'faults.unknown_cut_point',
      `unknown cut point ${quoted(cutPoint)}${closest(cutPoint, known)}; valid cut points (\`cutpoint faults list\`): ${someOf([...known].sort())}`,
    );
  }
  if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new ValidationError(
      'faults.invalid_kind',
      `unknown fault kind ${quoted(kind)}; expected one of ${FAULT_KINDS.join(', ')}`,
    );
  }
  if (delay !== undefined && kind !== 'delay') {
    throw new ValidationError('faults.invalid_spec', `"=ms" only applies to delay faults: ${quoted(raw)}`);
  }
  return {
    cutPoint,
    kind: kind as FaultKind,
    delayMs:
      delay === undefined
        ? DEFAULT_DELAY_MS
        : bounded(
            delay,
            0,
            MAX_FAULT_DELAY_MS,
            'faults.invalid_delay',
            `the delay of ${quoted(raw)} must be 0-${MAX_FAULT_DELAY_MS} ms`,
          ),
    fromHit:
      hit === undefined
        ? 1
        : bounded(
            hit,
            1,
            MAX_FAULT_HITS,
            'faults.invalid_hit',
            `the hit of ${quoted(raw)} (@<hit>) must be 1-${MAX_FAULT_HITS}`,
          ),
    times:
      times === undefined
        ? 1
        : times === ''
          ? Infinity
          : bounded(
              times,
              1,
              MAX_FAULT_HITS,
              'faults.invalid_count',
              `the count of ${quoted(raw)} (*<times>) must be 1-${MAX_FAULT_HITS}, or * for every hit`,
            ),
  };
}

/** Decimal digits naming an integer in [min, max], else `code`. */
function bounded(digits: string, min: number, max: number, code: string, message: string): number {
  const n = /^\d{1,16}$/.test(digits) ? Number(digits) : NaN;
  if (!(n >= min && n <= max)) throw new ValidationError(code, message);
  return n;
}

/** ` (did you mean "x"?)` for the known name nearest by edit distance, if it is near. */
function closest(name: string, known: ReadonlySet<string>): string {
  const near = Math.max(2, Math.floor(name.length / 4));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    // The distance is at least the difference in length: a far longer name is never near (and is not measured).
    if (Math.abs(candidate.length - name.length) > near) continue;
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= near ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
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
