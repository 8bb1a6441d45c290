import { randomUUID } from 'node:crypto';
import type { ObjectStore } from '../ports/objects.js';
import type { AslState } from '../../statemachines/spec/task.js';
import type { AslDefinition } from './asl.js';
import { readItems, writeResults, type ChildRecord } from './distributed-map-io.js';
import {
  checkMap,
  isDistributedMap,
  limitOf,
  MapRunError,
  selectItems,
  standInFor,
  type StandInPayload,
} from './distributed-map-spec.js';
import type { FlowEvent } from './flow-runner.js';

/**
 * Distributed Map states, run locally as written.
 *
 * The seam: aws-local-stepfunctions runs every Map inline (ItemProcessor over ItemsPath)
 * and has no hook to take over a state, except the Task override
 * (`taskResourceLocalHandlers`, by state name). So before the run, in memory only, each
 * Distributed Map becomes a Task stand-in of the same name (distributed-map-spec.ts:
 * `standInFor`) whose local handler is the Map Run below. The library keeps doing what it
 * does for every state — InputPath, ResultSelector, ResultPath, OutputPath, Retry, Catch,
 * Next/End, event history — and even resolves the Map's own paths (ItemsPath,
 * ItemReader/ResultWriter parameters, MaxConcurrencyPath, the tolerance paths) through the
 * stand-in's Parameters, so they mean what they mean on AWS; this module adds what the
 * library lacks: ItemReader (S3 JSON array), child executions of the ItemProcessor, one
 * per item, run by the library's own StateMachine with the parent's Task overrides
 * (`MapRuntime.runChild`), MaxConcurrency, the tolerated-failure threshold and ResultWriter.
 * Splitting the definition at the Map instead would re-implement the state's I/O
 * processing and Retry/Catch; transforming it into an inline Map would lose the child
 * executions, the threshold and the S3 reader/writer. The ASL on disk never changes.
 *
 * Known differences from AWS: the stand-in is a Task, so a Retry/Catch naming
 * `States.TaskFailed` on the Map would match Map Run errors (AWS keeps that name for Tasks);
 * items are read and selected before the first child starts; a Map Run that exceeds its
 * threshold lets its running children finish (AWS stops them) and starts no more.
 */

export interface ChildOutcome {
  status: 'SUCCEEDED' | 'FAILED';
  output?: unknown;
  error?: string;
  cause?: string;
  /** The child execution's own transitions (states entered and retries). */
  transitions: number;
}

export interface MapRunSummary {
  /** The Distributed Map state's name. */
  state: string;
  mapRunArn: string;
  items: number;
  succeeded: number;
  failed: number;
  /** Transitions of this run's child executions (billed on AWS like the parent's). */
  transitions: number;
}

export interface MapRuntime {
  objects: ObjectStore;
  /** Runs one child execution of a (substituted) ItemProcessor to its end; never throws for a failed execution. */
  runChild(definition: AslDefinition, input: unknown, execution: { arn: string; name: string }): Promise<ChildOutcome>;
  emit(event: FlowEvent): void;
  record(summary: MapRunSummary): void;
}

export type StateHandler = (input: unknown) => Promise<unknown>;

/**
 * The definition with every Distributed Map (nested ones too) replaced by its stand-in, and
 * the stand-ins' handlers by state name. Throws `UnsupportedAslError` for a Map the runner
 * cannot run as written, before anything runs.
 */
export function substituteDistributedMaps(
  definition: AslDefinition,
  runtime: MapRuntime,
): { definition: AslDefinition; handlers: Record<string, StateHandler> } {
  const handlers: Record<string, StateHandler> = {};
  return { definition: substitute(definition, runtime, handlers), handlers };
}

function substitute(
  definition: AslDefinition,
  runtime: MapRuntime,
  handlers: Record<string, StateHandler>,
): AslDefinition {
  const states: Record<string, AslState> = {};
  for (const [name, state] of Object.entries(definition.States)) {
    if (state.Type === 'Map') checkMap(name, state);
    if (isDistributedMap(state)) {
      const processor = { ...(state.ItemProcessor as AslDefinition) };
      delete processor.ProcessorConfig;
      const child = substitute(processor, runtime, handlers);
      handlers[name] = (payload) => runMapRun(name, state, child, payload as StandInPayload, runtime);
      states[name] = standInFor(state);
    } else if (state.Type === 'Map') {
      const field = state.ItemProcessor ? 'ItemProcessor' : 'Iterator';
      states[name] = { ...state, [field]: substitute(state[field] as AslDefinition, runtime, handlers) };
    } else if (state.Type === 'Parallel') {
      states[name] = {
        ...state,
        Branches: (state.Branches as AslDefinition[]).map((b) => substitute(b, runtime, handlers)),
      };
    } else {
      states[name] = state;
    }
  }
  return { ...definition, States: states };
}

async function runMapRun(
  name: string,
  state: AslState,
  child: AslDefinition,
  payload: StandInPayload,
  runtime: MapRuntime,
): Promise<unknown> {
  const { input, context, config } = payload;
  // `arn:aws:states:<region>:<account>:execution:<machine>:<name>`; a child's <machine> is `<parent>/<label>`.
  const machine = context.Execution.Id.split(':')[6] ?? 'local';
  const label = typeof state.Label === 'string' ? state.Label : name;
  const mapRunArn = `arn:aws:states:local:000000000000:mapRun:${machine}/${label}:${randomUUID()}`;
  const items = config.reader ? await readItems(runtime.objects, name, config.reader) : itemsOf(name, config.items);
  const inputs = await selectItems(state.ItemSelector ?? state.Parameters, items, input, context);
  const maxConcurrency = limitOf(name, 'MaxConcurrency', config.maxConcurrency) ?? 0;
  const exceeds = thresholdOf(name, config);

  runtime.emit({ type: 'MapRunStarted', state: name, mapRunArn, items: inputs.length });
  const summary: MapRunSummary = {
    state: name,
    mapRunArn,
    items: inputs.length,
    succeeded: 0,
    failed: 0,
    transitions: 0,
  };
  const records: ChildRecord[] = [];
  const outputs: unknown[] = [];
  let next = 0;
  let exceeded = false;
  const worker = async (): Promise<void> => {
    while (!exceeded && next < inputs.length) {
      const index = next++;
      const childName = randomUUID();
      const startDate = new Date().toISOString();
      const execution = {
        arn: `arn:aws:states:local:000000000000:execution:${machine}/${label}:${childName}`,
        name: childName,
      };
      const outcome = await runtime.runChild(child, inputs[index], execution);
      summary.transitions += outcome.transitions;
      const record: ChildRecord = {
        ExecutionArn: execution.arn,
        Name: childName,
        StateMachineArn: `arn:aws:states:local:000000000000:stateMachine:${machine}/${label}`,
        Status: outcome.status,
        StartDate: startDate,
        StopDate: new Date().toISOString(),
        Input: JSON.stringify(inputs[index]),
        InputDetails: { Included: true },
      };
      if (outcome.status === 'SUCCEEDED') {
        summary.succeeded++;
        Object.assign(record, { Output: JSON.stringify(outcome.output ?? null), OutputDetails: { Included: true } });
        outputs[index] = outcome.output ?? null;
      } else {
        summary.failed++;
        Object.assign(record, { Error: outcome.error, Cause: outcome.cause });
        outputs[index] = record; // AWS returns a failed child's record unchanged in the Map's output.
        runtime.emit({
          type: 'MapRunItemFailed',
          state: name,
          mapRunArn,
          item: index,
          error: outcome.error,
          cause: outcome.cause,
        });
        if (exceeds(summary.failed, inputs.length)) exceeded = true;
      }
      records[index] = record;
    }
  };
  const width = maxConcurrency === 0 ? inputs.length : Math.min(maxConcurrency, inputs.length);
  await Promise.all(Array.from({ length: width }, worker));
  runtime.record(summary);

  const fail = (error: MapRunError): never => {
    runtime.emit({
      type: 'MapRunFailed',
      state: name,
      mapRunArn,
      items: inputs.length,
      error: error.name,
      cause: error.message,
    });
    throw error;
  };
  let result: unknown = outputs;
  if (config.writer) {
    try {
      result = await writeResults(runtime.objects, name, config.writer, mapRunArn, records.filter(Boolean));
    } catch (error) {
      fail(error as MapRunError);
    }
  }
  if (exceeded) {
    fail(
      new MapRunError(
        'States.ExceedToleratedFailureThreshold',
        `Map state ${name}: ${summary.failed} of ${inputs.length} items failed, more than tolerated`,
      ),
    );
  }
  runtime.emit({ type: 'MapRunSucceeded', state: name, mapRunArn, items: inputs.length });
  return result;
}

function itemsOf(name: string, items: unknown): unknown[] {
  if (!Array.isArray(items))
    throw new MapRunError('States.Runtime', `Map state ${name}: ItemsPath does not point to an array`);
  return items;
}

/** Whether `failed` of `total` exceeds the Map's tolerance: either given limit; none given tolerates no failure. */
function thresholdOf(name: string, config: StandInPayload['config']): (failed: number, total: number) => boolean {
  const percentage = limitOf(name, 'ToleratedFailurePercentage', config.toleratedFailurePercentage, true);
  const count = limitOf(name, 'ToleratedFailureCount', config.toleratedFailureCount);
  return (failed, total) => {
    if (percentage === undefined && count === undefined) return failed > 0;
    return (count !== undefined && failed > count) || (percentage !== undefined && failed * 100 > percentage * total);
  };
}
