import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';

export default flow('stream-compact', {
  Comment:
    "Stream compaction of one lane (docs/stream-log.md: compaction): the lane's next run of committed ranges (from max(compaction mark, trim), 2 to maxRanges, at most maxBytes of WAL) becomes one generation through the generation-commit mechanism, the index prefers it, the superseded copies go to GC after grace. One step: every effect reloads exact identity on a lost answer, so a retry or a re-run continues the same task and output and never allocates a second generation. Cut points: stream.compact.object, generation.task.put, generation.record.put, generation.commit.cas, generation.abort.cas, stream.compact.record, stream.compact.mark, stream.compact.cleanup. Input: {stream, partition, maxRanges?, maxBytes?}. Output: {stream, partition, compacted?, next, taskCleaned}. TimeoutSeconds (1 h) bounds the execution above its worst case: its one Task with every retrier exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 2,900 s.",
  TimeoutSeconds: 3600,
  StartAt: 'Compact',
  States: {
    Compact: task({
      comment:
        "Finish the previous run's task cleanup, plan the run (reusing a registered task's exact source set), register the task, write the one-batch output, PREPARED -> COMMITTED, compaction#<end> put-if-absent, the mark by CAS, then task cleanup after verifying all of it.",
      lambda: 'stream/compact-lane',
      checksInput: 'stream-compact',
      timeoutSeconds: 330,
      otherwise: 'Refused',
    }),
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment:
        "The step's own stable error name and message (bad knob or lane, a missing lane, a source WAL object missing or not its recorded identity, a generation that aborted: a re-run takes the next generation slot).",
    },
  },
});
