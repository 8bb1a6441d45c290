import { ValidationError } from '../errors.js';

/**
 * An invocation's work objects and when they expire. Under its prefix
 * (`delivery/<route>/<invocationId>/`, identifiers.ts) an invocation keeps two kinds of
 * object:
 * - work objects: the extracted chunks (`chunk-<seq>.jsonl.gz`, `.jsonl` before
 *   compression), the part plan (`plan.json`) and the Distributed Map's part results
 *   (`map-results/…`). Only a part's resume reads them, and only while the invocation is
 *   not finished;
 * - the proof: `evidence.json` and the quality evidence (`quality/…`), kept for good.
 *
 * Once an invocation is finished (RETIRED or CUSTODY_RELEASED: custody released, nothing
 * can resume it), its work objects are kept for the retention period and then deleted by
 * the delivery-expire flow (src/delivery/expiry/). The period is a stage setting
 * (`chunkRetentionDays` in cutpoint.config.json). It also outlasts any step still running
 * for the invocation when it was released — a Lambda lives 15 minutes at most — so a late
 * chunk write cannot land after its invocation's expiry.
 */

export const DEFAULT_RETENTION_DAYS = 7;
export const MAX_RETENTION_DAYS = 3650;
const DAY_MS = 86_400_000;

const WORK_OBJECT = /^(?:chunk-\d{10}\.jsonl(?:\.gz)?|plan\.json|map-results\/.+)$/;

/** Whole days from 1 to 3650, given (`delivery.retention_invalid` otherwise). */
export function validateRetentionDays(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_RETENTION_DAYS) {
    throw new ValidationError(
      'delivery.retention_invalid',
      `retentionDays must be given, a whole number of days from 1 to ${MAX_RETENTION_DAYS}`,
    );
  }
  return value;
}

/** Invocations released before this instant (ISO-8601) are past their retention at `now`. */
export function expiryCutoffOf(now: Date, retentionDays: number): string {
  return new Date(now.getTime() - validateRetentionDays(retentionDays) * DAY_MS).toISOString();
}

/** Whether `key`, under an invocation's `prefix`, is one of its work objects (never its evidence). */
export function isWorkObjectKey(prefix: string, key: string): boolean {
  return key.startsWith(prefix) && WORK_OBJECT.test(key.slice(prefix.length));
}

/**
 * The work objects' keys as IAM object-key patterns (`<pattern>*`): the only keys the
 * expiry step may delete, so even a bug in it cannot delete an invocation's evidence.
 */
export const WORK_OBJECT_GRANTS = ['delivery/*/chunk-', 'delivery/*/plan.json', 'delivery/*/map-results/'] as const;
