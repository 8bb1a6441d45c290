import type { CutpointConfig } from '../config.js';
import { ConfigError } from '../domain/errors.js';
import { readRuntimeEndpoints } from '../local/runtime.js';

/** Table and bucket names the local runtime uses. */
export const LOCAL_TABLE = 'cutpoint-local';
export const LOCAL_BUCKET = 'cutpoint-local';

/** Config for the persistent local runtime started by `cutpoint local up`. */
export async function localRuntimeConfig(): Promise<CutpointConfig> {
  const endpoints = await readRuntimeEndpoints();
  if (!endpoints) {
    throw new ConfigError('local.runtime_down', 'the local runtime is not running; start it with `cutpoint local up`');
  }
  return {
    tableName: LOCAL_TABLE,
    bucketName: LOCAL_BUCKET,
    region: endpoints.region,
    endpoints: { dynamodb: endpoints.dynamodbEndpoint, s3: endpoints.s3Endpoint },
  };
}
