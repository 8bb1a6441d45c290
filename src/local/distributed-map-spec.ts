import { stepFunctions } from './step-functions.js';
import { CutpointError } from '../domain/errors.js';
import type { AslState } from '../../statemachines/spec/task.js';
import type { AslDefinition } from './asl.js';

/**
 * What the local runner accepts in a Distributed Map state, how it turns one into the Task
 * stand-in the library runs (see distributed-map.ts for why), and the errors a Map Run
 * raises. Every field outside SUPPORTED is refused before the execution starts, never
 * ignored: a flow must not behave differently locally than on AWS without saying so.
 */

const GET_OBJECT = 'arn:aws:states:::s3:getObject';
const PUT_OBJECT = 'arn:aws:states:::s3:putObject';
/** The stand-in's Resource: never called (its handler is a local override). */
const STAND_IN_RESOURCE = 'arn:aws:states:::local:distributedMap';
/** A Map Run has no timeout of its own; the library's Task default (60 s) must not apply. Below 2^31 ms. */
const STAND_IN_TIMEOUT_SECONDS = 2_000_000;

/** Fields the library's own Task machinery handles for the stand-in exactly as for the Map. */
const CARRIED = [
  'Comment',
  'InputPath',
  'ResultSelector',
  'ResultPath',
  'OutputPath',
  'Retry',
  'Catch',
  'Next',
  'End',
] as const;
const SUPPORTED = new Set<string>([
  ...CARRIED,
  'Type',
  'Label',
  'ItemProcessor',
  'ItemReader',
  'ItemsPath',
  'ItemSelector',
  'Parameters',
  'MaxConcurrency',
  'MaxConcurrencyPath',
  'ToleratedFailurePercentage',
  'ToleratedFailurePercentagePath',
  'ToleratedFailureCount',
  'ToleratedFailureCountPath',
  'ResultWriter',
]);
const MAP_RUN_ONLY = [
  'ItemReader',
  'ItemBatcher',
  'ResultWriter',
  'Label',
  'ToleratedFailurePercentage',
  'ToleratedFailurePercentagePath',
  'ToleratedFailureCount',
  'ToleratedFailureCountPath',
];

/** A Step Functions runtime error of a Map Run; Retry/Catch match its `name` as on AWS. */
export class MapRunError extends CutpointError {
  constructor(
    name:
      | 'States.ItemReaderFailed'
      | 'States.ResultWriterFailed'
      | 'States.ExceedToleratedFailureThreshold'
      | 'States.Runtime',
    message: string,
    options?: { cause?: unknown },
  ) {
    const code = {
      'States.ItemReaderFailed': 'local.map_item_reader_failed',
      'States.ResultWriterFailed': 'local.map_result_writer_failed',
      'States.ExceedToleratedFailureThreshold': 'local.map_tolerated_failure_exceeded',
      'States.Runtime': 'local.map_runtime',
    }[name];
    super(name, code, message, options);
  }
}

/** A flow uses ASL the local runner cannot run faithfully; raised before the execution starts. */
export class UnsupportedAslError extends CutpointError {
  constructor(message: string) {
    super('Cutpoint.UnsupportedAsl', 'local.unsupported_asl', message);
  }
}

export function isDistributedMap(state: AslState): boolean {
  const processor = state.ItemProcessor as { ProcessorConfig?: { Mode?: string } } | undefined;
  return state.Type === 'Map' && processor?.ProcessorConfig?.Mode === 'DISTRIBUTED';
}

/** Refuses a Map the runner cannot run as written (precise message naming the state and field). */
export function checkMap(name: string, state: AslState): void {
  const refuse = (why: string): never => {
    throw new UnsupportedAslError(`Map state ${name}: ${why}`);
  };
  if (!isDistributedMap(state)) {
    const stray = MAP_RUN_ONLY.filter((f) => f in state);
    if (stray.length) refuse(`${stray.join(', ')} need(s) ItemProcessor.ProcessorConfig.Mode DISTRIBUTED`);
    return;
  }
  if ('ItemBatcher' in state) refuse('ItemBatcher is not supported by the local runner');
  for (const field of Object.keys(state))
    if (!SUPPORTED.has(field)) refuse(`${field} is not supported by the local runner`);
  const config = (state.ItemProcessor as { ProcessorConfig: Record<string, unknown> }).ProcessorConfig;
  if (config.ExecutionType !== 'STANDARD')
    refuse(`ProcessorConfig.ExecutionType ${String(config.ExecutionType)} is not supported (STANDARD only)`);
  if (state.ItemSelector && state.Parameters) refuse('ItemSelector and Parameters are the same field; give one');
  const reader = state.ItemReader as Record<string, unknown> | undefined;
  if (reader) {
    if (state.ItemsPath !== undefined) refuse('ItemsPath with ItemReader is not supported');
    if (reader.Resource !== GET_OBJECT) refuse(`ItemReader.Resource must be ${GET_OBJECT}`);
    const readerConfig = (reader.ReaderConfig ?? {}) as Record<string, unknown>;
    if (readerConfig.InputType !== 'JSON' || Object.keys(readerConfig).length !== 1)
      refuse('ItemReader.ReaderConfig must be exactly { "InputType": "JSON" }');
    checkS3Parameters(reader.Parameters, ['Bucket', 'Key'], `${name}.ItemReader`);
  }
  const writer = state.ResultWriter as Record<string, unknown> | undefined;
  if (writer) {
    if (writer.Resource !== PUT_OBJECT || 'WriterConfig' in writer)
      refuse(`ResultWriter must be { "Resource": "${PUT_OBJECT}", "Parameters": … } (no WriterConfig)`);
    checkS3Parameters(writer.Parameters, ['Bucket', 'Prefix'], `${name}.ResultWriter`);
  }
}

function checkS3Parameters(parameters: unknown, fields: string[], where: string): void {
  const given = Object.keys((parameters ?? {}) as Record<string, unknown>);
  const allowed = fields.flatMap((f) => [f, `${f}.$`]);
  const extra = given.filter((k) => !allowed.includes(k));
  if (extra.length)
    throw new UnsupportedAslError(
      `${where}.Parameters: ${extra.join(', ')} not supported (only ${allowed.join(', ')})`,
    );
  for (const f of fields) {
    const count = given.filter((k) => k === f || k === `${f}.$`).length;
    if (count > 1) throw new UnsupportedAslError(`${where}.Parameters: give ${f} or ${f}.$, not both`);
    if (count === 0 && f !== 'Prefix') throw new UnsupportedAslError(`${where}.Parameters: ${f} is required`);
  }
}

/** What the stand-in hands its handler: the Map's effective input, `$$`, and its path fields resolved by the library. */
export interface StandInPayload {
  input: unknown;
  context: MapContext;
  config: {
    reader?: { Bucket?: unknown; Key?: unknown };
    writer?: { Bucket?: unknown; Prefix?: unknown };
    items?: unknown;
    maxConcurrency?: unknown;
    toleratedFailurePercentage?: unknown;
    toleratedFailureCount?: unknown;
  };
}

export interface MapContext {
  Execution: { Id: string; Name?: string; Input?: unknown; StartTime?: string };
  [field: string]: unknown;
}

/**
 * The Task the library runs in the Map's place: same name and transitions, same
 * InputPath/ResultSelector/ResultPath/OutputPath/Retry/Catch (applied by the library, as
 * for any state), and Parameters that let the library resolve the Map's own paths
 * (ItemsPath, ItemReader/ResultWriter `.$` parameters, the `*Path` fields) on the effective
 * input and `$$`, so a missing path fails the state with States.Runtime as on AWS.
 */
export function standInFor(state: AslState): AslState {
  const standIn: AslState = { Type: 'Task', Resource: STAND_IN_RESOURCE, TimeoutSeconds: STAND_IN_TIMEOUT_SECONDS };
  for (const field of CARRIED) if (field in state) (standIn as Record<string, unknown>)[field] = state[field];
  const config: Record<string, unknown> = {};
  const reader = state.ItemReader as { Parameters: unknown } | undefined;
  const writer = state.ResultWriter as { Parameters: unknown } | undefined;
  if (reader) config.reader = reader.Parameters;
  else config['items.$'] = state.ItemsPath ?? '$';
  if (writer) config.writer = writer.Parameters;
  pathOrValue(config, 'maxConcurrency', state.MaxConcurrency, state.MaxConcurrencyPath);
  pathOrValue(
    config,
    'toleratedFailurePercentage',
    state.ToleratedFailurePercentage,
    state.ToleratedFailurePercentagePath,
  );
  pathOrValue(config, 'toleratedFailureCount', state.ToleratedFailureCount, state.ToleratedFailureCountPath);
  standIn.Parameters = { 'input.$': '$', 'context.$': '$$', config };
  return standIn;
}

function pathOrValue(config: Record<string, unknown>, key: string, value: unknown, path: unknown): void {
  if (path !== undefined) config[`${key}.$`] = path;
  else if (value !== undefined) config[key] = value;
}

/** An integer ≥ 0 (or, for a percentage, a number in 0..100) resolved from the Map's fields, else States.Runtime. */
export function limitOf(name: string, field: string, value: unknown, percentage = false): number | undefined {
  if (value === undefined) return undefined;
  const ok = typeof value === 'number' && value >= 0 && (percentage ? value <= 100 : Number.isInteger(value));
  if (!ok)
    throw new MapRunError(
      'States.Runtime',
      `Map state ${name}: ${field} resolved to ${JSON.stringify(value)}, not ${percentage ? 'a number in 0..100' : 'an integer >= 0'}`,
    );
  return value as number;
}

/**
 * Each item's child input: the ItemSelector (or legacy Parameters) evaluated by the library
 * itself (an inline Map over the items, so `$$.Map.Item.Value/Index` and intrinsic
 * functions mean what they mean on AWS), with the Map's effective input as `$` and the
 * execution's `$$`; the item itself without a selector. The state input reaches the inline
 * Map through a reserved context entry (`$$.LocalRunner`), because the library makes a
 * run's own input `$$.Execution.Input`. `$$.Execution.StartTime` reads as the evaluation time.
 */
export async function selectItems(
  template: unknown,
  items: unknown[],
  input: unknown,
  context: MapContext,
): Promise<unknown[]> {
  if (template === undefined) return items;
  const selector: AslDefinition = {
    StartAt: 'Select',
    States: {
      Select: {
        Type: 'Map',
        InputPath: '$$.LocalRunner.StateInput',
        ItemsPath: '$$.LocalRunner.Items',
        ItemSelector: template,
        MaxConcurrency: 1,
        ItemProcessor: { StartAt: 'Selected', States: { Selected: { Type: 'Pass', End: true } } },
        End: true,
      },
    },
  };
  const { StateMachine } = await stepFunctions();
  const machine = new StateMachine(selector as never, { validationOptions: { noValidate: true } });
  const run = machine.run(context.Execution.Input as never, {
    context: { ...context, LocalRunner: { StateInput: input, Items: items } } as never,
  });
  try {
    return (await run.result) as unknown[];
  } catch (error) {
    const failure = ((error as { cause?: unknown }).cause ?? error) as Error;
    throw new MapRunError('States.Runtime', `ItemSelector: ${failure.message}`, { cause: failure });
  }
}
