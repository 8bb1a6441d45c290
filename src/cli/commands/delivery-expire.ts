import { randomBytes } from 'node:crypto';
import type { ExpireRun } from '../../delivery/expiry/expire-run.js';
import { MAX_RETENTION_DAYS } from '../../domain/delivery/work-objects.js';
import { UsageError } from '../io.js';
import { failedFlowError } from './stream/outcomes.js';
import type { Runtime } from './stream/runtime.js';

type Values = Record<string, string | boolean | undefined>;

export const expireHelp = `cutpoint delivery expire --retention-days N [--dry-run] [--aws] [--name NAME]
  deletes the work objects (chunks, part plans and results; never the evidence) of
  invocations finished more than N days ago (1-3650; a deployed stage's schedule runs it
  every hour with its chunkRetentionDays); runs the delivery-expire flow until no finished
  invocation past retention is left and prints the totals; --dry-run deletes nothing and
  counts what would go`;

export const EXPIRE_OPTIONS = {
  'retention-days': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'state-machine-arn': { type: 'string' },
  name: { type: 'string' },
} as const;

/** Grammar of `delivery expire`: the retention is checked before anything runs. */
export function expireInputOf(values: Values): { retentionDays: number; dryRun?: true } {
  const given = values['retention-days'];
  const days = Number(given);
  if (typeof given !== 'string' || !/^\d{1,4}$/.test(given) || days < 1 || days > MAX_RETENTION_DAYS)
    throw new UsageError(`--retention-days needs a whole number of days from 1 to ${MAX_RETENTION_DAYS}`);
  return { retentionDays: days, ...(values['dry-run'] === true ? { dryRun: true } : {}) };
}

/**
 * delivery-expire, locally or on AWS, run to its end: an execution takes a bounded number
 * of pages and the released index is the cursor, so the next execution goes on where it
 * stopped (a dry run deletes nothing, so it reports its first execution's pages only).
 */
export async function expire(runtime: Runtime, values: Values): Promise<unknown> {
  const input = expireInputOf(values);
  const base = typeof values.name === 'string' ? values.name : `expire-${randomBytes(4).toString('hex')}`;
  const totals = { invocations: 0, objects: 0, bytes: 0, elsewhere: 0 };
  let run: ExpireRun;
  let executions = 0;
  do {
    const name = executions === 0 ? base : `${base}-${executions}`;
    const result = await runtime.run('delivery-expire', name, input);
    if (result.status !== 'SUCCEEDED') throw failedFlowError(result);
    run = result.output as ExpireRun;
    executions++;
    for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += run.totals[key];
  } while (!run.done && !input.dryRun);
  return {
    retentionDays: run.retentionDays,
    cutoff: run.cutoff,
    dryRun: run.dryRun,
    done: run.done,
    executions,
    totals,
  };
}
