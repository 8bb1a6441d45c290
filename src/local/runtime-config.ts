import type { CutpointConfig } from '../config.js';
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
