import { ConfigError } from './domain/errors.js';

/**
 * Where the authority table and the object bucket are, and (locally) which emulator
 * endpoints stand in for AWS. Read once, validated, fails fast.
 */
export interface CutpointConfig {
  tableName: string;
  bucketName: string;
  region: string;
  /** Set only for local emulators; absent on AWS. */
  endpoints: { dynamodb?: string; s3?: string };
}

const TABLE = /^[A-Za-z0-9_.-]{3,255}$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

export function configFromEnv(env: NodeJS.ProcessEnv): CutpointConfig {
  const tableName = required(env, 'CUTPOINT_TABLE_NAME');
  const bucketName = required(env, 'CUTPOINT_BUCKET_NAME');
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  if (!TABLE.test(tableName)) throw new ConfigError('config.invalid_table_name', 'CUTPOINT_TABLE_NAME is not a valid DynamoDB table name');
  if (!BUCKET.test(bucketName)) throw new ConfigError('config.invalid_bucket_name', 'CUTPOINT_BUCKET_NAME is not a valid S3 bucket name');
  if (!REGION.test(region)) throw new ConfigError('config.invalid_region', 'AWS_REGION is not a valid region name');
  return {
    tableName,
    bucketName,
    region,
    endpoints: {
      dynamodb: endpoint(env, 'CUTPOINT_DYNAMODB_ENDPOINT'),
      s3: endpoint(env, 'CUTPOINT_S3_ENDPOINT'),
    },
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]?.trim();
  if (!value) throw new ConfigError('config.missing', `${name} is required`);
  return value;
}

/** Emulator endpoints are loopback only: a typo must not send data somewhere else. */
function endpoint(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('config.invalid_endpoint', `${name} is not a URL`);
  }
  if (url.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new ConfigError('config.invalid_endpoint', `${name} must be an http:// loopback address (local emulators only)`);
  }
  return url.origin;
}
