/**
 * A flow's cut points in the order of its spec (docs/architecture.md 'The layers lint holds': flows are
 * declared once): the registry steps' `cutPoints` along the generated ASL's success path
 * (src/engine/flow-path.ts successPath), then those of its other Tasks (recovery and stop
 * paths, in declaration order), then what the flow itself crosses — a Distributed Map's
 * ResultWriter, the child flows a Task starts. Each once, first occurrence kept. The fault
 * matrices take their per-flow lists from here; test/unit/flow-cut-points.test.ts holds it
 * to the catalogue's places (src/cut-points.ts).
 *
 * The ASL is read with the local runner's own loadAsl, so this is what `flow run` runs, for
 * any flow by name, and no definition is loaded until one is asked for.
 */
import { successPath } from '../engine/flow-path.js';
import type { AslState } from '../../statemachines/spec/task.js';
import {
  allStates,
  childFlowPlaceholderOf,
  flowPlaceholder,
  loadAsl,
  nestedMachines,
  taskStates,
  type AslDefinition,
} from '../local/asl.js';
import { LOCAL_CUT_POINTS } from '../local/cut-points.js';
import { EXCHANGE_FLOW, SQL_FLOW } from '../publication/flow-route.js';
import { FLOWS } from './flows.js';
import { stepByPlaceholder } from './index.js';
import { everyCutPoint, type StepCutPoints } from './step-entry.js';

/** A step's cut points in `flow`: by publication mode where the step's depend on it (Begin refuses the other mode's routes). */
function inFlow(flow: string, cuts: StepCutPoints): readonly string[] {
  if (!('transaction' in cuts)) return cuts;
  if (flow === SQL_FLOW) return cuts.transaction;
  if (flow === EXCHANGE_FLOW) return cuts.exchange;
  return everyCutPoint(cuts);
}

const placeholderCuts = (flow: string, placeholders: readonly string[]): string[] =>
  placeholders.flatMap((p) => inFlow(flow, stepByPlaceholder(p).cutPoints));

/** The cut points the step behind `placeholder` crosses in `flow` (a flow's picture marks them on its Task). */
export function stepCutPointsIn(flow: string, placeholder: string): readonly string[] {
  return inFlow(flow, stepByPlaceholder(placeholder).cutPoints);
}

/** The Map states of a definition, nested ones too. */
const mapStates = (definition: AslDefinition) => allStates(definition).filter((s) => s.definition.Type === 'Map');
/** A Map with a ResultWriter writes its Map Run's results (the local runner's cut point). */
const resultWriter = (map: AslState): string[] => (map.ResultWriter ? [LOCAL_CUT_POINTS.mapRunResultWrite] : []);

/** What the flow itself crosses: each Map's ResultWriter, each child flow a Task starts (its own cut points). */
function flowLevel(definition: AslDefinition): string[] {
  const writers = mapStates(definition).flatMap((m) => resultWriter(m.definition));
  const children = taskStates(definition).flatMap(({ definition: s }) => {
    const child = childFlowPlaceholderOf(s);
    const flow = child && FLOWS.find((f) => flowPlaceholder(f.name) === child);
    if (child && !flow) throw new Error(`a Task starts ${child}, which names no flow of the registry`);
    return flow ? flowCutPoints(flow.name) : [];
  });
  return [...writers, ...children];
}

/** The cut points `flow` crosses, in its spec's order. */
export function flowCutPoints(flow: string): string[] {
  const definition = loadAsl(flow);
  const path = successPath(definition).map((t) => t.placeholder);
  const others = taskStates(definition)
    .flatMap((t) => (t.placeholder ? [t.placeholder] : []))
    .filter((p) => !path.includes(p));
  return [...new Set([...placeholderCuts(flow, path), ...placeholderCuts(flow, others), ...flowLevel(definition)])];
}

/**
 * The cut points of `flow`'s Distributed Map `state`: its item Tasks' (a part's, for the
 * delivery flows), then its ResultWriter's.
 */
export function mapCutPoints(flow: string, state: string): string[] {
  const map = mapStates(loadAsl(flow)).find((m) => m.state === state);
  if (!map) throw new Error(`${flow} has no Map state ${state} (statemachines/flows/${flow}.ts)`);
  const items = nestedMachines(map.definition).flatMap((m) =>
    taskStates(m).flatMap((t) => (t.placeholder ? [t.placeholder] : [])),
  );
  return [...new Set([...placeholderCuts(flow, items), ...resultWriter(map.definition)])];
}
