import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AslState } from '../../statemachines/spec/task.js';

/** Repository root, from this file's location (src/local/). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface AslDefinition {
  Comment?: string;
  StartAt: string;
  States: Record<string, AslState>;
  [field: string]: unknown;
}

export function aslPath(flow: string): string {
  return `${REPO_ROOT}statemachines/${flow}.asl.json`;
}

export function loadAsl(flow: string): AslDefinition {
  return JSON.parse(readFileSync(aslPath(flow), 'utf8')) as AslDefinition;
}

/** `${Placeholder}` → `Placeholder`, or undefined for a literal resource. */
export function placeholderOf(resource: string | undefined): string | undefined {
  const match = /^\$\{([A-Za-z0-9]+)\}$/.exec(resource ?? '');
  return match?.[1];
}

/** The state machines nested in a state: a Map's ItemProcessor (or legacy Iterator), a Parallel's Branches. */
export function nestedMachines(state: AslState): AslDefinition[] {
  if (state.Type === 'Map') {
    const processor = (state.ItemProcessor ?? state.Iterator) as AslDefinition | undefined;
    return processor ? [processor] : [];
  }
  if (state.Type === 'Parallel') return (state.Branches as AslDefinition[] | undefined) ?? [];
  return [];
}

/**
 * Every state of the definition with its name, nested ones too (inside Map ItemProcessors
 * and Parallel Branches), depth first. ASL wants state names unique across the whole
 * machine, and the local runner keys its overrides by name: see `duplicateStateNames`.
 */
export function allStates(definition: AslDefinition): Array<{ state: string; definition: AslState }> {
  return Object.entries(definition.States).flatMap(([state, s]) => [
    { state, definition: s },
    ...nestedMachines(s).flatMap((machine) => allStates(machine)),
  ]);
}

/** Names that more than one state of the definition (nested ones included) carries. */
export function duplicateStateNames(definition: AslDefinition): string[] {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const { state } of allStates(definition)) (seen.has(state) ? duplicates : seen).add(state);
  return [...duplicates];
}

/** Task states, nested ones too, each with its definition and the registry placeholder it names. */
export function taskStates(
  definition: AslDefinition,
): Array<{ state: string; placeholder: string | undefined; definition: AslState }> {
  return allStates(definition)
    .filter(({ definition: s }) => s.Type === 'Task')
    .map(({ state, definition: s }) => ({ state, placeholder: placeholderOf(s.Resource), definition: s }));
}

/** The Step Functions integration that starts a child execution of another flow and waits for its JSON output. */
export const START_FLOW_SYNC = 'arn:aws:states:::states:startExecution.sync:2';

/** `stream-gc` → `StreamGcStateMachineArn`: the placeholder a flow's ARN takes in another flow's ASL. */
export function flowPlaceholder(flow: string): string {
  return `${flow.replace(/(^|-)([a-z0-9])/g, (_m, _dash: string, c: string) => c.toUpperCase())}StateMachineArn`;
}

/**
 * The placeholder of the flow a Task starts (Resource START_FLOW_SYNC, Parameters.StateMachineArn
 * `${<Flow>StateMachineArn}`), or undefined for any other Task.
 */
export function childFlowPlaceholderOf(state: AslState): string | undefined {
  if (state.Type !== 'Task' || state.Resource !== START_FLOW_SYNC) return undefined;
  const arn = (state.Parameters as { StateMachineArn?: unknown } | undefined)?.StateMachineArn;
  const match = /^\$\{([A-Za-z0-9]+StateMachineArn)\}$/.exec(typeof arn === 'string' ? arn : '');
  return match?.[1];
}
