import { describe, expect, it } from 'vitest';
import { FLOWS } from '../../src/registry/index.js';
import { FLOW_INPUTS, RECOVERY_ENVELOPE } from '../../src/engine/flow-input-fields.js';
import { loadAsl, placeholderOf, type AslDefinition } from '../../src/local/asl.js';
import type { AslState } from '../../statemachines/spec/task.js';

/**
 * src/engine/flow-input-fields.ts FLOW_INPUTS against the registry and the ASL, so the
 * fields a flow accepts cannot drift from the fields it reads (docs/deploy.md "Flow inputs").
 */

/** The check Task of a flow whose other Tasks start child flows: it reads no field itself. */
const CHECK = 'EngineCheckFlowInputFunctionArn';

/** Every JSONPath string of a state that reads the state's input (not the context object `$$`, not a Task's result). */
function readPaths(state: AslState): string[] {
  const paths: string[] = [];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (key.endsWith('.$') || key.endsWith('Path') || key === 'Variable') {
          if (typeof v === 'string') paths.push(v);
        } else if (key !== 'Next' && key !== 'Default') collect(v);
      }
    }
  };
  collect(state.Parameters);
  collect(state.ItemSelector);
  collect(state.Choices);
  collect((state.ItemReader as { Parameters?: unknown } | undefined)?.Parameters);
  for (const key of ['ItemsPath', 'InputPath', 'CausePath', 'ErrorPath', 'MaxConcurrencyPath'])
    if (typeof state[key] === 'string') paths.push(state[key]);
  return paths;
}

/** Top-level fields a JSONPath (or an intrinsic function's arguments) reads from `$`; `$` alone is the whole state. */
function fieldsOf(path: string): { fields: string[]; whole: boolean } {
  const fields = [...path.matchAll(/(?<!\$)\$\.([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  return { fields, whole: /(?<!\$)\$(?![.$\w[])/.test(path) };
}

/**
 * Whether a Task hands its step the execution input whole: no Parameters (the state), or
 * a first Task that passes `executionInput` and reads nothing else from the state (its step
 * takes the execution input itself: src/engine/flow-input.ts firstTaskInput). The check
 * Task reads nothing.
 */
function takesWholeInput(state: AslState, paths: string[]): boolean {
  if (state.Type !== 'Task' || placeholderOf(state.Resource) === CHECK) return false;
  const params = state.Parameters as Record<string, unknown> | undefined;
  if (params === undefined) return true;
  return (
    params['executionInput.$'] === '$$.Execution.Input' &&
    !('input' in params) &&
    paths.every((p) => fieldsOf(p).fields.length === 0)
  );
}

/** The state after this state's result lands at `resultPath`: the input still, with `written` grown, or replaced (undefined). */
function afterResult(written: ReadonlySet<string>, resultPath: unknown): Set<string> | undefined {
  if (resultPath === null) return new Set(written);
  const match = typeof resultPath === 'string' ? /^\$\.([A-Za-z0-9_]+)/.exec(resultPath) : null;
  return match ? new Set([...written, match[1]!]) : undefined;
}

/**
 * The top-level fields of the execution input a flow reads: `$.<field>` paths read while the
 * state is still the execution input (plus what ResultPath wrote into it), fields written
 * before they are read excluded; and the states that take that input whole.
 */
function inputReads(definition: AslDefinition): { fields: Set<string>; whole: Set<string> } {
  const fields = new Set<string>();
  const whole = new Set<string>();
  const seen = new Set<string>();
  const queue: Array<[string, Set<string>]> = [[definition.StartAt, new Set()]];
  while (queue.length) {
    const [name, written] = queue.shift()!;
    const key = `${name}|${[...written].sort().join(',')}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const state = definition.States[name]!;
    const paths = readPaths(state);
    for (const path of paths) for (const field of fieldsOf(path).fields) if (!written.has(field)) fields.add(field);
    if (takesWholeInput(state, paths) || paths.some((p) => fieldsOf(p).whole)) whole.add(name);
    const go = (next: unknown, after: Set<string> | undefined) => {
      if (typeof next === 'string' && after) queue.push([next, after]);
    };
    for (const c of state.Catch ?? []) go(c.Next, afterResult(written, (c as { ResultPath?: unknown }).ResultPath));
    if (state.Type === 'Choice') {
      for (const c of state.Choices as Array<{ Next: string }>) go(c.Next, written);
      go(state.Default, written);
      continue;
    }
    // A Pass that only passes its input on (a Pass with a ResultPath writes its input there).
    const passThrough =
      state.Type === 'Pass' &&
      state.Parameters === undefined &&
      state.Result === undefined &&
      state.ResultPath === undefined;
    let after = passThrough ? new Set(written) : afterResult(written, 'ResultPath' in state ? state.ResultPath : '$');
    if (typeof state.OutputPath === 'string' && state.OutputPath !== '$') after = undefined;
    go(state.Next, after);
  }
  return { fields, whole };
}

describe('FLOW_INPUTS', () => {
  it('declares exactly the flows of src/registry/flows.ts FLOWS', () => {
    expect(Object.keys(FLOW_INPUTS).sort()).toEqual(FLOWS.map((f) => f.name).sort());
  });

  it('names, for each recovering flow, exactly the flows whose FLOWS recovery starts it ({recoveryOf, originalInput})', () => {
    for (const flow of FLOWS) {
      const recovered = FLOWS.filter((f) => f.recovery?.by === flow.name).map((f) => f.name);
      expect([...(FLOW_INPUTS[flow.name]!.recovers ?? [])].sort(), flow.name).toEqual(recovered.sort());
    }
  });

  it.each(FLOWS.map((f) => [f.name]))(
    "%s: the fields are the ones its ASL reads from the execution input (and its whole-input Task's)",
    (flow) => {
      const spec = FLOW_INPUTS[flow]!;
      const { fields, whole } = inputReads(loadAsl(flow));
      const declared = new Set([...spec.fields, ...(spec.recovers ? RECOVERY_ENVELOPE : [])]);
      // Every field the ASL reads is declared: a start without the list's blessing cannot reach a step.
      expect(
        [...fields].filter((f) => !declared.has(f)),
        `${flow} reads undeclared fields`,
      ).toEqual([]);
      if (whole.size === 0) {
        // No step takes the input whole: every declared field is one the ASL reads.
        expect(
          [...declared].filter((f) => !fields.has(f)),
          `${flow} declares fields nothing reads`,
        ).toEqual([]);
      } else {
        // The rest is read by the step that takes the execution input whole (and checked there first).
        expect(
          [...whole].every((state) => loadAsl(flow).States[state]?.Type === 'Task'),
          `${flow}: ${[...whole].join(', ')}`,
        ).toBe(true);
      }
    },
  );
});

/** The Tasks a flow runs first: reached from StartAt through Choice and Pass states only. */
function firstTasks(definition: AslDefinition): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const queue = [definition.StartAt];
  while (queue.length) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const state = definition.States[name]!;
    if (state.Type === 'Task' || state.Type === 'Map' || state.Type === 'Parallel') {
      found.add(name);
      continue;
    }
    if (state.Type === 'Choice')
      queue.push(
        ...(state.Choices as Array<{ Next: string }>).map((c) => c.Next),
        ...(typeof state.Default === 'string' ? [state.Default] : []),
      );
    if (typeof state.Next === 'string') queue.push(state.Next);
  }
  return [...found];
}

describe("every flow's first Task checks the execution input", () => {
  it.each(FLOWS.map((f) => [f.name]))(
    '%s: each Task it can run first is a Lambda Task passing its flow and $$.Execution.Input, its refusal caught into a Fail state',
    (flow) => {
      const definition = loadAsl(flow);
      const first = firstTasks(definition);
      expect(first.length, flow).toBeGreaterThan(0);
      for (const name of first) {
        const state = definition.States[name]!;
        expect(state.Type, name).toBe('Task');
        expect(placeholderOf(state.Resource), `${name} must be a Lambda of ours`).toBeDefined();
        expect(state.Parameters, name).toMatchObject({ flow, 'executionInput.$': '$$.Execution.Input' });
        const refusal = (state.Catch ?? []).find((c) => c.ErrorEquals.includes('Cutpoint.ValidationError'));
        expect(refusal, `${name} catches Cutpoint.ValidationError`).toBeDefined();
        expect(definition.States[refusal!.Next]?.Type, `${name}'s refusal ends the run`).toBe('Fail');
      }
    },
  );
});
