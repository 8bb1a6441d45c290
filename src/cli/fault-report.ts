import { ArmedFaultInjector } from '../adapters/fault-injector.js';
import type { FaultInjector } from '../ports/faults.js';
import { progress } from './io.js';

/**
 * What the command's armed faults did, on stderr, whatever the command's outcome: one
 * `fault fired: <cut point> <kind> (hit n)` line per firing. Every command that arms
 * CUTPOINT_FAULTS / --faults prints it, so an operator rehearsing a fault sees that it
 * fired (and the reach tests read it: test/support/cut-point-reach.ts).
 */
export function reportFired(faults: FaultInjector): void {
  for (const f of firedOf(faults)) progress(`fault fired: ${f.cutPoint} ${f.kind} (hit ${f.hit})`);
}

/** The firings of an armed injector; none for an inert one. */
export function firedOf(faults: FaultInjector): ArmedFaultInjector['fired'] {
  return faults instanceof ArmedFaultInjector ? faults.fired : [];
}
