import { flow } from '../spec/flow.js';
import { task } from '../spec/task.js';

export default flow('delivery-expire', {
  Comment:
    "Expire finished deliveries' work objects (docs/delivery.md, 'Chunk retention'): walk the released index oldest first; for each invocation finished (RETIRED or CUSTODY_RELEASED) longer ago than the retention, delete its chunks, part plan and part results, never its evidence, until a listing shows none, then its index entry. Started by the stage's schedule with its chunkRetentionDays, or by hand. Cut points: delivery.expire.delete, delivery.expire.forget. Every page is idempotent (a retry lists again); the index is the cursor, so an execution that ends early or fails leaves the rest to the next. One execution takes at most pagesPerExecution pages (default and maximum 100, ~5 history events each). Input: {retentionDays, dryRun?, pagesPerExecution?}. TimeoutSeconds (6 h) is above 100 pages with every retrier of a page exhausted in turn.",
  TimeoutSeconds: 21600,
  StartAt: 'Expire',
  States: {
    Expire: task({
      comment:
        'One page: at most 10 finished invocations past retention and 5,000 deleted objects; returns the run whole (cutoff, totals, done). A dry run deletes nothing and counts what would go.',
      lambda: 'delivery/expire',
      checksInput: 'delivery-expire',
      parameters: {
        'input.$': '$',
      },
      timeoutSeconds: 150,
      otherwise: 'Rejected',
      next: 'MoreToExpire',
    }),
    MoreToExpire: {
      Type: 'Choice',
      Choices: [
        {
          And: [
            { Variable: '$.done', BooleanEquals: false },
            { Variable: '$.spent', BooleanEquals: false },
          ],
          Next: 'Expire',
        },
      ],
      Default: 'Done',
    },
    Done: {
      Type: 'Succeed',
      Comment:
        'The run: retentionDays, cutoff, totals; done false when the page budget ended it (the next run goes on).',
    },
    Rejected: {
      Type: 'Fail',
      Error: 'Delivery.ExpireRefused',
      CausePath: '$.failure.Cause',
      Comment:
        'Error is stable for EventBridge and the CLI; the cause carries the caught step error (name and message, never secrets).',
    },
  },
});
