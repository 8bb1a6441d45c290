import { flow } from '../spec/flow.js';
import { task, type AslState } from '../spec/task.js';

/** After a scan page: scan on while pages are left and the execution's budget is not spent; continue in a new execution when it is; else `then`. */
function moreToScan(then: string): AslState {
  return {
    Type: 'Choice',
    Choices: [
      {
        And: [
          { Variable: '$.scan.done', BooleanEquals: false },
          { Variable: '$.execution.spent', BooleanEquals: false },
        ],
        Next: 'Scan',
      },
      { Variable: '$.scan.done', BooleanEquals: false, Next: 'Continue' },
    ],
    Default: then,
  };
}

export default flow('stream-gc', {
  Comment:
    "Stream GC of one lane (docs/stream-log.md, 'The stream log': trim and GC). Lifecycle roots ACTIVE -> MARKED -> DELETING -> DELETED, one per physical object key. Scan/Mark loop over bounded pages of the bucket listing (a FRESH scanner: every decision rebuilt from the authority and the listing), then Drain/Delete/Finalize loop over bounded pages of the roots: a MARKED root waits for the leases taken before its mark, seals its delete journal (DELETING), the DELETE is resolved by exact absence and the root CAS by root reload; a DELETING root resumes from its sealed journal. Every step takes the run state whole and returns it whole (at most one page of keys). Cut points: stream.gc.root, stream.gc.mark, stream.gc.seal, stream.gc.evidence, stream.gc.send, stream.gc.delete, stream.gc.finalize, stream.gc.retire. One execution takes at most pagesPerExecution pages (default and maximum 200, scan and sweep together; one more when the scan ends on the last) and then ends with {done: false, next}: its history stays bounded whatever the lane holds (on AWS ~14 events per scan page and ~17 per sweep page, so ~3,400 events plus retries, far below the 25,000-event limit). Running the flow again with `next` as its input continues the same run (same policy, cursors and totals; every decision is still rebuilt from the authority); the CLI does so under deterministic names (from the first execution's name and the continuation's number), so a duplicate start of a continuation is the same execution. TimeoutSeconds bounds the execution: one that times out loses only its cursor (a fresh run rescans; DELETING roots resume from their sealed journals). Input: {stream, partition, grace?, dryRun?, pagesPerExecution?} or a continuation's next. TimeoutSeconds (6 h) is above one page's worst case (every Task's retriers exhausted in turn, each try at the Task's TimeoutSeconds, plus the longest backoffs: about 7,300 s) and holds the pages of a healthy execution; an execution past it loses only its cursor, as above.",
  StartAt: 'Begin',
  TimeoutSeconds: 21600,
  States: {
    Begin: {
      Type: 'Pass',
      Comment: "This execution's page budget starts at zero (a fresh run or a continuation alike).",
      Result: {
        pages: 0,
        spent: false,
      },
      ResultPath: '$.execution',
      Next: 'Scan',
    },
    Scan: task({
      comment:
        "One page of the lane's objects (WAL and generations): create roots lazily (first seen = grace start), renew a DELETED root for a late object (epoch + 1, fresh grace), re-prove MARKED roots, collect ACTIVE roots that are TRIMMED or DEAD past grace. A dry run writes nothing.",
      lambda: 'stream/gc-scan',
      checksInput: 'stream-gc',
      parameters: {
        'input.$': '$',
      },
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'IsDryRun',
    }),
    IsDryRun: {
      Type: 'Choice',
      Choices: [
        {
          Variable: '$.dryRun',
          BooleanEquals: true,
          Next: 'MoreToScanDry',
        },
      ],
      Default: 'Mark',
    },
    MoreToScanDry: moreToScan('Done'),
    Mark: task({
      comment:
        'ACTIVE -> MARKED by CAS on the version the scan saw, with the policy digest; from here the root accepts no new lease.',
      lambda: 'stream/gc-mark',
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'MoreToScan',
    }),
    MoreToScan: moreToScan('Drain'),
    Drain: task({
      comment:
        "One page of roots: re-prove each MARKED root, wait while leases taken before the mark are unreleased and unexpired (expired ones are retired), then seal its delete journal (MARKED -> DELETING: delete id, exact size/sha256, epoch, policy digest). Collects the page's DELETING roots, old and new; retires DELETED roots one grace after their delete. Once the roots are swept, its pages walk the lane's leases and retire the expired ones.",
      lambda: 'stream/gc-drain',
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'Delete',
    }),
    Delete: task({
      comment:
        "DELETE each sealed object while HEAD shows the journal's exact identity, once per journal (the journal records that it goes out first), its preconditions proven again just before (no longer collectible: the root goes back to ACTIVE); a lost DELETE is resolved by exact absence; another identity, or the same one after the DELETE went out, is a late object and is left alone.",
      lambda: 'stream/gc-delete',
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'Finalize',
    }),
    Finalize: task({
      comment:
        "DELETING -> DELETED once the journal's object is absent; a lost root-CAS response is resolved by root reload (move id).",
      lambda: 'stream/gc-finalize',
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'MoreToSweep',
    }),
    MoreToSweep: {
      Type: 'Choice',
      Choices: [
        {
          And: [
            {
              Variable: '$.sweep.done',
              BooleanEquals: false,
            },
            {
              Variable: '$.execution.spent',
              BooleanEquals: false,
            },
          ],
          Next: 'Drain',
        },
        {
          Variable: '$.sweep.done',
          BooleanEquals: false,
          Next: 'Continue',
        },
      ],
      Default: 'Done',
    },
    Continue: {
      Type: 'Pass',
      Comment:
        'The execution spent its pages: the run so far, and `next` (the whole run state, at most one page of keys) to start the flow again with.',
      Parameters: {
        done: false,
        'stream.$': '$.stream',
        'partition.$': '$.partition',
        'dryRun.$': '$.dryRun',
        'graceSeconds.$': '$.policy.graceSeconds',
        'policyDigest.$': '$.policyDigest',
        'totals.$': '$.totals',
        'wouldMark.$': '$.wouldMark',
        'next.$': '$',
      },
      End: true,
    },
    Done: {
      Type: 'Pass',
      Parameters: {
        done: true,
        'stream.$': '$.stream',
        'partition.$': '$.partition',
        'dryRun.$': '$.dryRun',
        'graceSeconds.$': '$.policy.graceSeconds',
        'policyDigest.$': '$.policyDigest',
        'totals.$': '$.totals',
        'wouldMark.$': '$.wouldMark',
      },
      End: true,
    },
    Rejected: {
      Type: 'Fail',
      Error: 'Stream.GcRefused',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
  },
});
