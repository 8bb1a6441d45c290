import type { CutpointConfig } from '../config.js';
import { integerFromEnv } from '../domain/env-integer.js';
import type { RuntimeEndpoints } from './runtime-state.js';

/** Config pointing the adapters at a local runtime, with one table and one bucket named `name`. */
export function configForRuntime(runtime: RuntimeEndpoints, name: string): CutpointConfig {
  return {
    tableName: name,
    bucketName: name,
    region: runtime.region,
    endpoints: { dynamodb: runtime.dynamodbEndpoint, s3: runtime.s3Endpoint },
  };
}

/**
 * CUTPOINT_LOCAL_RETRY_MS: the local runner's retry pause (the test suite sets 0, so a CLI
 * run in a test retries at once); unset: the ASL's own intervals. Garbage (`abc`,
 * `Infinity`, `0x10`) is `local.invalid_retry_ms`, read by every local command, not only
 * by one that happens to retry.
 */
export function localRetryMsFromEnv(env: Readonly<Record<string, string | undefined>>): number | undefined {
  return integerFromEnv(
    env,
    'CUTPOINT_LOCAL_RETRY_MS',
    { min: 0, max: 3_600_000, unit: 'milliseconds' },
    'local.invalid_retry_ms',
  );
}
