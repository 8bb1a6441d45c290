import { flow } from '../spec/flow.js';
import { STREAM_REJECTED } from '../spec/stream.js';
import { task } from '../spec/task.js';

export default flow('stream-takeover', {
  Comment:
    "Stream lane takeover (docs/rules.md#writer-takeover): a new owner session with a higher epoch, by CAS on the head. A stale writer may finish its PUT, but its head CAS names the old fence and fails. Cut point: stream.takeover.head-cas. TimeoutSeconds (15 min) bounds the execution above its worst case: its one Task with every retrier exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 625 s.",
  TimeoutSeconds: 900,
  StartAt: 'Takeover',
  States: {
    Takeover: task({
      comment:
        "CAS the head's fence to {owner, session, epoch + 1}; a lost response is resolved by reloading the exact session id. Input: {stream, partition, owner, session}, all required (the caller mints the session id and keeps it; the same id makes a re-run idempotent). Output: {stream, partition, owner, epoch, committedEnd, suspendedBy?}, never the session id (a fencing secret).",
      lambda: 'stream/takeover',
      checksInput: 'stream-takeover',
      resultPath: '$.takeover',
      timeoutSeconds: 45,
      otherwise: 'Rejected',
      next: 'Done',
    }),
    Done: {
      Type: 'Succeed',
      OutputPath: '$.takeover',
    },
    Rejected: STREAM_REJECTED,
  },
});
