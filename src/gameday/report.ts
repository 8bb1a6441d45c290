import type { Drill } from '../domain/gameday/drill-plan.js';

/** One invariant a drill checked: its stable name, whether it held, and what was observed. */
export interface InvariantCheck {
  name: string;
  held: boolean;
  detail: string;
}

/** What one drill did and found; `held` only when every invariant held. */
export interface DrillReport extends Drill {
  /** Times the fault fired; null where it cannot be observed (a deployed stack's Lambdas). */
  fired: number | null;
  /** How the forward run ended, then each recovery step, as `what → state`. */
  trail: string[];
  finalState: string;
  invariants: InvariantCheck[];
  held: boolean;
}

export interface GamedayReport {
  runtime: 'local' | 'aws';
  /** The route deliver-window delivered, when it was drilled. */
  route?: string;
  drills: DrillReport[];
  summary: { drills: number; held: number; violated: number; invariantsChecked: number };
  /** Every invariant that did not hold, with its drill. */
  violations: Array<{ flow: string; cutPoint: string; kind: string; invariant: string; detail: string }>;
}

export function summarize(
  runtime: GamedayReport['runtime'],
  route: string | undefined,
  drills: DrillReport[],
): GamedayReport {
  const violations = drills.flatMap((d) =>
    d.invariants
      .filter((i) => !i.held)
      .map((i) => ({ flow: d.flow, cutPoint: d.cutPoint, kind: d.kind, invariant: i.name, detail: i.detail })),
  );
  return {
    runtime,
    ...(route !== undefined ? { route } : {}),
    drills,
    summary: {
      drills: drills.length,
      held: drills.filter((d) => d.held).length,
      violated: drills.filter((d) => !d.held).length,
      invariantsChecked: drills.reduce((n, d) => n + d.invariants.length, 0),
    },
    violations,
  };
}
