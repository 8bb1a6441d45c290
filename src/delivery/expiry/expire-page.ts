import { invocationObjectsPrefixOf, workRootIn } from '../../domain/delivery/identifiers.js';
import { isTerminal } from '../../domain/delivery/journal-states.js';
import { workRootDigestOf } from '../../domain/delivery/sealed-authority.js';
import { isWorkObjectKey } from '../../domain/delivery/work-objects.js';
import { ConfigError, OutcomeUnknownError } from '../../domain/errors.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { DELIVERY_CUT_POINTS } from '../cut-points.js';
import { inconsistent } from '../journal/errors.js';
import { isTargetId, RELEASED_PK, RELEASED_SK_PREFIX } from '../journal/keys.js';
import { read, readInvocation } from '../journal/records.js';
import { expireRunOf, PAGE_ENTRIES, PAGE_OBJECTS, type ExpireRun } from './expire-run.js';

/** S3 lists and deletes at most 1,000 keys a request. */
const BATCH = 1000;
/** Listings one sweep takes to settle deletions whose outcome was unknown, before it leaves them to the Task's Retry. */
const MAX_PASSES = 3;

/**
 * Expire: one page of the released index (journal/keys.ts), oldest release first. For each
 * invocation released before the run's cutoff: its record must be finished (RETIRED or
 * CUSTODY_RELEASED: the index entry was written by that transition) and sealed on this
 * store's work root, else it is left alone (`elsewhere`); its work objects (chunks, plan,
 * part results; never the evidence: src/domain/delivery/work-objects.ts) are deleted in
 * batches at `delivery.expire.delete` until a full listing shows none; then its entry is
 * deleted at `delivery.expire.forget`. A page deletes at most PAGE_OBJECTS objects; an
 * invocation with more goes on in the next page. Every step is idempotent: a crash, a lost
 * response or a retry only lists again. A dry run deletes nothing and counts what would go.
 */
export async function expirePage(input: unknown, ports: Ports): Promise<ExpireRun> {
  const run = expireRunOf(input, () => ports.clock.now());
  if (run.done) return run;
  run.pages++;
  const entries = await read(() =>
    ports.authority.query(RELEASED_PK, RELEASED_SK_PREFIX, {
      limit: PAGE_ENTRIES,
      ...(run.after ? { startAfterSk: run.after } : {}),
    }),
  );
  let budget = PAGE_OBJECTS;
  for (const item of entries) {
    if (item.sk >= `${RELEASED_SK_PREFIX}${run.cutoff}`) {
      run.done = true;
      break;
    }
    const { invocationId, targetId } = entryOf(item);
    const record = await readInvocation(ports, { targetId, invocationId });
    if (!isTerminal(record.state))
      throw inconsistent(`the released index names invocation ${invocationId}, which is not finished`);
    if (record.sealed.workRootDigest !== workRootDigestOf(workRootIn(ports.objects.location, record.route))) {
      run.totals.elsewhere++;
      run.after = item.sk;
      continue;
    }
    const swept = await sweep(ports, invocationObjectsPrefixOf(record.route, invocationId), run.dryRun, budget);
    run.totals.objects += swept.objects;
    run.totals.bytes += swept.bytes;
    budget -= swept.spent;
    if (!swept.complete) break;
    if (run.dryRun) run.after = item.sk;
    if (run.dryRun || (await forget(ports, item))) run.totals.invocations++;
  }
  if (entries.length < PAGE_ENTRIES && budget > 0) run.done = true;
  run.spent = run.pages >= run.pagesPerExecution;
  return run;
}

function entryOf(item: AuthorityItem): { invocationId: string; targetId: string } {
  const { invocationId, targetId } = item;
  if (typeof invocationId !== 'string' || !isTargetId(targetId) || !item.sk.endsWith(`#${invocationId}`))
    throw inconsistent('a released index entry is malformed');
  return { invocationId, targetId };
}

interface Swept {
  /** Deleted (a dry run: found) work objects and their bytes. */
  objects: number;
  bytes: number;
  /** Deletions this sweep asked for (its share of the page's budget). */
  spent: number;
  /** A full listing found no work object left (a dry run: the listing ended). */
  complete: boolean;
}

/**
 * Lists the invocation's prefix and deletes its work objects, pass after pass until a
 * pass deletes nothing it is not sure of; stops incomplete when the budget is spent.
 * An UNKNOWN DeleteObjects is settled by the next pass's listing; still unsettled after
 * MAX_PASSES, the page fails with Cutpoint.OutcomeUnknown (its Task retries with backoff),
 * never a tight loop.
 */
async function sweep(ports: Ports, prefix: string, dryRun: boolean, budget: number): Promise<Swept> {
  const { listPage } = ports.objects;
  if (!listPage)
    throw new ConfigError('delivery.expire_listing_unsupported', 'the object store cannot list in bounded pages');
  const swept: Swept = { objects: 0, bytes: 0, spent: 0, complete: false };
  for (let settled = false, pass = 0; !settled; pass++) {
    if (pass === MAX_PASSES)
      throw new OutcomeUnknownError(
        DELIVERY_CUT_POINTS.expireDelete,
        `${DELIVERY_CUT_POINTS.expireDelete}: deletions under ${prefix} stayed unknown through ${MAX_PASSES} listings`,
      );
    settled = true;
    let after: string | undefined;
    for (let more = true; more;) {
      const page = await listPage.call(ports.objects, prefix, {
        ...(after ? { startAfter: after } : {}),
        limit: BATCH,
      });
      more = page.more;
      after = page.objects.at(-1)?.key;
      const work = page.objects.filter((o) => isWorkObjectKey(prefix, o.key));
      const batch = dryRun ? work : work.slice(0, budget - swept.spent);
      if (!dryRun && batch.length > 0) {
        swept.spent += batch.length;
        const outcome = await ports.objects.deleteMany(
          DELIVERY_CUT_POINTS.expireDelete,
          batch.map((o) => o.key),
        );
        if (outcome.status === 'UNKNOWN') settled = false;
        else count(swept, batch);
      } else count(swept, batch);
      if (!dryRun && batch.length < work.length) return swept;
    }
  }
  swept.complete = true;
  return swept;
}

function count(swept: Swept, objects: ReadonlyArray<{ size: number }>): void {
  swept.objects += objects.length;
  for (const o of objects) swept.bytes += o.size;
}

/**
 * Deletes the entry; true once it is gone by this call. An UNKNOWN is settled by reading
 * it back: gone is done, still there fails the page (Cutpoint.OutcomeUnknown) for its
 * Task's Retry, which finds the listing empty and forgets again.
 */
async function forget(ports: Ports, item: AuthorityItem): Promise<boolean> {
  const cutPoint = DELIVERY_CUT_POINTS.expireForget;
  const key = { pk: item.pk, sk: item.sk };
  const outcome = await ports.authority.delete(cutPoint, key, { version: item.version });
  if (outcome.status === 'APPLIED') return true;
  if (outcome.status === 'CONFLICT') return false; // another run forgot it first
  if ((await read(() => ports.authority.get(key))) === undefined) return true;
  throw new OutcomeUnknownError(
    cutPoint,
    `${cutPoint}: the released-index entry may not be deleted (${outcome.reason})`,
  );
}
