import { sha256Hex } from '../../domain/digest.js';
import { validateAttemptId } from '../../domain/stream.js';
import type { Fence } from '../../domain/fence.js';

/** The widest group suffix: `-g` and a safe integer. */
const WIDEST_SUFFIX = `-g${Number.MAX_SAFE_INTEGER}`;

/**
 * Group attempt ids, `<prefix>-g<sequence>`: deterministic from the prefix and the group's
 * sequence. The default prefix is derived from the producer's fence (owner, session,
 * epoch) through SHA-256, so it never reveals the session id; producers that share a
 * session on one lane need distinct prefixes.
 */
export class GroupAttemptIds {
  readonly prefix: string;

  constructor(fence: Fence, prefix?: string) {
    this.prefix = prefix ?? `p${sha256Hex(`${fence.owner}\n${fence.session}\n${fence.epoch}`).slice(0, 24)}`;
    validateAttemptPrefix(this.prefix);
  }

  of(sequence: number): string {
    return `${this.prefix}-g${sequence}`;
  }
}

/** Every id a producer can make from `prefix` must be a valid attempt id: checked once, up front. */
export function validateAttemptPrefix(prefix: string): string {
  validateAttemptId(`${prefix}${WIDEST_SUFFIX}`);
  return prefix;
}
