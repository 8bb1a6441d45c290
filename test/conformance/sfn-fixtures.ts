import type { AslDefinition } from '../../src/local/asl.js';
import type { AslState } from '../../statemachines/spec/task.js';

/**
 * The state machines the Step Functions cases run: the same ASL on the local runner and in a
 * real account. There is no Task anywhere: a step that throws is a Parallel whose one branch
 * ends in a Fail state taking its Error and Cause from the input (`throw`, `why`). The
 * Parallel fails with the branch's error and takes Retry and Catch as a Task does, so a
 * fixture needs no Lambda and creates nothing but its own state machine. Each mirrors a
 * shape statemachines/*.asl.json use, named where it does.
 */

/** A Parallel named `name` that fails with `$.throw` / `$.why` on every attempt; `fields` adds its Retry, Catch, Next… */
function throwing(name: string, fields: Partial<AslState>): AslState {
  const fail = `${name}Throws`;
  return {
    Type: 'Parallel',
    Branches: [{ StartAt: fail, States: { [fail]: { Type: 'Fail', ErrorPath: '$.throw', CausePath: '$.why' } } }],
    ...fields,
  };
}

/**
 * A step's Retry and Catch as deliver-window writes them: a retrier for another error first
 * (it must be skipped: ErrorEquals matches the error's name), then one for the thrown error
 * with MaxAttempts 2, then a Catch of it to `$.failure` next to the input.
 */
export function retryThenCatch(): AslDefinition {
  return {
    StartAt: 'Step',
    States: {
      Step: throwing('Step', {
        Retry: [
          { ErrorEquals: ['Lambda.TooManyRequestsException'], IntervalSeconds: 1, MaxAttempts: 5, BackoffRate: 1 },
          { ErrorEquals: ['Cutpoint.OutcomeUnknown'], IntervalSeconds: 1, MaxAttempts: 2, BackoffRate: 1 },
        ],
        Catch: [{ ErrorEquals: ['Cutpoint.OutcomeUnknown'], ResultPath: '$.failure', Next: 'Caught' }],
        Next: 'NotCaught',
      }),
      Caught: { Type: 'Pass', End: true },
      NotCaught: { Type: 'Pass', End: true },
    },
  };
}

/**
 * `$$.State.RetryCount` handed to a retried step through its Parameters, as every
 * deliver-window step gets it (`retry.$`): here it becomes the Cause of the last attempt's
 * error, which ends the execution (no Catch).
 */
export function retryCount(): AslDefinition {
  return {
    StartAt: 'Counted',
    States: {
      Counted: throwing('Counted', {
        Parameters: { 'throw.$': '$.throw', 'why.$': "States.Format('attempt {}', $$.State.RetryCount)" },
        Retry: [{ ErrorEquals: ['Cutpoint.OutcomeUnknown'], IntervalSeconds: 1, MaxAttempts: 2, BackoffRate: 1 }],
        End: true,
      }),
    },
  };
}

/**
 * deliver-window's Catch list and Fail states: Delivery.NeedsRecovery caught to `$.stop`
 * and ended in StoppedForRecovery (static Error, CausePath); any other error caught by a
 * later States.ALL to `$.failure` and ended in Refused with the caught error's own name and
 * cause (ErrorPath/CausePath, as delivery-reconcile's Refused). A catcher listed before the
 * matching one, for another error, must be passed over.
 */
export function catchOrder(): AslDefinition {
  return {
    StartAt: 'Step',
    States: {
      Step: throwing('Step', {
        Catch: [
          { ErrorEquals: ['Delivery.CleanupUnproved'], ResultPath: '$.stop', Next: 'CleanupNotProved' },
          { ErrorEquals: ['Delivery.NeedsRecovery'], ResultPath: '$.stop', Next: 'StoppedForRecovery' },
          { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Refused' },
        ],
        End: true,
      }),
      CleanupNotProved: { Type: 'Fail', Error: 'Delivery.CleanupUnproved', CausePath: '$.stop.Cause' },
      StoppedForRecovery: { Type: 'Fail', Error: 'Delivery.NeedsRecovery', CausePath: '$.stop.Cause' },
      Refused: { Type: 'Fail', ErrorPath: '$.failure.Error', CausePath: '$.failure.Cause' },
    },
  };
}

/**
 * stream-maintain's Lanes: an inline Map over `$.lanes` whose ItemSelector takes the item
 * (`$$.Map.Item.Value`), its index and a field of the Map's own input, a ResultPath that
 * keeps the input, then the lanes as one JSON text (States.JsonToString) matched by a
 * Choice for `"status":"FAILED"` (the text must be compact), ending in a Fail state whose
 * Cause is that text, or in a Succeed with the lanes (OutputPath).
 */
export function inlineMap(): AslDefinition {
  return {
    StartAt: 'Lanes',
    States: {
      Lanes: {
        Type: 'Map',
        ItemsPath: '$.lanes',
        ItemSelector: {
          'stream.$': '$$.Map.Item.Value.stream',
          'index.$': '$$.Map.Item.Index',
          'tag.$': '$.tag',
        },
        MaxConcurrency: 4,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'INLINE' },
          StartAt: 'Lane',
          States: {
            Lane: {
              Type: 'Choice',
              Choices: [{ Variable: '$.stream', StringEquals: 'broken', Next: 'LaneFailed' }],
              Default: 'LaneMaintained',
            },
            LaneMaintained: {
              Type: 'Pass',
              Parameters: { 'stream.$': '$.stream', 'index.$': '$.index', 'tag.$': '$.tag', status: 'MAINTAINED' },
              End: true,
            },
            LaneFailed: {
              Type: 'Pass',
              Parameters: { 'stream.$': '$.stream', 'index.$': '$.index', 'tag.$': '$.tag', status: 'FAILED' },
              End: true,
            },
          },
        },
        ResultPath: '$.results',
        Next: 'FindFailed',
      },
      FindFailed: {
        Type: 'Pass',
        Parameters: { 'lanes.$': '$.results', 'summary.$': 'States.JsonToString($.results)' },
        Next: 'AnyFailed',
      },
      AnyFailed: {
        Type: 'Choice',
        Choices: [{ Variable: '$.summary', StringMatches: '*"status":"FAILED"*', Next: 'Incomplete' }],
        Default: 'Done',
      },
      Incomplete: { Type: 'Fail', Error: 'Stream.MaintenanceIncomplete', CausePath: '$.summary' },
      Done: { Type: 'Succeed', OutputPath: '$.lanes' },
    },
  };
}

/**
 * deliver-window's ExtractLoadParts: a Distributed Map reading its items from a JSON array
 * in S3 (ItemReader, `$.plan.bucket`/`$.plan.key`), an ItemSelector over the item and the
 * Map's input, MaxConcurrencyPath, ToleratedFailurePercentage 0, child executions that end
 * in a Fail state for a refused part, ResultWriter under `$.plan.resultsPrefix`, and the
 * Catch of the Map Run's errors. The flows drop the Map's output (ResultPath null); here it
 * is kept at `$.written` so a case can read what the state outputs with a ResultWriter.
 */
export function distributedMap(): AslDefinition {
  return {
    StartAt: 'Parts',
    States: {
      Parts: {
        Type: 'Map',
        ItemReader: {
          Resource: 'arn:aws:states:::s3:getObject',
          ReaderConfig: { InputType: 'JSON' },
          Parameters: { 'Bucket.$': '$.plan.bucket', 'Key.$': '$.plan.key' },
        },
        ItemSelector: { 'part.$': '$$.Map.Item.Value', 'fence.$': '$.fence' },
        MaxConcurrencyPath: '$.plan.maxConcurrency',
        ToleratedFailurePercentage: 0,
        ItemProcessor: {
          ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
          StartAt: 'Part',
          States: {
            Part: {
              Type: 'Choice',
              Choices: [{ Variable: '$.part.refuse', IsPresent: true, Next: 'PartRefused' }],
              Default: 'PartDone',
            },
            PartDone: { Type: 'Pass', Parameters: { 'n.$': '$.part.n', 'fence.$': '$.fence' }, End: true },
            PartRefused: { Type: 'Fail', Error: 'Delivery.StepRefused', Cause: 'the part step refused' },
          },
        },
        ResultWriter: {
          Resource: 'arn:aws:states:::s3:putObject',
          Parameters: { 'Bucket.$': '$.plan.bucket', 'Prefix.$': '$.plan.resultsPrefix' },
        },
        ResultPath: '$.written',
        Catch: [
          {
            ErrorEquals: [
              'States.ExceedToleratedFailureThreshold',
              'States.ItemReaderFailed',
              'States.ResultWriterFailed',
            ],
            ResultPath: '$.failure',
            Next: 'Refused',
          },
        ],
        End: true,
      },
      Refused: { Type: 'Pass', End: true },
    },
  };
}

/**
 * A state whose output is three copies of the input's `s`: over the payload limit when `s`
 * is over a third of it, though the input is not. (A Pass has no Catch; neither would help:
 * States.ALL does not match States.DataLimitExceeded.)
 */
export function growingState(): AslDefinition {
  return {
    StartAt: 'Grow',
    States: { Grow: { Type: 'Pass', Parameters: { 'a.$': '$.s', 'b.$': '$.s', 'c.$': '$.s' }, End: true } },
  };
}

/** A state machine that passes its input through: what an execution input over the limit is started on. */
export function passThrough(): AslDefinition {
  return { StartAt: 'Through', States: { Through: { Type: 'Pass', End: true } } };
}
