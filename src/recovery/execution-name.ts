import { createHash } from 'node:crypto';

/** Step Functions caps an execution name at 80 characters. */
export const MAX_EXECUTION_NAME = 80;
const PREFIX = 'recover-';
/** Hex characters of SHA-256 kept when a name must be shortened: 64 bits, collision-free in practice. */
const HASH_CHARS = 16;

/**
 * The one name of the recovery of a failed execution: `recover-<flow>-<failed name>`,
 * deterministic, so a second event for the same failure (EventBridge delivers at least
 * once, Lambda retries) starts the same execution, never a second one. The flow is part
 * of it because one recovering flow recovers several (delivery-reconcile recovers
 * deliver-window and publish-clickhouse), whose executions may share a name. Failed names
 * are valid execution names, so the result only needs shortening: past 80 characters it
 * keeps a prefix and appends a hash of the full flow and name.
 */
export function recoveryExecutionName(flow: string, failedName: string): string {
  const full = `${PREFIX}${flow}-${failedName}`;
  if (full.length <= MAX_EXECUTION_NAME) return full;
  const hash = createHash('sha256').update(`${flow}\n${failedName}`).digest('hex').slice(0, HASH_CHARS);
  return `${full.slice(0, MAX_EXECUTION_NAME - HASH_CHARS - 1)}-${hash}`;
}
