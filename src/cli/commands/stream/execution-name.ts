import { createHash } from 'node:crypto';

const MAX = 80;
const HASH = 12;

/**
 * The deterministic execution name of a command, from its exact identity (for example
 * `append`, stream, partition, attempt id): the same command re-run finds the same
 * execution. The readable part keeps [A-Za-z0-9_-] only (what CloudWatch Logs accepts)
 * and may be cut to fit 80 characters; the suffix, a SHA-256 prefix of the unmodified
 * identity, keeps names of different identities apart (`a-1` partition 0 and `a`
 * partition 1 read alike; `a.b` and `a_b` sanitize alike).
 */
export function executionName(verb: string, ...identity: Array<string | number>): string {
  const parts = [verb, ...identity.map(String)];
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, HASH);
  const readable = parts.join('-').replace(/[^A-Za-z0-9_-]/g, '_');
  return `${readable.slice(0, MAX - HASH - 1)}-${digest}`;
}
