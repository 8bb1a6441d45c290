import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';
import { READ_ONLY_ACTION } from '../spec/confirmed.js';

export default flow('quality-replay', {
  Comment:
    "`cutpoint quality replay <id> --manifest F#R --aws` (docs/publication.md) as a Standard flow. Input: {invocationId, manifestText, selector} — the exact manifest text and `file#route` the operation sealed. A COMPLETE operation's governance replayed by the same invocation and configuration, read-only: no confirmation, because nothing is written (the stores are seen through read-only ports, the Lambda's role has no write action), the source is never read, nothing is dispatched. Replayed ends with the receipt (cutpoint.quality-replay-receipt.v1), as the local command prints it; every refusal ends in Refused with the use case's own error name. TimeoutSeconds (20 min) bounds the execution above its worst case: the one Task's retriers exhausted in turn (5 + 3 tries at its 75 s TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 870 s.",
  TimeoutSeconds: 1200,
  StartAt: 'Replay',
  States: {
    Replay: task({
      comment:
        "The replay (src/quality/replay.ts, the same use case as the CLI's): the seal recomputed with the target's identity, the capsule COMPLETE with its guard released, prepared.json and completion.json verified, version continuity, the authority binding, the current generation by the target's system.tables, the replay window; then the receipt. Missing, malformed or unreadable evidence is refused (Quality.EvidenceInvalid), never a pass. Retrying it is safe: it writes nothing. Cut points: quality.replay.read, publication.observe.",
      lambda: 'quality/replay',
      checksInput: 'quality-replay',
      parameters: READ_ONLY_ACTION,
      resultPath: '$.result',
      timeoutSeconds: 75,
      otherwise: 'Refused',
      next: 'Replayed',
    }),
    Replayed: {
      Type: 'Succeed',
      Comment: 'The receipt (cutpoint.quality-replay-receipt.v1) with the original results; nothing was written.',
      OutputPath: '$.result',
    },
    Refused: {
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
      Comment:
        "A refusal (input, route, seal, capsule state, continuity, evidence, generation, replay window): the step's own stable error name and message; nothing was written.",
    },
  },
});
