import { flow } from '../spec/flow.js';
import { CARRIED_STATE, STOPPED_FOR_RECOVERY } from '../spec/delivery.js';
import { onError, task } from '../spec/task.js';

export default flow('deliver-window', {
  Comment: 'Deliver one bounded window ClickHouse -> target (seed 004), one Task per step in DELIVERY_STEPS order: begin, create-staging, plan-parts, then a Distributed Map running extract-load-part once per part of the window, verify-eof, quality, publish, evidence, checkpoint, cleanup (which releases custody with its proof). Parts run as child executions of the Map (a few per window, sized by part_rows); chunks are batched inside a part, so transitions grow with parts, never with rows or chunks. Every step acts only from its journaled state: the state the previous step left is carried in `$.delivery.known` (the invocation and custody records, versions included) and every write is conditioned on it, so a step reads the journal only when a write conflicts, when it refused on the carried state, or on a retry (`retry` = `$$.State.RetryCount`). A step that leaves the journal in a state only reconcile resolves throws Delivery.NeedsRecovery (an unproved cleanup Delivery.CleanupUnproved) and the Catch ends the flow there: no Choice after each Task, so a window costs 10 transitions plus one per part. Cut points (all in `cutpoint faults list`): delivery.custody.acquire, delivery.target.create-staging, delivery.staging.record, delivery.plan.put, delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt, delivery.publish.commit, delivery.evidence.put, delivery.checkpoint.advance, delivery.target.drop-staging, delivery.custody.release, and delivery.journal.transition for every other journal write. TimeoutSeconds (24 h) bounds the execution: the fixed steps\' worst case (every retrier exhausted in turn, each try at the Task\'s TimeoutSeconds, plus the longest backoffs; throttled tries cost only their backoff) is about 13,500 s, one wave of parts (max_concurrency at once) about 7,600 s more, so a day holds the fixed steps and at least nine worst-case waves; a window that needs more (parts / max_concurrency) is split by raising part_rows or max_concurrency. A timed-out execution is reconciled by the recovery dispatcher like a failed one.',
  TimeoutSeconds: 86400,
  StartAt: 'Begin',
  States: {
    Begin: task({
      comment: 'Step 1: custody of the target by CAS and the sealed authority (window resolved once, here), one transaction, before any source I/O. Another invocation holding the target is Delivery.CustodyHeld (nothing written). Cut point: delivery.custody.acquire. Input: the execution input {manifestText, selector} with optional invocationId and session (defaults: derived from the execution id and name, which the Parameters take from the context object). The target\'s identity is observed, the work root derived from the bucket. The flow\'s name travels in the Task parameters (`flow`), never in the execution input: a ClickHouse route (`mode: exchange`) is refused here (Cutpoint.ValidationError, delivery.exchange_route_refused) before custody is taken; publish-clickhouse publishes it.',
      lambda: 'DeliveryBegin',
      parameters: {
        'input.$': '$',
        execution: {
          'id.$': '$$.Execution.Id',
          'name.$': '$$.Execution.Name',
        },
        flow: 'deliver-window',
      },
      resultPath: '$.delivery',
      timeoutSeconds: 45,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'CreateStaging',
    }),
    CreateStaging: task({
      comment: 'Step 2: the owned stage (DDL on the target, owner binding = digest of the sealed authority), then its record in the journal. Cut points: delivery.target.create-staging, then delivery.staging.record.',
      lambda: 'DeliveryCreateStaging',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 75,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'PlanParts',
    }),
    PlanParts: task({
      comment: 'Step 3: split the sealed window into parts (one count query per time bucket, parts of about the route\'s part_rows rows), write the plan as an immutable object (a JSON array of part descriptors: the Map\'s items) and journal EMPTY_STAGING -> WRITING_UNKNOWN with its key and SHA-256. A re-run returns the journaled plan. Cut points: delivery.plan.put, delivery.journal.transition.',
      lambda: 'DeliveryPlanParts',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 135,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'ExtractLoadParts',
    }),
    ExtractLoadParts: {
      Type: 'Map',
      Comment: 'Step 4: one child execution per part of the plan (ItemReader: the plan object), at most the route\'s max_concurrency at once. Each child claims its part (its head, checked against the carried invocation version and the custody fence in one transaction: a part started before is found and resumed), extracts it chunk by chunk, writes each chunk as an immutable object, loads it into the owned stage and journals the receipts in batches of 16 with the part\'s head (a retry resumes after the part\'s last journaled chunk). Results go to S3 (ResultWriter), never into the state. Cut points: delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt.',
      ItemReader: {
        Resource: 'arn:aws:states:::s3:getObject',
        ReaderConfig: {
          InputType: 'JSON',
        },
        Parameters: {
          'Bucket.$': '$.delivery.plan.bucket',
          'Key.$': '$.delivery.plan.key',
        },
      },
      ItemSelector: {
        'invocationId.$': '$.delivery.invocationId',
        'fence.$': '$.delivery.fence',
        'manifestText.$': '$.manifestText',
        'selector.$': '$.selector',
        'part.$': '$$.Map.Item.Value',
        'known.$': '$.delivery.known',
      },
      MaxConcurrencyPath: '$.delivery.plan.maxConcurrency',
      ToleratedFailurePercentage: 0,
      ItemProcessor: {
        ProcessorConfig: {
          Mode: 'DISTRIBUTED',
          ExecutionType: 'STANDARD',
        },
        StartAt: 'ExtractLoadPart',
        States: {
          ExtractLoadPart: task({
            comment: 'One part: extract, write, load, journal; resumable. Memory: one chunk.',
            lambda: 'DeliveryExtractLoadPart',
            parameters: {
              'invocationId.$': '$.invocationId',
              'fence.$': '$.fence',
              'manifestText.$': '$.manifestText',
              'selector.$': '$.selector',
              'part.$': '$.part',
              'known.$': '$.known',
              'retry.$': '$$.State.RetryCount',
            },
            timeoutSeconds: 915,
            otherwise: 'PartRefused',
          }),
          PartRefused: {
            Type: 'Fail',
            Error: 'Delivery.StepRefused',
            CausePath: '$.failure.Cause',
            Comment: 'The part step refused (validation, journal, fence, custody, target, source or object error): the child fails, so the Map Run exceeds its zero tolerance and the flow ends in StepRefused; the part head keeps its last journaled batch for reconcile.',
          },
        },
      },
      ResultWriter: {
        Resource: 'arn:aws:states:::s3:putObject',
        Parameters: {
          'Bucket.$': '$.delivery.plan.bucket',
          'Prefix.$': '$.delivery.plan.resultsPrefix',
        },
      },
      ResultPath: null,
      Catch: [
        {
          ErrorEquals: [
            'States.ExceedToleratedFailureThreshold',
            'States.ItemReaderFailed',
            'States.ResultWriterFailed',
          ],
          ResultPath: '$.failure',
          Next: 'StepRefused',
        },
      ],
      Next: 'VerifyEof',
    },
    VerifyEof: task({
      comment: 'Step 5: every part of the plan at EOF, its receipt batches adding up to its head, and the stage holding exactly the receipts\' rows per chunk (observed part by part over each part\'s seq range) -> VERIFIED_EOF with the parts\' summary that publication is held to; otherwise PARTIAL_PROVED and the flow stops for recovery. Re-run in VERIFIED_EOF, the publication receipt is probed first: one found moves the journal to PUBLISHED (or INCIDENT_RETAINED when it does not match), never REEXTRACT_REQUIRED.',
      lambda: 'DeliveryVerifyEof',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'Quality',
    }),
    Quality: task({
      comment: 'Step 6: the route\'s quality rules on the stage (read-only probes); a failed rule moves the journal to REEXTRACT_REQUIRED (the stage can never be published: retire it, then run a new invocation) and the flow stops.',
      lambda: 'DeliveryQuality',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'Publish',
    }),
    Publish: task({
      comment: 'Step 7: one target transaction swaps the window and writes the receipt row. A lost COMMIT response is journaled as PUBLICATION_UNKNOWN (never retried blindly) and the flow stops; reconcile resolves it from the receipt. Cut point: delivery.publish.commit.',
      lambda: 'DeliveryPublish',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'Evidence',
    }),
    Evidence: task({
      comment: 'Step 8: the evidence document as an immutable object generation, its key and SHA-256 in the journal. Cut point: delivery.evidence.put.',
      lambda: 'DeliveryEvidence',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 75,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'Checkpoint',
    }),
    Checkpoint: task({
      comment: 'Step 9: the route checkpoint moves forward (never back) and the invocation becomes SUCCEEDED, with the journal, in one transaction. Cut point: delivery.checkpoint.advance.',
      lambda: 'DeliveryCheckpoint',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 45,
      catch: [
        STOPPED_FOR_RECOVERY,
      ],
      otherwise: 'StepRefused',
      next: 'Cleanup',
    }),
    Cleanup: task({
      comment: 'Step 10, the last: drop the owned stage, prove its absence and release custody with the proof (SUCCEEDED -> CUSTODY_RELEASED) in one transaction. ABSENCE_UNPROVABLE stops the flow with custody held (Delivery.CleanupUnproved); a name holding another object is contradicting evidence (INCIDENT_RETAINED). Cut points: delivery.target.drop-staging, then delivery.custody.release. The flow ends here: its output is the projection (invocationId, fence, targetId, state CUSTODY_RELEASED); anything short of CUSTODY_RELEASED is Delivery.NeedsRecovery.',
      lambda: 'DeliveryCleanup',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      outputPath: '$.delivery',
      timeoutSeconds: 75,
      catch: [
        STOPPED_FOR_RECOVERY,
        onError('CleanupNotProved', ['Delivery.CleanupUnproved'], '$.stop'),
      ],
      otherwise: 'StepRefused',
    }),
    StoppedForRecovery: {
      Type: 'Fail',
      Error: 'Delivery.NeedsRecovery',
      CausePath: '$.stop.Cause',
      Comment: 'A step left the journal in a state only reconcile (or an operator) resolves: PARTIAL_PROVED, REEXTRACT_REQUIRED, PUBLICATION_UNKNOWN, INCIDENT_RETAINED, RETIRED (the step throws Delivery.NeedsRecovery instead of a Choice after every Task). Custody stays held. Stable error for EventBridge (start reconcile) and the CLI; the cause names opaque ids and the journal state only.',
    },
    CleanupNotProved: {
      Type: 'Fail',
      Error: 'Delivery.CleanupUnproved',
      CausePath: '$.stop.Cause',
      Comment: 'Cleanup could not prove the owned stage absent; release would refuse. Custody is retained until reconcile proves the stage absent.',
    },
    StepRefused: {
      Type: 'Fail',
      Error: 'Delivery.StepRefused',
      CausePath: '$.failure.Cause',
      Comment: 'A step refused (validation, journal, fence, custody, target, source or object error): the cause carries the caught step error (name and message, never secrets); the journal keeps the exact state for reconcile.',
    },
  },
});
