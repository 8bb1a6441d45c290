import { flow } from '../spec/flow.js';
import { recoveryStart } from '../spec/recovery-start.js';
import { stepRetry } from '../spec/retry.js';
import { onError, task } from '../spec/task.js';

export default flow('commit-generation', {
  Comment:
    "Generation commit (docs/stream-log.md, 'Authority and object generations'). Cut points: generation.task.put, generation.object.put, generation.object.copy, generation.record.put, generation.commit.cas, generation.abort.cas, generation.task.cleanup. Every step first reloads the exact identity it acts on, so a retry after a crash or a lost response reuses what is durable; an UNKNOWN commit goes to ResolveCommit, which reloads the exact winner. TimeoutSeconds (2 h) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff; CleanupTask included) is about 4,700 s, and the Commit -> ResolveCommit loop adds at most three more ResolveCommit (about 1,900 s); a timed-out execution is re-run by the recovery dispatcher like a failed one.",
  TimeoutSeconds: 7200,
  StartAt: 'IsRecovery',
  States: {
    ...recoveryStart({
      next: 'Init',
      comment:
        "The recovery dispatcher (an EventBridge rule -> functions/recovery/dispatch.ts) starts this flow again, once, under a name derived from the failed execution's, when an execution fails: {recoveryOf, originalInput}. Recovery re-runs the same durable task; every step reloads exact identity, so it finishes or proves the abort.",
      nestedComment: 'Only one automatic recovery per original execution: a failed recovery escalates to an operator.',
    }),
    RecoveryExhausted: {
      Type: 'Fail',
      Error: 'Generation.RecoveryExhausted',
      Cause:
        'The automatic recovery of this task failed too; inspect the task and re-run the flow with its original input.',
    },
    Init: {
      Type: 'Pass',
      Comment: 'Starts the resolve counter that bounds Commit -> ResolveCommit.',
      Result: {
        count: 0,
      },
      ResultPath: '$.resolveCount',
      Next: 'RegisterTask',
    },
    RegisterTask: task({
      comment: 'Cut point generation.task.put: make the task durable (put-if-absent, exact identity on retry).',
      lambda: 'generation/register-task',
      checksInput: 'commit-generation',
      resultPath: '$.task',
      timeoutSeconds: 45,
      otherwise: 'Rejected',
      next: 'WriteObject',
    }),
    WriteObject: task({
      comment:
        'Cut point generation.object.put: recompute the output from verified sources and PUT it under its identity key; a task with one source instead has the store copy it server-side (cut point generation.object.copy), verified by the commit before COMMITTED; a lost response is resolved by exact key, metadata and full SHA-256.',
      lambda: 'generation/write-object',
      parameters: {
        'root.$': '$.root',
        'generation.$': '$.generation',
        'taskId.$': '$.taskId',
      },
      resultPath: '$.object',
      timeoutSeconds: 90,
      catch: [
        onError('Abort', [
          'Generation.TaskClosed',
          'Cutpoint.IdentityConflict',
          'Cutpoint.ChecksumMismatch',
          'Cutpoint.ObjectMissing',
        ]),
      ],
      otherwise: 'Rejected',
      next: 'RecordPrepared',
    }),
    RecordPrepared: task({
      comment:
        'Cut point generation.record.put: a PREPARED record, invisible to readers, created only while the task is OPEN.',
      lambda: 'generation/record-prepared',
      parameters: {
        'root.$': '$.root',
        'generation.$': '$.generation',
        'taskId.$': '$.taskId',
        'objectKey.$': '$.object.objectKey',
        'sha256.$': '$.object.sha256',
        'size.$': '$.object.size',
      },
      resultPath: '$.prepared',
      timeoutSeconds: 45,
      catch: [
        onError('Abort', ['Generation.TaskClosed', 'Generation.SlotTaken', 'Cutpoint.IdentityConflict']),
        onError('Inconsistent', ['Generation.Inconsistent']),
      ],
      otherwise: 'Rejected',
      next: 'Commit',
    }),
    Commit: task({
      comment:
        'Cut point generation.commit.cas: one transaction moves the record PREPARED -> COMMITTED, the root head to this generation and the task to COMMITTED. A lost response goes to ResolveCommit.',
      lambda: 'generation/commit',
      parameters: {
        'root.$': '$.root',
        'generation.$': '$.generation',
        'taskId.$': '$.taskId',
      },
      resultPath: '$.outcome',
      timeoutSeconds: 45,
      retry: stepRetry({ without: ['Cutpoint.OutcomeUnknown'] }),
      catch: [
        onError('Rejected', ['Cutpoint.ValidationError', 'Generation.TaskMissing', 'Generation.NotPrepared']),
        onError('Abort', [
          'Generation.TaskClosed',
          'Generation.SlotTaken',
          'Cutpoint.ChecksumMismatch',
          'Cutpoint.ObjectMissing',
        ]),
        onError('Inconsistent', ['Generation.Inconsistent']),
      ],
      otherwise: 'CountResolve',
      next: 'CleanupTask',
    }),
    CountResolve: {
      Type: 'Pass',
      Comment:
        'Bounds the Commit -> ResolveCommit loop: an authority that keeps losing responses ends in Undecided, not a spin.',
      Parameters: {
        'count.$': 'States.MathAdd($.resolveCount.count, 1)',
      },
      ResultPath: '$.resolveCount',
      Next: 'TooManyResolves',
    },
    TooManyResolves: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.resolveCount.count',
          NumericGreaterThan: 3,
          Next: 'Undecided',
        },
      ],
      Default: 'ResolveCommit',
    },
    ResolveCommit: task({
      comment:
        'Probe after an UNKNOWN commit: reload the exact record, head and task. COMMITTED by this task is success (never a second generation).',
      lambda: 'generation/probe',
      parameters: {
        'root.$': '$.root',
        'generation.$': '$.generation',
        'taskId.$': '$.taskId',
      },
      resultPath: '$.resolution',
      timeoutSeconds: 45,
      catch: [onError('Inconsistent', ['Generation.Inconsistent'])],
      otherwise: 'Rejected',
      next: 'RouteResolution',
    }),
    RouteResolution: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.resolution.state',
          StringEquals: 'COMMITTED',
          Next: 'ResolvedCommitted',
        },
        {
          Variable: '$.resolution.state',
          StringEquals: 'PREPARED',
          Next: 'Commit',
        },
        {
          Variable: '$.resolution.state',
          StringEquals: 'ABORTED',
          Next: 'ResolvedAborted',
        },
      ],
      Default: 'ResolvedSuperseded',
    },
    ResolvedCommitted: {
      Type: 'Pass',
      Parameters: {
        'outcome.$': '$.resolution.outcome',
        'root.$': '$.resolution.root',
        'generation.$': '$.resolution.generation',
        'taskId.$': '$.resolution.taskId',
        'objectKey.$': '$.resolution.objectKey',
        'sha256.$': '$.resolution.sha256',
        'size.$': '$.resolution.size',
        'resolvedBy.$': '$.resolution.resolvedBy',
      },
      ResultPath: '$.outcome',
      Next: 'CleanupTask',
    },
    ResolvedAborted: {
      Type: 'Pass',
      Parameters: {
        'outcome.$': '$.resolution.outcome',
        'root.$': '$.resolution.root',
        'generation.$': '$.resolution.generation',
        'taskId.$': '$.resolution.taskId',
        'reason.$': '$.resolution.reason',
        'resolvedBy.$': '$.resolution.resolvedBy',
      },
      ResultPath: '$.outcome',
      Next: 'Aborted',
    },
    Abort: task({
      comment:
        'Cut point generation.abort.cas: prove the abort (task and PREPARED record to ABORTED). A generation that already committed is never aborted: the outcome is then COMMITTED.',
      lambda: 'generation/abort',
      parameters: {
        'root.$': '$.root',
        'generation.$': '$.generation',
        'taskId.$': '$.taskId',
        'reason.$': '$.failure.Error',
      },
      resultPath: '$.outcome',
      timeoutSeconds: 45,
      catch: [onError('Inconsistent', ['Generation.Inconsistent'])],
      otherwise: 'Rejected',
      next: 'RouteAbort',
    }),
    RouteAbort: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.outcome.outcome',
          StringEquals: 'COMMITTED',
          Next: 'CleanupTask',
        },
      ],
      Default: 'Aborted',
    },
    CleanupTask: task({
      comment:
        'Cut point generation.task.cleanup: task cleanup, task-first and plan-second. The task item (the workflow metadata) is deleted only after the committed generation (record COMMITTED by this task), its root head (at it or past it) and the output object (full SHA-256) verify, read as one snapshot; a failed check refuses and keeps the task. The commit stands either way: the outcome says cleanup.taskCleaned, and an error here never fails the flow.',
      lambda: 'generation/cleanup-task',
      parameters: {
        'root.$': '$.outcome.root',
        'generation.$': '$.outcome.generation',
        'taskId.$': '$.outcome.taskId',
      },
      resultPath: '$.outcome.cleanup',
      timeoutSeconds: 45,
      catch: [
        onError(
          'Committed',
          ['Cutpoint.ValidationError', 'Cutpoint.OutcomeUnknown', 'Cutpoint.EffectFailed', 'Cutpoint.WorkerCrashed'],
          '$.cleanupFailure',
        ),
        onError('Committed', ['States.ALL'], '$.cleanupFailure'),
      ],
      next: 'Committed',
    }),
    Committed: {
      Type: 'Succeed',
      OutputPath: '$.outcome',
    },
    Aborted: {
      Type: 'Succeed',
      OutputPath: '$.outcome',
    },
    Rejected: {
      Type: 'Fail',
      Error: 'Generation.Rejected',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
    Inconsistent: {
      Type: 'Fail',
      Error: 'Generation.Inconsistent',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
    Undecided: {
      Type: 'Fail',
      Error: 'Generation.Undecided',
      Cause:
        'The commit outcome stayed unknown after repeated exact reloads; re-run the flow with the same input to resolve it.',
    },
    ResolvedSuperseded: {
      Type: 'Pass',
      Comment: 'Another task holds the slot or the head is past it: abort this task.',
      Parameters: {
        Error: 'Generation.SlotTaken',
        'Cause.$': '$.resolution.reason',
      },
      ResultPath: '$.failure',
      Next: 'Abort',
    },
  },
});
