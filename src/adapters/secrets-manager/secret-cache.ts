import { integerFromEnv } from '../../domain/env-integer.js';
import type { SecretsPort } from '../../ports/secrets.js';

/**
 * A SecretsPort that remembers each secret for a time to live (on AWS: Powertools
 * Parameters' SecretsProvider cache, secrets.ts). Within the TTL a secret is read once per
 * process (a Lambda container); after it the next use re-reads it, so a rotated secret
 * reaches a warm container within the TTL, not at its next cold start. A failed read is
 * not remembered. `invalidate(arn)` makes the next use of one secret re-read it at once
 * (a forced fetch): a database that refused its credentials (functions/lib/connection-cache.ts)
 * makes the next use connect with what the secret holds then.
 */
export interface SecretCache extends SecretsPort {
  invalidate(arn: string): void;
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
