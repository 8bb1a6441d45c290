import { flow } from '../spec/flow.js';
import { recoveryStates } from './recovery.js';

export default flow('delivery-resume', {
  Comment:
    "delivery `resume` as a Standard flow. Input: {invocationId, manifestText, selector, yes: true} — the exact manifest text and `file#route` the invocation sealed, and the confirmation the CLI's --yes gives. Finishes a proved invocation (VERIFIED_EOF, PUBLISHED, SUCCEEDED) to CUSTODY_RELEASED from the journal and the staged chunks; from VERIFIED_EOF the exact receipt is probed before any target write, so a committed publication is never published twice. From a continuable PARTIAL_PROVED it first continues the unfinished parts (one per Resume Task, looping while the result says delivery.continue_more_parts), the only time it opens the source, and only for those parts' remaining ranges; otherwise it never opens the source. Repeating it after an outage is safe: every step reloads the journal. TimeoutSeconds (3 h) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 8,200 s.",
  TimeoutSeconds: 10800,
  StartAt: 'Confirmed',
  States: recoveryStates({
    action: 'resume',
    actionNote:
      "On a ClickHouse exchange route it runs publish-clickhouse's remaining steps: a PUBLISHED operation whose capsule is PREPARED or TARGET_PENDING is observed first by the bounded reader (this Lambda's own bundle as its child); a governance stop or refusal (Quality.TargetPending, Quality.Failed, Quality.Incomplete, ...) ends in Refused under its own name.",
    doneComment:
      'CUSTODY_RELEASED: the window is delivered exactly once, evidence persisted, checkpoint advanced, staging dropped.',
  }),
});
