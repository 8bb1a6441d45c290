import { flow } from '../spec/flow.js';
import { STREAM_REJECTED } from '../spec/stream.js';
import { expressRetry } from '../spec/retry.js';
import { onError, task } from '../spec/task.js';

/** The attempt every step after WriteWal acts for, as the execution input names it. */
const ATTEMPT = {
  'stream.$': '$.stream',
  'partition.$': '$.partition',
  'attemptId.$': '$.attemptId',
  'session.$': '$.session',
};

/** Refusals of the attempt itself (bad input, no lane, another batch under its id, an unknown session): Rejected, nothing written. */
const ATTEMPT_REFUSED = [
  'Cutpoint.ValidationError',
  'Stream.LaneMissing',
  'Cutpoint.IdentityConflict',
  'Stream.AttemptIdentityConflict',
  'Stream.UnknownSession',
];

export default flow('stream-append', {
  Comment:
    "Stream append (docs/stream-log.md, 'The stream log': appends), an Express workflow: one WAL PUT, the attempt's own suspension of the lane and one fenced head CAS (two item writes, lifting that suspension) per batch; generation 0 and the index are derived off the acknowledged path. Cut points: stream.append.wal, stream.append.head-cas, stream.append.suspend, stream.append.retire. Ends with the attempt's one interpretation: KNOWN_COMMITTED, KNOWN_NOT_COMMITTED or MAY_HAVE_COMMITTED (lane suspended; run stream-resolve-append with the same attempt). A time-marked attempt outside the lane's attempt window is Rejected by whichever step sees it first, before that step writes anything (Stream.AttemptExpired, Stream.AttemptTimeFuture; docs/stream-log.md, 'The stream log': the attempt window). TimeoutSeconds stays above the worst case of any path (each Task: 4 tries of 20 s, each above its Lambda's 15 s, plus backoff; at most three Tasks in a row, test/unit/stream-append-flow.test.ts), so the 5-minute Express cap never ends an execution between a head CAS and the step that interprets it. Lambda's service errors and throttles are retried by each Task's one retrier (one counter, jittered, MaxDelaySeconds): separate retriers with the longer throttle budget of the STANDARD flows would put the worst path past the 5-minute Express cap.",
  StartAt: 'WriteWal',
  TimeoutSeconds: 285,
  States: {
    WriteWal: task({
      comment:
        "Before primary WAL I/O: refusals here are KNOWN_NOT_COMMITTED (RetireAttempt spends the attempt) or Rejected (nothing written). The WAL object's metadata binds the batch to its start offset and fence epoch; a retry reads the exact key back and reuses that binding. The result replaces the state, so record bytes go no further. A WAL that never became durable needs no interpretation: no head CAS was issued; the execution fails and the same attempt is re-run. Then the attempt suspends the lane for itself (cut point stream.append.suspend: CAS on the head version read and the owner's fence), so its head CAS never goes out on a lane it does not hold: an execution that ends after an unknown head outcome leaves the lane suspended by this attempt.",
      lambda: 'stream/write-wal',
      checksInput: 'stream-append',
      resultPath: '$.written',
      outputPath: '$.written',
      timeoutSeconds: 20,
      retry: expressRetry(),
      catch: [onError('RetireAttempt', ['Stream.LaneSuspended', 'Stream.Fenced', 'Stream.AttemptAborted'])],
      otherwise: 'Rejected',
      next: 'CommitHead',
    }),
    CommitHead: task({
      comment:
        "The head CAS: one transaction of the head update (version + owner/session/epoch; it lifts the attempt's own suspension) and commit#<end> (put-if-absent). A re-decision (no carried version) suspends the lane for the attempt first. Unknown: reads commit#<end>, re-issues the same CAS, then leaves as Cutpoint.OutcomeUnknown. Unknown, or a worker that kept dying around it → SuspendLane. Refused for good → RetireAttempt.",
      lambda: 'stream/commit-head',
      parameters: {
        ...ATTEMPT,
        'wal.$': '$.wal',
        'expected.$': '$.expected',
      },
      resultPath: '$.outcome',
      timeoutSeconds: 20,
      retry: expressRetry({ without: ['Cutpoint.OutcomeUnknown'] }),
      catch: [
        onError('RetireAttempt', ['Stream.Fenced', 'Stream.AttemptAborted']),
        onError('SuspendLane', [
          'Cutpoint.WorkerCrashed',
          'Cutpoint.EffectFailed',
          'Lambda.ServiceException',
          'Lambda.AWSLambdaException',
          'Lambda.SdkClientException',
          'Lambda.TooManyRequestsException',
          'Lambda.Unknown',
          'Sandbox.Timedout',
          'States.Timeout',
        ]),
        onError('Rejected', ATTEMPT_REFUSED),
        onError('SuspendLane', ['Cutpoint.OutcomeUnknown', 'Stream.LaneSuspended']),
      ],
      otherwise: 'Rejected',
      next: 'Done',
    }),
    SuspendLane: task({
      comment:
        "Reload the exact evidence (head, spent marker, commit#<end>): committed is KNOWN_COMMITTED; no longer its turn spends it (KNOWN_NOT_COMMITTED); otherwise suspend the lane by CAS on the head version — turning the claim the attempt took before its CAS into a suspension only a resolve lifts — which also makes the lost CAS unable to apply (MAY_HAVE_COMMITTED). If this step cannot finish, the execution fails and the attempt id stays the recovery handle (stream-resolve-append); the attempt's claim keeps the lane suspended by it meanwhile.",
      lambda: 'stream/suspend-lane',
      parameters: {
        ...ATTEMPT,
        'wal.$': '$.wal',
      },
      resultPath: '$.outcome',
      timeoutSeconds: 20,
      retry: expressRetry(),
      catch: [onError('Rejected', ATTEMPT_REFUSED)],
      otherwise: 'Rejected',
      next: 'Done',
    }),
    RetireAttempt: task({
      comment:
        'Refused for good (fenced, spent, offset taken, lane suspended by another attempt): spend the attempt (spent marker + head version bump in one transaction) and lift a suspension it held. KNOWN_NOT_COMMITTED (KNOWN_COMMITTED if its CAS won first).',
      lambda: 'stream/retire-attempt',
      parameters: {
        ...ATTEMPT,
        'reason.$': '$.failure.Error',
      },
      resultPath: '$.outcome',
      timeoutSeconds: 20,
      retry: expressRetry(),
      catch: [onError('Rejected', ATTEMPT_REFUSED)],
      otherwise: 'Rejected',
      next: 'Done',
    }),
    Done: {
      Type: 'Succeed',
      OutputPath: '$.outcome',
    },
    Rejected: STREAM_REJECTED,
  },
});
