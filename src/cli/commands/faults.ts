import { CUT_POINTS } from '../../cut-points.js';
import { FAULT_KINDS } from '../../domain/faults.js';
import { UsageError } from '../io.js';

export const faultsHelp = `cutpoint faults list
  every cut point CUTPOINT_FAULTS (or --faults) may name, with its subsystem and the
  flows and commands that hit it, and the fault kinds; a name not listed is refused
  (faults.unknown_cut_point)`;

/** `cutpoint faults list`: the cut point registry as JSON (read-only, needs no runtime). */
export function faultsCommand(args: string[]): Promise<unknown> {
  const [verb, ...extra] = args;
  if (verb !== 'list') throw new UsageError(`unknown faults subcommand ${JSON.stringify(verb ?? '')}\n${faultsHelp}`);
  if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  return Promise.resolve({
    grammar: '<cut-point>:<kind>[=<delay-ms>][@<hit>][*<times>|*], comma-separated',
    kinds: [...FAULT_KINDS],
    cutPoints: CUT_POINTS,
  });
}
