import { flowCutPoints } from '../../src/registry/flow-cut-points.js';

/**
 * What a fault matrix runs: a list of the flow's own cut points in its spec's order
 * (src/registry/flow-cut-points.ts), less the ones the matrix leaves out, each named with
 * why. An exclusion (or an addition) that is not a cut point of the flow throws when the
 * matrix is built, so a renamed or dropped cut point cannot leave a stale exclusion behind,
 * and a cut point added to the flow joins the matrix unless it is excluded here by name.
 */
export function matrixCutPoints(
  flow: string,
  except: Readonly<Record<string, string>>,
  from: readonly string[] = flowCutPoints(flow),
): string[] {
  const ofFlow = new Set(flowCutPoints(flow));
  const stale = [...Object.keys(except), ...from].filter((c) => !ofFlow.has(c));
  if (stale.length > 0)
    throw new Error(`${flow} crosses no ${stale.join(', ')} (src/registry/flow-cut-points.ts): fix the matrix's list`);
  return from.filter((c) => !(c in except));
}
