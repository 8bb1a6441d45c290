import { integerFromEnv } from '../../domain/env-integer.js';
import type { SecretsPort } from '../../ports/secrets.js';

/**
 * A SecretsPort that remembers each secret for a time to live, over one that reads
 * (Secrets Manager). Within the TTL a secret is read once per process (a Lambda
 * container); after it the next use re-reads it, so a rotated secret reaches a warm
 * container within the TTL, not at its next cold start. A failed read is not remembered.
 * `invalidate(arn)` forgets one secret at once: a database that refused its credentials
 * (functions/lib/connection-cache.ts) makes the next use re-read them.
 */
export interface SecretCache extends SecretsPort {
  invalidate(arn: string): void;
}

export interface SecretCacheOptions {
  /** How long a read secret is used before it is read again; 0 reads on every use. */
  ttlMs: number;
  /** Milliseconds; injected by tests. */
  now?: () => number;
}

export class TtlSecretCache implements SecretCache {
  private readonly entries = new Map<string, { value: Promise<Record<string, unknown>>; readAt: number }>();
  private readonly now: () => number;

  constructor(
    private readonly reader: SecretsPort,
    private readonly options: SecretCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  secretJson(arn: string): Promise<Record<string, unknown>> {
    const now = this.now();
    const cached = this.entries.get(arn);
    if (cached && now - cached.readAt < this.options.ttlMs) return cached.value;
    const entry = { value: this.reader.secretJson(arn), readAt: now };
    this.entries.set(arn, entry);
    entry.value.catch(() => {
      if (this.entries.get(arn) === entry) this.entries.delete(arn);
    });
    return entry.value;
  }

  invalidate(arn: string): void {
    this.entries.delete(arn);
  }
}

/** The variable that overrides the TTL, in whole seconds. */
export const SECRET_TTL_ENV = 'CUTPOINT_SECRET_TTL_SECONDS';
export const DEFAULT_SECRET_TTL_SECONDS = 300;

/** The TTL in milliseconds from the environment (default 5 minutes); read once, refused when not 0..86400 seconds. */
export function secretTtlMsFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  return (
    (integerFromEnv(env, SECRET_TTL_ENV, { min: 0, max: 86_400, unit: 'seconds' }, 'delivery.secret_ttl_invalid') ??
      DEFAULT_SECRET_TTL_SECONDS) * 1000
  );
}
