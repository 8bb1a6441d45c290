import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';

export default flow('stream-trim', {
  Comment:
    "Stream lane trim (docs/stream-log.md, 'The stream log': trim and GC): move the trim offset forward by CAS on the head's version; records below it stop being readable, their bytes stay until GC. A retry after a lost response reloads the current trim and treats the same target as success. Cut point: stream.trim.cas. TimeoutSeconds (15 min) bounds the execution above its worst case: its one Task with every retrier exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 625 s.",
  TimeoutSeconds: 900,
  StartAt: 'Trim',
  States: {
    Trim: task({
      comment:
        "CAS the head's trimOffset to the target (monotonic: the same target is success, a lower one Stream.TrimBackwards, past the committed end a ValidationError, past a cursor the stream's retention policy names Stream.TrimPastCursor). No fence: trim is an operator action. Input: {stream, partition, to}.",
      lambda: 'stream/trim',
      checksInput: 'stream-trim',
      resultPath: '$.trim',
      timeoutSeconds: 45,
      otherwise: 'Rejected',
      next: 'Done',
    }),
    Done: {
      Type: 'Succeed',
      OutputPath: '$.trim',
    },
    Rejected: {
      Type: 'Fail',
      Error: 'Stream.TrimRefused',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
  },
});
