import { flow } from '../spec/flow.js';
import { STREAM_REJECTED } from '../spec/stream.js';
import { recoveryStart } from '../spec/recovery-start.js';
import { onError, task } from '../spec/task.js';

export default flow('stream-resolve-append', {
  Comment:
    "Resolve a MAY_HAVE_COMMITTED append (docs/stream-log.md, 'The stream log'): the original attempt is the recovery handle. Its WAL objects (metadata: attempt, SHA-256, fence epoch, bound start) and the commit record at each one's bound end prove it committed; otherwise it is spent (spent marker + head version bump in one transaction, which no delayed head CAS can pass) to prove it not committed; then the row's repairs (index, generation 0) and the lane's suspension is lifted. Evidence that contradicts itself keeps the lane suspended. An attempt past the lane's attempt window is never spent: Resolve reports the evidence still standing, lifts a suspension it holds once the window and 15 minutes have passed, or is Rejected (Stream.AttemptExpired). With writerId instead: every attempt of a LaneWriter that died holding the lane, then its writer slot released (docs/stream-log.md, 'The stream log'). Cut points: stream.resolve.fence, stream.resolve.unsuspend, stream.append.writer-release, stream.append.index, stream.append.gen0, and generation 0's generation-commit cut points (generation.task.put, generation.object.copy, generation.record.put, generation.commit.cas, generation.abort.cas). TimeoutSeconds (1 h) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 2,250 s; a timed-out execution is re-run by the recovery dispatcher like a failed one.",
  TimeoutSeconds: 3600,
  StartAt: 'IsRecovery',
  States: {
    ...recoveryStart({
      next: 'ResolveWhat',
      comment:
        "The recovery dispatcher (an EventBridge rule -> functions/recovery/dispatch.ts) re-runs a failed resolve once, under a name derived from the failed execution's, with {recoveryOf, originalInput}.",
    }),
    ResolveWhat: {
      Type: 'Choice',
      Comment:
        "writerId: every attempt of a LaneWriter that died holding the lane's writer slot (cutpoint stream resolve --writer); otherwise the one attempt.",
      Choices: [{ Variable: '$.writerId', IsPresent: true, Next: 'ResolveWriter' }],
      Default: 'Resolve',
    },
    ResolveWriter: task({
      comment:
        "Mark the writer slot as being resolved (stream.resolve.fence: no CAS of the writer applies after it), list the writer's WAL objects once, prove each attempt committed or spend it, lift a suspension one of them holds, then release the slot (stream.append.writer-release). The whole input goes to the step, which refuses an attemptId beside the writerId.",
      lambda: 'stream/resolve-append',
      checksInput: 'stream-resolve-append',
      resultPath: '$.outcome',
      timeoutSeconds: 45,
      catch: [onError('Unresolvable', ['Stream.ResolveInconsistent'])],
      otherwise: 'Rejected',
      next: 'Done',
    }),
    Resolve: task({
      comment:
        'Prove committed (commit#<end> names the attempt and SHA-256) or proven-not-committed (spend the attempt); lift the suspension.',
      lambda: 'stream/resolve-append',
      checksInput: 'stream-resolve-append',
      parameters: {
        input: {
          'stream.$': '$.stream',
          'partition.$': '$.partition',
          'attemptId.$': '$.attemptId',
        },
      },
      resultPath: '$.outcome',
      timeoutSeconds: 45,
      catch: [onError('Unresolvable', ['Stream.ResolveInconsistent'])],
      otherwise: 'Rejected',
      next: 'RouteResolved',
    }),
    RouteResolved: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.outcome.status',
          StringEquals: 'KNOWN_COMMITTED',
          Next: 'RepairIndex',
        },
      ],
      Default: 'Done',
    },
    RepairIndex: task({
      comment: 'KNOWN_COMMITTED: repair the index from the commit evidence.',
      lambda: 'stream/write-index',
      parameters: {
        'stream.$': '$.stream',
        'partition.$': '$.partition',
        'attemptId.$': '$.attemptId',
      },
      resultPath: null,
      timeoutSeconds: 45,
      otherwise: 'Unresolvable',
      next: 'RepairGen0',
    }),
    RepairGen0: task({
      comment: 'KNOWN_COMMITTED: reuse the deterministic generation-0 task.',
      lambda: 'stream/materialize-gen0',
      parameters: {
        'stream.$': '$.stream',
        'partition.$': '$.partition',
        'attemptId.$': '$.attemptId',
      },
      resultPath: '$.gen0',
      timeoutSeconds: 90,
      otherwise: 'Unresolvable',
      next: 'Done',
    }),
    Done: {
      Type: 'Succeed',
      OutputPath: '$.outcome',
    },
    Rejected: STREAM_REJECTED,
    Unresolvable: {
      Type: 'Fail',
      Error: 'Stream.Unresolvable',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
    RecoveryExhausted: {
      Type: 'Fail',
      Error: 'Stream.RecoveryExhausted',
      Cause: 'The automatic recovery of this resolve failed too; an operator must act.',
    },
  },
});
