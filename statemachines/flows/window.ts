import { CARRIED_STATE, STOPPED_FOR_RECOVERY } from '../spec/delivery.js';
import { type AslState, type Catcher, task } from '../spec/task.js';

/*
 * The steps deliver-window and publish-clickhouse share, declared once: Begin (custody and
 * the sealed authority), the owned stage, the plan, the parts on a Distributed Map and the
 * EOF proof; then evidence and checkpoint; and the Fail states they end in. Each flow
 * passes where a stop goes (deliver-window ends at StoppedForRecovery; publish-clickhouse
 * passes its stops through NotifyIncident first) and its own steps in between.
 */
export interface WindowStart {
  /** The flow's name, passed to Begin in its parameters (never read from the execution input). */
  flow: string;
  beginComment: string;
  /** How the steps after Begin route a stop (Delivery.NeedsRecovery and, on publish-clickhouse, the governed stops). */
  stops: Catcher[];
  /** The state after VerifyEof. */
  afterVerify: string;
}

/** Begin, CreateStaging, PlanParts, ExtractLoadParts and VerifyEof. */
export function windowStart(o: WindowStart): Record<string, AslState> {
  return {
    Begin: task({
      comment: o.beginComment,
      lambda: 'delivery/begin',
      checksInput: o.flow,
      parameters: {
        execution: {
          'id.$': '$$.Execution.Id',
          'name.$': '$$.Execution.Name',
        },
        flow: o.flow,
      },
      resultPath: '$.delivery',
      timeoutSeconds: 45,
      catch: [STOPPED_FOR_RECOVERY],
      otherwise: 'StepRefused',
      next: 'CreateStaging',
    }),
    CreateStaging: task({
      comment:
        'Step 2: the owned stage (DDL on the target, owner binding = digest of the sealed authority), then its record in the journal. Cut points: delivery.target.create-staging, then delivery.staging.record.',
      lambda: 'delivery/create-staging',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 75,
      catch: o.stops,
      otherwise: 'StepRefused',
      next: 'PlanParts',
    }),
    PlanParts: task({
      comment:
        "Step 3: split the sealed window into parts (one count query per time bucket, parts of about the route's part_rows rows), write the plan as an immutable object (a JSON array of part descriptors: the Map's items) and journal EMPTY_STAGING -> WRITING_UNKNOWN with its key and SHA-256. A re-run returns the journaled plan. Cut points: delivery.plan.put, delivery.journal.transition.",
      lambda: 'delivery/plan-parts',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 135,
      catch: o.stops,
      otherwise: 'StepRefused',
      next: 'ExtractLoadParts',
    }),
    ExtractLoadParts: partsMap({
      comment:
        "Step 4: one child execution per part of the plan (ItemReader: the plan object), at most the route's max_concurrency at once. Each child claims its part (its head, checked against the carried invocation version and the custody fence in one transaction: a part started before is found and resumed), extracts it chunk by chunk, writes each chunk as an immutable object, loads it into the owned stage and journals the receipts in batches of 16 with the part's head (a retry resumes after the part's last journaled chunk). Results go to S3 (ResultWriter), never into the state. Cut points: delivery.part.claim, delivery.chunk.put, delivery.target.load-chunk, delivery.part.receipt.",
      refused: 'StepRefused',
      next: 'VerifyEof',
    }),
    VerifyEof: task({
      comment:
        "Step 5: every part of the plan at EOF, its receipt batches adding up to its head, and the stage holding exactly the receipts' rows per chunk (observed part by part over each part's seq range) -> VERIFIED_EOF with the parts' summary that publication is held to; otherwise PARTIAL_PROVED and the flow stops for recovery. Re-run in VERIFIED_EOF, the publication receipt is probed first: one found moves the journal to PUBLISHED (or INCIDENT_RETAINED when it does not match), never REEXTRACT_REQUIRED.",
      lambda: 'delivery/verify-eof',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 315,
      catch: o.stops,
      otherwise: 'StepRefused',
      next: o.afterVerify,
    }),
  };
}

/**
 * Evidence and Checkpoint: `stops` routes what ends the flow; `gate` adds to their comments
 * what else they refuse on (publish-clickhouse: the COMPLETE-capsule gate).
 */
export function evidenceAndCheckpoint(stops: Catcher[], gate = ''): Record<string, AslState> {
  return {
    Evidence: task({
      comment:
        'Step 8: the evidence document as an immutable object generation, its key and SHA-256 in the journal. Cut point: delivery.evidence.put.' +
        gate,
      lambda: 'delivery/evidence',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 75,
      catch: stops,
      otherwise: 'StepRefused',
      next: 'Checkpoint',
    }),
    Checkpoint: task({
      comment:
        'Step 9: the route checkpoint moves forward (never back) and the invocation becomes SUCCEEDED, with the journal, in one transaction. Cut point: delivery.checkpoint.advance.' +
        gate,
      lambda: 'delivery/checkpoint',
      parameters: CARRIED_STATE,
      resultPath: '$.delivery',
      timeoutSeconds: 45,
      catch: stops,
      otherwise: 'StepRefused',
      next: 'Cleanup',
    }),
  };
}

/** The Fail states both flows end in. */
export const WINDOW_FAILS: Record<string, AslState> = {
  StoppedForRecovery: {
    Type: 'Fail',
    Error: 'Delivery.NeedsRecovery',
    CausePath: '$.stop.Cause',
    Comment:
      'A step left the journal in a state only reconcile (or an operator) resolves: PARTIAL_PROVED, REEXTRACT_REQUIRED, PUBLICATION_UNKNOWN, INCIDENT_RETAINED, RETIRED (the step throws Delivery.NeedsRecovery instead of a Choice after every Task). Custody stays held. Stable error for EventBridge (start reconcile) and the CLI; the cause names opaque ids and the journal state only.',
  },
  CleanupNotProved: {
    Type: 'Fail',
    Error: 'Delivery.CleanupUnproved',
    CausePath: '$.stop.Cause',
    Comment:
      'Cleanup could not prove the owned stage absent; release would refuse. Custody is retained until reconcile proves the stage absent.',
  },
  StepRefused: {
    Type: 'Fail',
    Error: 'Delivery.StepRefused',
    CausePath: '$.failure.Cause',
    Comment:
      'A step refused (validation, journal, fence, custody, target, source or object error): the cause carries the caught step error (name and message, never secrets); the journal keeps the exact state for reconcile.',
  },
};

/**
 * The Distributed Map over the journaled plan (`$.delivery.plan`): one child execution per
 * part running the part Task, at most the route's max_concurrency at once, results to S3.
 * deliver-window's and publish-clickhouse's ExtractLoadParts, delivery-resume's ContinueParts.
 */
export function partsMap(o: { comment: string; refused: string; next: string }): AslState {
  return {
    Type: 'Map',
    Comment: o.comment,
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
          lambda: 'delivery/extract-load-part',
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
          Comment:
            'The part step refused (validation, journal, fence, custody, target, source or object error): the child fails, so the Map Run exceeds its zero tolerance and the flow ends refused; the part head keeps its last journaled batch for reconcile.',
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
        ErrorEquals: ['States.ExceedToleratedFailureThreshold', 'States.ItemReaderFailed', 'States.ResultWriterFailed'],
        ResultPath: '$.failure',
        Next: o.refused,
      },
    ],
    Next: o.next,
  };
}
