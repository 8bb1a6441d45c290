import { ValidationError } from '../../domain/errors.js';
import { expiryCutoffOf, validateRetentionDays } from '../../domain/delivery/work-objects.js';

/**
 * The state one delivery-expire execution carries from page to page; the Expire step
 * takes it whole and returns it whole. The released index is the durable cursor: an
 * expired invocation's entry is deleted once its work objects are, so the next execution
 * (the next schedule) starts from the first entry left, whatever stopped this one.
 */
export interface ExpireRun {
  retentionDays: number;
  /** Invocations released before this instant (fixed by the first page) are expired by this run. */
  cutoff: string;
  dryRun: boolean;
  /** The last index entry this run left in place (a dry run's, or one in another bucket): the next page starts after it. */
  after?: string;
  /** No entry before the cutoff is left to visit. */
  done: boolean;
  pagesPerExecution: number;
  pages: number;
  /** This execution took its pages: the flow ends, and the next run goes on from the index. */
  spent: boolean;
  totals: ExpireTotals;
}

export interface ExpireTotals {
  /** Invocations whose work objects are all gone (a dry run: would be). */
  invocations: number;
  /** Work objects deleted (a dry run: found), and their bytes. */
  objects: number;
  bytes: number;
  /** Invocations whose seal names another bucket or route root: left alone. */
  elsewhere: number;
}

/** Pages one execution takes: each at most PAGE_ENTRIES invocations and PAGE_OBJECTS deletions (~5 history events a page). */
export const EXPIRE_EXECUTION_PAGES = 100;
/** Index entries one page visits. */
export const PAGE_ENTRIES = 10;
/** Work objects one page deletes: 5 DeleteObjects requests of 1,000. */
export const PAGE_OBJECTS = 5000;

/**
 * The run as the step receives it: the first page gets the operator's (or the schedule's)
 * input `{retentionDays, dryRun?, pagesPerExecution?}`, later pages the run. Checked
 * before anything is read or written. The retention has no default here: a run that
 * deletes names how old is old enough (the schedule passes the stage's chunkRetentionDays).
 */
export function expireRunOf(input: unknown, now: () => Date): ExpireRun {
  const v = (input ?? {}) as Partial<ExpireRun>;
  if (typeof v !== 'object' || Array.isArray(v))
    throw new ValidationError('delivery.expire_input_invalid', 'the input must be an object');
  if (typeof v.cutoff === 'string' && v.totals) return structuredClone(v) as ExpireRun;
  if (v.dryRun !== undefined && typeof v.dryRun !== 'boolean')
    throw new ValidationError('delivery.expire_input_invalid', 'dryRun must be a boolean');
  const pages = v.pagesPerExecution ?? EXPIRE_EXECUTION_PAGES;
  if (!Number.isInteger(pages) || pages < 1 || pages > EXPIRE_EXECUTION_PAGES)
    throw new ValidationError(
      'delivery.expire_input_invalid',
      `pagesPerExecution must be a whole number from 1 to ${EXPIRE_EXECUTION_PAGES}`,
    );
  const retentionDays = validateRetentionDays(v.retentionDays);
  return {
    retentionDays,
    cutoff: expiryCutoffOf(now(), retentionDays),
    dryRun: v.dryRun ?? false,
    done: false,
    pagesPerExecution: pages,
    pages: 0,
    spent: false,
    totals: { invocations: 0, objects: 0, bytes: 0, elsewhere: 0 },
  };
}
