import { flow } from '../spec/flow.js';
import { childStartRetry, STEP_TRANSIENT, stepRetry } from '../spec/retry.js';
import { onError, task, type AslState } from '../spec/task.js';

/** A child flow (stream-materialize, stream-compact) started on the Map item's lane; its `next` is kept, a failure ends the lane at LaneFailed. */
function runOnLane(o: {
  comment: string;
  machine: string;
  resultPath: string;
  timeoutSeconds: number;
  next: string;
}): AslState {
  return task({
    comment: o.comment,
    resource: 'arn:aws:states:::states:startExecution.sync:2',
    parameters: {
      StateMachineArn: `\${${o.machine}StateMachineArn}`,
      Input: { 'stream.$': '$.stream', 'partition.$': '$.partition' },
    },
    resultSelector: { 'execution.$': '$.ExecutionArn', 'next.$': '$.Output.next' },
    resultPath: o.resultPath,
    timeoutSeconds: o.timeoutSeconds,
    retry: childStartRetry(),
    catch: [onError('LaneFailed', ['States.TaskFailed', 'States.Timeout'])],
    next: o.next,
  });
}

export default flow('stream-maintain', {
  Comment:
    "Scheduled maintenance of configured stream lanes: for each lane, in order, generation 0 (stream-materialize), then compaction (stream-compact), then GC (stream-gc), each as a child execution of its own flow (the same state machines the CLI starts; no step of theirs is copied here), waiting for it (.sync:2). A lane whose child fails is recorded with the child's error and the other lanes go on; the execution then fails with Stream.MaintenanceIncomplete, its cause every lane's summary, and each child's own history says why. Every effect happens inside the children, at their cut points. Input: {lanes: [{stream, partition}]} (the EventBridge schedule's constant input). Output: one summary per lane (child execution ARNs, generation-0 and compaction marks, GC totals). TimeoutSeconds (24 h): one wave of lanes (4 at once) waits at most its children's own execution timeouts one after the other (stream-materialize, stream-compact, stream-gc: about 31,300 s with the start retries), so a day holds two worst-case waves (8 lanes) and many healthy ones; each child Task's TimeoutSeconds stays above its child's execution timeout.",
  TimeoutSeconds: 86400,
  StartAt: 'CheckInput',
  States: {
    CheckInput: task({
      comment:
        "First Task: the execution input ($$.Execution.Input) is checked against the flow's fields (docs/deploy.md 'Flow inputs'), as every flow's first Task checks its own; an unknown field, an input that is not an object or one over the cap is refused (Cutpoint.ValidationError) before any child starts. A Task of its own: this flow's other Tasks start child flows. It reads and writes nothing.",
      lambda: 'engine/check-flow-input',
      parameters: { flow: 'stream-maintain', 'executionInput.$': '$$.Execution.Input' },
      resultPath: null,
      timeoutSeconds: 15,
      retry: stepRetry({ without: STEP_TRANSIENT }),
      otherwise: 'Refused',
      next: 'CheckLanes',
    }),
    CheckLanes: {
      Type: 'Choice',
      Comment:
        'At most 8 lanes: the 24 h TimeoutSeconds holds two worst-case waves of 4; more would let a healthy run time out. A ninth lane is refused before any child starts.',
      Choices: [
        {
          Variable: '$.lanes[8]',
          IsPresent: true,
          Next: 'TooManyLanes',
        },
      ],
      Default: 'Lanes',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment: "The execution input refused by CheckInput, under the step's own error name; no child was started.",
    },
    TooManyLanes: {
      Type: 'Fail',
      Error: 'Stream.TooManyLanes',
      Cause: 'stream-maintain takes at most 8 lanes per execution; split them over schedules',
    },
    Lanes: {
      Type: 'Map',
      Comment: "Lanes run side by side (at most 4 at once); a lane's three children run one after the other.",
      ItemsPath: '$.lanes',
      ItemSelector: {
        'stream.$': '$$.Map.Item.Value.stream',
        'partition.$': '$$.Map.Item.Value.partition',
      },
      MaxConcurrency: 4,
      ItemProcessor: {
        ProcessorConfig: {
          Mode: 'INLINE',
        },
        StartAt: 'MaterializeLane',
        States: {
          MaterializeLane: runOnLane({
            comment: 'stream-materialize on the lane: generation 0 of its next committed ranges.',
            machine: 'StreamMaterialize',
            resultPath: '$.materialize',
            timeoutSeconds: 6300,
            next: 'CompactLane',
          }),
          CompactLane: runOnLane({
            comment: 'stream-compact on the lane: its next run of committed ranges into one generation.',
            machine: 'StreamCompact',
            resultPath: '$.compact',
            timeoutSeconds: 3900,
            next: 'StartCollect',
          }),
          StartCollect: {
            Type: 'Pass',
            Comment: 'GC starts a fresh run over the lane.',
            Parameters: {
              'stream.$': '$.stream',
              'partition.$': '$.partition',
            },
            ResultPath: '$.gcInput',
            Next: 'CollectLane',
          },
          CollectLane: task({
            comment:
              'stream-gc on the lane with its configured grace: trimmed objects, orphans past grace, and the copies compaction superseded. One GC execution is bounded (at most 200 pages); it ends {done: false, next} and the lane continues from next (MoreToCollect).',
            resource: 'arn:aws:states:::states:startExecution.sync:2',
            parameters: {
              StateMachineArn: '${StreamGcStateMachineArn}',
              'Input.$': '$.gcInput',
            },
            resultSelector: {
              'execution.$': '$.ExecutionArn',
              'output.$': '$.Output',
            },
            resultPath: '$.gc',
            timeoutSeconds: 43200,
            retry: childStartRetry(),
            catch: [onError('LaneFailed', ['States.TaskFailed', 'States.Timeout'])],
            next: 'MoreToCollect',
          }),
          MoreToCollect: {
            Type: 'Choice',
            Choices: [
              {
                Variable: '$.gc.output.done',
                BooleanEquals: false,
                Next: 'ContinueCollect',
              },
            ],
            Default: 'LaneMaintained',
          },
          ContinueCollect: {
            Type: 'Pass',
            Comment: 'The bounded GC execution ended with a cursor: the next one continues the same run from it.',
            Parameters: {
              'stream.$': '$.stream',
              'partition.$': '$.partition',
              'materialize.$': '$.materialize',
              'compact.$': '$.compact',
              'gcInput.$': '$.gc.output.next',
            },
            Next: 'CollectLane',
          },
          LaneMaintained: {
            Type: 'Pass',
            Parameters: {
              'stream.$': '$.stream',
              'partition.$': '$.partition',
              status: 'MAINTAINED',
              'materialize.$': '$.materialize',
              'compact.$': '$.compact',
              gc: {
                'execution.$': '$.gc.execution',
                'totals.$': '$.gc.output.totals',
              },
            },
            End: true,
          },
          LaneFailed: {
            Type: 'Pass',
            Comment:
              "The child's failure (its error and the cause naming its execution) stays with the lane; the other lanes go on.",
            Parameters: {
              'stream.$': '$.stream',
              'partition.$': '$.partition',
              status: 'FAILED',
              'failure.$': '$.failure',
            },
            End: true,
          },
        },
      },
      ResultPath: '$.results',
      Next: 'FindFailed',
    },
    FindFailed: {
      Type: 'Pass',
      Comment:
        'The lanes as one JSON text: a FAILED lane shows as its status (JSONPath has no filter a reference path accepts).',
      Parameters: {
        'lanes.$': '$.results',
        'summary.$': 'States.JsonToString($.results)',
      },
      Next: 'AnyFailed',
    },
    AnyFailed: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.summary',
          StringMatches: '*"status":"FAILED"*',
          Next: 'Incomplete',
        },
      ],
      Default: 'Done',
    },
    Incomplete: {
      Type: 'Fail',
      Error: 'Stream.MaintenanceIncomplete',
      CausePath: '$.summary',
      Comment:
        "One or more lanes' children failed: the cause is every lane's summary, a FAILED one with its child's error and execution.",
    },
    Done: {
      Type: 'Succeed',
      OutputPath: '$.lanes',
    },
  },
});
