import { CARRIED_STATE, STOPPED_FOR_RECOVERY } from '../spec/delivery.js';
import { flow } from '../spec/flow.js';
import { onError, task } from '../spec/task.js';
import { evidenceAndCheckpoint, WINDOW_FAILS, windowStart } from './window.js';

export default flow('deliver-window', {
  Comment:
    "Deliver one bounded window ClickHouse -> target, one Task per step in DELIVERY_STEPS order: begin, create-staging, plan-parts, then a Distributed Map running extract-load-part once per part of the window, verify-eof, quality, publish, evidence, checkpoint, cleanup (which releases custody with its proof). Parts run as child executions of the Map (a few per window, sized by part_rows); chunks are batched inside a part, so transitions grow with parts, never with rows or chunks. Every step acts only from its journaled state: the state the previous step left is carried in `$.delivery.known` (the invocation and custody records, versions included) and every write is conditioned on it, so a step reads the journal only when a write conflicts, when it refused on the carried state, or on a retry (`retry` = `$$.State.RetryCount`). A step that leaves the journal in a state only reconcile resolves throws Delivery.NeedsRecovery (an unproved cleanup Delivery.CleanupUnproved) and the Catch ends the flow there: no Choice after each Task, so a window costs 10 transitions plus one per part. Cut points (all in `cutpoint faults list`): delivery.custody.acquire, delivery.target.create-staging, delivery.staging.record, delivery.plan.put, delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt, delivery.publish.commit, delivery.evidence.put, delivery.checkpoint.advance, delivery.target.drop-staging, delivery.custody.release, and delivery.journal.transition for every other journal write. TimeoutSeconds (24 h) bounds the execution: the fixed steps' worst case (every retrier exhausted in turn, each try at the Task's TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 13,500 s, one wave of parts (max_concurrency at once) about 7,600 s more, so a day holds the fixed steps and at least nine worst-case waves; a window that needs more (parts / max_concurrency) is split by raising part_rows or max_concurrency. A timed-out execution is reconciled by the recovery dispatcher like a failed one.",
  TimeoutSeconds: 86400,
  StartAt: 'Begin',
  States: {
    ...windowStart({
      flow: 'deliver-window',
      beginComment:
        "Step 1: custody of the target by CAS and the sealed authority (window resolved once, here), one transaction, before any source I/O. Another invocation holding the target is Delivery.CustodyHeld (nothing written). Cut point: delivery.custody.acquire. Input: the execution input {manifestText, selector} with optional invocationId and session (defaults: derived from the execution id and name, which the Parameters take from the context object). The target's identity is observed, the work root derived from the bucket. The flow's name travels in the Task parameters (`flow`), never in the execution input: a ClickHouse route (`mode: exchange`) is refused here (Cutpoint.ValidationError, delivery.exchange_route_refused) before custody is taken; publish-clickhouse publishes it.",
      stops: [STOPPED_FOR_RECOVERY],
      afterVerify: 'Quality',
    }),
    Quality: task({
      comment:
        "Step 6: the route's quality rules on the stage (read-only probes); a failed rule moves the journal to REEXTRACT_REQUIRED (the stage can never be published: retire it, then run a new invocation) and the flow stops.",
      lambda: 'delivery/quality',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [STOPPED_FOR_RECOVERY],
      otherwise: 'StepRefused',
      next: 'Publish',
    }),
    Publish: task({
      comment:
        'Step 7: one target transaction swaps the window and writes the receipt row. A lost COMMIT response is journaled as PUBLICATION_UNKNOWN (never retried blindly) and the flow stops; reconcile resolves it from the receipt. Cut point: delivery.publish.commit.',
      lambda: 'delivery/publish',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [STOPPED_FOR_RECOVERY],
      otherwise: 'StepRefused',
      next: 'Evidence',
    }),
    ...evidenceAndCheckpoint([STOPPED_FOR_RECOVERY]),
    Cleanup: task({
      comment:
        'Step 10, the last: drop the owned stage, prove its absence and release custody with the proof (SUCCEEDED -> CUSTODY_RELEASED) in one transaction. ABSENCE_UNPROVABLE stops the flow with custody held (Delivery.CleanupUnproved); a name holding another object is contradicting evidence (INCIDENT_RETAINED). Cut points: delivery.target.drop-staging, then delivery.custody.release. The flow ends here: its output is the projection (invocationId, fence, targetId, state CUSTODY_RELEASED); anything short of CUSTODY_RELEASED is Delivery.NeedsRecovery.',
      lambda: 'delivery/cleanup',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      outputPath: '$.delivery',
      timeoutSeconds: 75,
      catch: [STOPPED_FOR_RECOVERY, onError('CleanupNotProved', ['Delivery.CleanupUnproved'], '$.stop')],
      otherwise: 'StepRefused',
    }),
    ...WINDOW_FAILS,
  },
});
