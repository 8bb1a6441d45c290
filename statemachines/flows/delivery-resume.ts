import { CARRIED_STATE, STOPPED_FOR_RECOVERY } from '../spec/delivery.js';
import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';
import { recoveryStates } from './recovery.js';
import { partsMap, WINDOW_FAILS } from './window.js';

export default flow('delivery-resume', {
  Comment:
    "delivery `resume` as a Standard flow. Input: {invocationId, manifestText, selector, yes: true} — the exact manifest text and `file#route` the invocation sealed, and the confirmation the CLI's --yes gives. Finishes a proved invocation (VERIFIED_EOF, PUBLISHED, SUCCEEDED) to CUSTODY_RELEASED from the journal and the staged chunks; from VERIFIED_EOF the exact receipt is probed before any target write, so a committed publication is never published twice. From a continuable PARTIAL_PROVED the Resume Task restarts the writer (WRITING_UNKNOWN) and hands the plan to ContinueParts, a Distributed Map running deliver-window's part Task over the plan (a part at EOF reads nothing; an unfinished one goes on after its last journaled chunk), then VerifyContinued proves EOF and Resume runs again from VERIFIED_EOF: only the part Tasks open the source, and only for the unfinished parts' remaining ranges. Repeating it after an outage is safe: every step reloads the journal. TimeoutSeconds (24 h, as deliver-window's) bounds the execution: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 18,000 s with one wave of ContinueParts (max_concurrency parts at once, about 7,600 s of it), so a day holds the rest and at least nine worst-case waves; a continue that needs more is resumed again (its parts at EOF read nothing).",
  TimeoutSeconds: 86400,
  StartAt: 'Confirmed',
  States: recoveryStates({
    action: 'resume',
    actionNote:
      "On a ClickHouse exchange route it runs publish-clickhouse's remaining steps: a PUBLISHED operation whose capsule is PREPARED or TARGET_PENDING is observed first by the bounded reader (this Lambda's own bundle as its child); a governance stop or refusal (Quality.TargetPending, Quality.Failed, Quality.Incomplete, ...) ends in Refused under its own name.",
    doneComment:
      'CUSTODY_RELEASED: the window is delivered exactly once, evidence persisted, checkpoint advanced, staging dropped.',
    continueOnMap: {
      next: 'CarryPlan',
      states: {
        CarryPlan: {
          Type: 'Pass',
          Comment:
            "Resume restarted the writer on a continuable PARTIAL_PROVED (WRITING_UNKNOWN, this recovery session's fence): its carried state and the plan become `$.delivery`, as PlanParts leaves them in deliver-window.",
          InputPath: '$.result.delivery',
          ResultPath: '$.delivery',
          Next: 'ContinueParts',
        },
        ContinueParts: partsMap({
          comment:
            "deliver-window's part Task over the journaled plan, at most the route's max_concurrency at once: a part at EOF claims, finds EOF and reads nothing; an unfinished one goes on after its last journaled chunk (the source read only for its remaining range). Cut points: delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt.",
          refused: 'Refused',
          next: 'VerifyContinued',
        }),
        VerifyContinued: task({
          comment:
            "deliver-window's VerifyEof: every part at EOF and the stage holding exactly the receipts' rows -> VERIFIED_EOF, and Resume runs again from there (publication, evidence, checkpoint, cleanup under a new recovery session); otherwise PARTIAL_PROVED and the flow stops for reconcile.",
          lambda: 'delivery/verify-eof',
          parameters: CARRIED_STATE,
          resultPath: '$.delivery',
          timeoutSeconds: 315,
          catch: [STOPPED_FOR_RECOVERY],
          otherwise: 'Refused',
          next: 'Resume',
        }),
        StoppedForRecovery: WINDOW_FAILS.StoppedForRecovery!,
      },
    },
  }),
});
