import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';

export default flow('stream-materialize', {
  Comment:
    "Generation 0 of one lane, off the append's acknowledged path (docs/stream-log.md, 'The stream log': generation 0): up to `max` committed ranges from the lane's generation-0 mark, each through the generation-commit mechanism (deterministic task: root from the range, task id from the attempt, the WAL object as the only source), linked into its index entry, then the mark by CAS. A range that fails stops the run there and the execution fails with Stream.Gen0Incomplete naming the range (its failed-executions alarm reaches an operator); the next run resumes at it. A range whose generation 0 is proven ABORTED (its WAL object did not verify) is final for its deterministic task: the run passes it (the mark moves past; its WAL object stays its copy until a compaction covers it) and the execution fails with Stream.Gen0Incomplete naming it, once. Readers never wait for generation 0. Cut points: generation.task.put, generation.object.copy (the one source copied server-side), generation.record.put, generation.commit.cas, generation.abort.cas, stream.append.gen0. Input: {stream, partition, max?}. Output: {stream, partition, materialized, next, aborted?}. TimeoutSeconds (100 min) bounds the execution above its worst case: its one Task with every retrier exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 5,300 s.",
  TimeoutSeconds: 6000,
  StartAt: 'Materialize',
  States: {
    Materialize: task({
      comment:
        "One batch: every range's task and output are derived from its identity, so a retry or a re-run reuses them and never writes a second generation 0.",
      lambda: 'stream/materialize-batch',
      checksInput: 'stream-materialize',
      timeoutSeconds: 630,
      otherwise: 'Refused',
      next: 'RangeFailed',
    }),
    RangeFailed: {
      Type: 'Choice',
      Comment:
        "A range whose generation 0 could not be made stopped the run (`failed`): the execution fails with Stream.Gen0Incomplete naming it, so the flow's failed-executions alarm reaches an operator; the mark stays at the range and the next run resumes there. Ranges proven ABORTED (`aborted`) were passed: the execution fails naming the first, once, and the next run goes on past them. Otherwise the run succeeded.",
      Choices: [
        {
          Variable: '$.failed',
          IsPresent: true,
          Next: 'DescribeFailure',
        },
        {
          Variable: '$.aborted',
          IsPresent: true,
          Next: 'DescribeAborted',
        },
      ],
      Default: 'Materialized',
    },
    DescribeAborted: {
      Type: 'Pass',
      Parameters: {
        'cause.$':
          "States.Format('generation 0 of lane {} partition {}: the range from offset {} to {} is ABORTED ({}), and {} range(s) in all: passed, the mark is at {}; its WAL object is its only copy until a compaction covers it: restore its exact bytes if it does not verify (docs/runbook/stream/QUARANTINED.md)', $.stream, $.partition, $.aborted[0].start, $.aborted[0].end, $.aborted[0].reason, States.ArrayLength($.aborted), $.next)",
      },
      Next: 'Incomplete',
    },
    DescribeFailure: {
      Type: 'Pass',
      Parameters: {
        'cause.$':
          "States.Format('generation 0 of lane {} partition {}: the range from offset {} to {} failed with {}; the ranges before it are materialized and the next run resumes at it', $.stream, $.partition, $.failed.start, $.failed.end, $.failed.error)",
      },
      Next: 'Incomplete',
    },
    Incomplete: {
      Type: 'Fail',
      Error: 'Stream.Gen0Incomplete',
      CausePath: '$.cause',
      Comment: 'Designed: the run did what it could and names the range it stopped at.',
    },
    Materialized: {
      Type: 'Succeed',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment: "The step's own stable error name and message (a bad lane or max); nothing was written.",
    },
  },
});
