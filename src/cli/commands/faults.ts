import { CUT_POINTS } from '../../cut-points.js';
import { FAULT_GRAMMAR, FAULT_KINDS } from '../../domain/faults.js';
import { unexpectedArgument, unknownSubcommand } from '../grammar.js';

export const faultsHelp = `cutpoint faults list
  every cut point CUTPOINT_FAULTS (or --faults) may name, with its subsystem and the
  flows, commands, handlers and library entry points (the LaneWriter) that hit it, the
  fault kinds and the grammar of a rule:
  ${FAULT_GRAMMAR}
  A name not listed is refused (faults.unknown_cut_point), as are a delay, hit or count out
  of range (faults.invalid_delay, faults.invalid_hit, faults.invalid_count) and an empty rule
  (faults.invalid_spec)`;

/** `cutpoint faults list`: the cut point registry as JSON (read-only, needs no runtime). */
export function faultsCommand(args: string[]): Promise<unknown> {
  const [verb, ...extra] = args;
  if (verb !== 'list') throw unknownSubcommand('faults', verb, faultsHelp);
  if (extra.length) throw unexpectedArgument(extra[0]);
  return Promise.resolve({
    grammar: FAULT_GRAMMAR,
    kinds: [...FAULT_KINDS],
    cutPoints: CUT_POINTS,
  });
}
