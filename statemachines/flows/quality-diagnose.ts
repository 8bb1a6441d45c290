import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';
import { READ_ONLY_ACTION } from '../spec/confirmed.js';

export default flow('quality-diagnose', {
  Comment:
    "`cutpoint quality diagnose <id> --manifest F#R --aws` (docs/publication.md) as a Standard flow. Input: {invocationId, manifestText, selector} — the manifest text and `file#route` as the operator supplies them now (compared with the seal, not required to match). Read-only: no confirmation, because nothing is written (the stores are seen through read-only ports, the Lambda's role has no write action), no row value and no source is read. Diagnosed ends with the diagnosis (cutpoint.quality-diagnosis.v1), as the local command prints it; a refusal (input, route, an operation that is not governed) ends in Refused with the use case's own error name. TimeoutSeconds (20 min) bounds the execution above its worst case: the one Task's retriers exhausted in turn (5 + 3 tries at its 75 s TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 870 s.",
  TimeoutSeconds: 1200,
  StartAt: 'Diagnose',
  States: {
    Diagnose: task({
      comment:
        'The diagnosis (src/quality/diagnose.ts, the same use case as the CLI\'s): each sealed digest of the capsule beside the one recomputed now from the manifest given, the target\'s system.columns/system.tables under the target name and DescribeTable; version continuity; the probes by name and columns; last_error_code. What cannot be recomputed is null with match "unknown", never true. Retrying it is safe: it writes nothing.',
      lambda: 'quality/diagnose',
      checksInput: 'quality-diagnose',
      parameters: READ_ONLY_ACTION,
      resultPath: '$.result',
      timeoutSeconds: 75,
      otherwise: 'Refused',
      next: 'Diagnosed',
    }),
    Diagnosed: {
      Type: 'Succeed',
      Comment: 'The diagnosis (cutpoint.quality-diagnosis.v1); nothing was written.',
      OutputPath: '$.result',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment:
        "A refusal (input, route, an operation not under governance, the journal): the step's own stable error name and message; nothing was written.",
    },
  },
});
