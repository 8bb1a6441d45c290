/**
 * A flow's success path, read from its generated ASL (statemachines/<flow>.asl.json, printed
 * from its spec by `npm run flows`): the Tasks a run enters when every step succeeds, in
 * order — from StartAt along `Next`, into a Map's item processor (its Tasks, once), a
 * Choice's `Default`. The in-process runs take their step order from it (docs/decisions/0005-flows-declared-once.md), so a step added to a flow's spec is a step of
 * the in-process run too, or the run refuses to start (`inFlowOrder`).
 */
const HANDLER_PATH = /^[a-z][a-z0-9]*(-[a-z0-9]+)*(\/[a-z][a-z0-9]*(-[a-z0-9]+)*)+$/;

/** `delivery/begin` -> `DeliveryBeginFunctionArn`, `stream/commit-head` -> `StreamCommitHeadFunctionArn`. */
export function handlerPlaceholder(handler: string): string {
  if (!HANDLER_PATH.test(handler))
    throw new Error(`'${handler}' is not a handler path under functions/ (e.g. 'delivery/begin')`);
  const pascal = handler
    .split(/[/-]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
  return `${pascal}FunctionArn`;
}

interface PathState {
  Type: string;
  Resource?: string;
  Next?: string;
  Default?: string;
  End?: boolean;
  ItemProcessor?: PathMachine;
  Iterator?: PathMachine;
}
interface PathMachine {
  StartAt: string;
  States: Record<string, PathState>;
}

/** One Task on the path: its state name and the registry placeholder its Resource names (`${X}` → X). */
export interface PathTask {
  state: string;
  placeholder: string;
}

export function successPath(machine: PathMachine): PathTask[] {
  const tasks: PathTask[] = [];
  const seen = new Set<string>();
  let at: string | undefined = machine.StartAt;
  while (at !== undefined && !seen.has(at)) {
    seen.add(at);
    const state: PathState | undefined = machine.States[at];
    if (!state) throw new Error(`the flow names a state it does not declare: ${at}`);
    if (state.Type === 'Task') {
      const placeholder = /^\$\{([A-Za-z0-9]+)\}$/.exec(state.Resource ?? '')?.[1];
      if (placeholder) tasks.push({ state: at, placeholder });
    }
    const processor = state.ItemProcessor ?? state.Iterator;
    if (state.Type === 'Map' && processor) tasks.push(...successPath(processor));
    at = state.Type === 'Choice' ? state.Default : state.Next;
  }
  return tasks;
}

/**
 * The in-process steps of a flow in its order: the Tasks of its success path after the
 * first `skip`, each mapped through `steps` (keyed by handler path, e.g. 'delivery/publish').
 * A Task with no in-process step, or a step no Task of the path names, is a bug: it throws
 * when the list is built.
 */
export function inFlowOrder<S>(flow: string, machine: PathMachine, steps: Readonly<Record<string, S>>, skip = 0): S[] {
  const path = successPath(machine).slice(skip);
  const byPlaceholder = new Map(Object.entries(steps).map(([handler, step]) => [handlerPlaceholder(handler), step]));
  const missing = path.filter((t) => !byPlaceholder.has(t.placeholder)).map((t) => t.state);
  const unused = Object.keys(steps).filter((h) => !path.some((t) => t.placeholder === handlerPlaceholder(h)));
  if (missing.length > 0 || unused.length > 0)
    throw new Error(
      `bug: ${flow}'s in-process steps differ from its flow (statemachines/flows/${flow}.ts): ` +
        `no step for ${missing.join(', ') || '-'}; not in the flow: ${unused.join(', ') || '-'}`,
    );
  return path.map((t) => byPlaceholder.get(t.placeholder)!);
}
