import { flow } from '../spec/flow.js';
import { recoveryStates } from './recovery.js';

export default flow('delivery-retire', {
  Comment:
    "delivery `retire` as a Standard flow. Input: {invocationId, manifestText, selector, yes: true} — the exact manifest text and `file#route` the invocation sealed, and the confirmation the CLI's --yes gives. Drops exactly the recorded owned stage (lock, recheck object id and owner binding, drop, prove absence) — in EMPTY_STAGING with no recorded stage, the stage found under its derived name with this invocation's owner marker, journaled first — and releases custody as RETIRED; a publication receipt for the invocation, probed first and again under the publication lock inside the drop transaction, is contradicting evidence (INCIDENT_RETAINED, nothing dropped); an unprovable absence keeps state and custody. The checkpoint never moves. Repeating it after an outage is safe: every step reloads the journal. TimeoutSeconds (3 h) bounds the execution above its worst case: the longest path with every Task's retriers exhausted in turn (each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 8,200 s.",
  TimeoutSeconds: 10800,
  StartAt: 'Confirmed',
  States: recoveryStates({
    action: 'retire',
    doneComment:
      'RETIRED: the exact owned stage is gone and proved absent, custody released; the checkpoint did not move.',
  }),
});
