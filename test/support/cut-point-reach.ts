import { expect } from 'vitest';
import { CUT_POINTS, type CutPointInfo } from '../../src/cut-points.js';
import { sampleOf } from './matrix-lane.js';

/**
 * "Every cut point `cutpoint faults list` names for a flow or command fires when armed
 * through it" (docs/testing.md "Fault injection"). The catalogue (src/cut-points.ts) says
 * where each cut point is crossed: flows (`flow run <flow>`), commands and handlers. A
 * reach test runs each of those places the way an operator does — the CLI with
 * CUTPOINT_FAULTS set, on the local runtime — with EVERY cut point armed `delay=0*` (it
 * fires on each hit and changes nothing else), and reads what fired from the `fault fired:`
 * lines every command prints on stderr. Over the scenarios of one place, what fired must be
 * exactly what the catalogue lists for it: a listed cut point that never fires is listed
 * for a place that cannot reach it (or is not wired to the run's injector), and one that
 * fires unlisted is missing from `faults list`.
 */

/** How one scenario ran: its stderr (the `fault fired:` lines), plus cut points it proved fired by another observable. */
export interface ReachRun {
  stderr: string;
  /** Cut points seen to fire some other way (a fault inside the reader child, named by the outcome it left). */
  alsoFired?: readonly string[];
}

export interface ReachScenario {
  /** What state the scenario starts from and what it runs, for the failure message. */
  name: string;
  run(faults: string): Promise<ReachRun>;
}

/** Every place the catalogue names, as its CutPointInfo field says it: `flow <name>`, the command, the handler's file, or `library <name>`. */
export function placesOf(c: CutPointInfo): string[] {
  return [...c.flows.map((f) => `flow ${f}`), ...c.commands, ...c.handlers, ...c.libraries.map((l) => `library ${l}`)];
}

/** The cut points the catalogue lists for `place`, sorted. */
export function listedAt(place: string): string[] {
  return CUT_POINTS.filter((c) => placesOf(c).includes(place))
    .map((c) => c.name)
    .sort();
}

/** The places whose listed cut points belong to one of `subsystems` (each place is tested by the file owning its subsystems). */
export function placesOfSubsystems(subsystems: ReadonlyArray<CutPointInfo['subsystem']>): string[] {
  return [...new Set(CUT_POINTS.filter((c) => subsystems.includes(c.subsystem)).flatMap(placesOf))].sort();
}

/**
 * The stream log's side of the catalogue — the stream, generation, objects and recovery
 * cut points — has its places split between two files: the stream flows and commands
 * (cut-point-reach-stream.test.ts) and the rest (cut-point-reach-generation.test.ts).
 */
export const LOG_SUBSYSTEMS: ReadonlyArray<CutPointInfo['subsystem']> = ['stream', 'generation', 'objects', 'recovery'];
/** A stream flow (`flow stream-…`) or command (`stream …`), or the stream log's library entry point (`library LaneWriter`). */
export const isStreamPlace = (place: string): boolean =>
  /^(flow )?stream[ -]/.test(place) || place === 'library LaneWriter';

/** Every cut point armed to fire on every hit without changing what happens: the spec a reach scenario runs under. */
export const ARM_EVERY_CUT_POINT = CUT_POINTS.map((c) => `${c.name}:delay=0*`).join(',');

/** The cut points named by `fault fired: <cut point> <kind> (hit n)` lines. */
export function firedIn(stderr: string): Set<string> {
  return new Set([...stderr.matchAll(/fault fired: ([a-z0-9.-]+) /g)].map((m) => m[1]!));
}

/** Runs the scenarios of one place and expects what fired over all of them to be exactly what is listed there. */
export async function expectReach(place: string, scenarios: readonly ReachScenario[]): Promise<void> {
  const fired = new Set<string>();
  const seen: string[] = [];
  for (const scenario of scenarios) {
    const run = await scenario.run(ARM_EVERY_CUT_POINT);
    const here = [...firedIn(run.stderr), ...(run.alsoFired ?? [])];
    here.forEach((c) => fired.add(c));
    seen.push(`${scenario.name}: ${here.length ? [...new Set(here)].sort().join(', ') : '(none)'}`);
  }
  expect([...fired].sort(), `${place} — what fired, by scenario:\n${seen.join('\n')}`).toEqual(listedAt(place));
}

/** `spec` with the rule for `cutPoint` replaced by `rule` (e.g. `fail*` for a cut point seen by what its failure leaves). */
export function withRule(spec: string, cutPoint: string, rule: string): string {
  return spec
    .split(',')
    .map((r) => (r.startsWith(`${cutPoint}:`) ? `${cutPoint}:${rule}` : r))
    .join(',');
}

/**
 * The places this lane runs: all of them in the full matrix (`npm run test:matrix`, which CI
 * runs after `npm test`); in `npm test` one place per use case — a flow and the command that
 * runs the same use case in-process (`flow delivery-resume`, `delivery resume`) are one
 * group — rotated along the groups (matrix-lane.ts `sampleOf`): deterministic, so a failure
 * replays. The whole table is still held to the catalogue by each file's first test.
 */
export function placesInLane<T>(places: Readonly<Record<string, T>>): Array<[string, T]> {
  const all = Object.entries(places).sort(([a], [b]) => a.localeCompare(b));
  return sampleOf(all, ([place]) => place.replace(/^flow /, '').replace('-', ' '));
}
