import type { ConformanceTarget } from './target.js';

/**
 * One behaviour of a real service the code relies on, as AWS documents it: what `run`
 * observes must equal `expect` on AWS. Where an emulator answers otherwise, `emulator` says
 * what it answers and why the code does not depend on the difference; the emulator run
 * holds the emulator to that answer, so a change in the emulator is noticed too.
 */
export interface ConformanceCase {
  name: string;
  /** Where the code depends on it. */
  reliedOnBy: string;
  /** The AWS documentation page of the behaviour. */
  documented: string;
  expect: unknown;
  emulator?: { observed: unknown; note: string };
  /** Observes the behaviour on `t`, under keys starting with `key` (each case's own). */
  run(t: ConformanceTarget, key: string): Promise<unknown>;
}

/** A rejected call as the cases compare it: the error's name and HTTP status. */
export async function refusal(call: Promise<unknown>): Promise<{ name: string; status?: number } | 'accepted'> {
  try {
    await call;
    return 'accepted';
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name ?? 'Error', ...(e.$metadata?.httpStatusCode ? { status: e.$metadata.httpStatusCode } : {}) };
  }
}

/** What a case observed against what the target should answer. */
export interface CaseOutcome {
  case: string;
  target: ConformanceTarget['kind'];
  expected: unknown;
  observed: unknown;
  /** For an emulator: it answered as AWS documents although `emulator` says it differs (or the other way round). */
  differs: boolean;
  note?: string;
}

/** Runs every case on `t` (none stops the others): what each observed, and whether it differs from what `t` should answer. */
export async function runCases(
  t: ConformanceTarget,
  cases: readonly ConformanceCase[],
  runId: string,
): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  for (const [i, c] of cases.entries()) {
    let observed: unknown;
    try {
      observed = await c.run(t, `conformance/${runId}/${i}`);
    } catch (error) {
      observed = { unexpected: (error as Error).name, message: (error as Error).message.slice(0, 200) };
    }
    const expected = t.kind === 'emulators' && c.emulator ? c.emulator.observed : c.expect;
    out.push({
      case: c.name,
      target: t.kind,
      expected,
      observed,
      differs: JSON.stringify(observed) !== JSON.stringify(expected),
      ...(t.kind === 'emulators' && c.emulator ? { note: c.emulator.note } : {}),
    });
  }
  return out;
}
