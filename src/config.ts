import { ConfigError } from './domain/errors.js';

/** Where every AWS client of one command talks: one region, and the named profile's credentials if one was named. */
export interface AwsConnection {
  region: string;
  /** A shared-config profile (`--profile`); absent: the SDK's default credential chain. */
  profile?: string;
  /**
   * An operator's command (the CLI's `--aws`): a call that never gets a connection is
   * `aws.unreachable` with the next step (src/adapters/aws-errors.ts). Absent in Lambdas.
   */
  operator?: true;
}

/**
 * Where the authority table and the object bucket are, and (locally) which emulator
 * endpoints stand in for AWS. Read once, validated, fails fast.
 */
export interface CutpointConfig extends AwsConnection {
  tableName: string;
  bucketName: string;
  /** Set only for local emulators; absent on AWS. */
  endpoints: { dynamodb?: string; s3?: string };
}

const TABLE = /^[A-Za-z0-9_.-]{3,255}$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

/**
 * A deployed Lambda's config: the table and bucket from CUTPOINT_TABLE_NAME /
 * CUTPOINT_BUCKET_NAME, the region from AWS_REGION (Lambda always sets it) or
 * AWS_DEFAULT_REGION. No silent default region: a client in a region nobody chose is how
 * one command came to talk to two regions.
 */
export function configFromEnv(env: NodeJS.ProcessEnv): CutpointConfig {
  const tableName = required(env, 'CUTPOINT_TABLE_NAME');
  const bucketName = required(env, 'CUTPOINT_BUCKET_NAME');
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim();
  if (!region) throw new ConfigError('config.missing', 'AWS_REGION is required');
  return awsConfig({ tableName, bucketName, region }, env);
}

/**
 * The config of a command on the deployed system (`--aws`): names and region already
 * resolved (src/cli/aws-runtime.ts), validated here; emulator endpoints, if any, from
 * CUTPOINT_DYNAMODB_ENDPOINT / CUTPOINT_S3_ENDPOINT (loopback only).
 */
export function awsConfig(
  parts: { tableName: string; bucketName: string; region: string; profile?: string; operator?: true },
  env: NodeJS.ProcessEnv,
): CutpointConfig {
  const { tableName, bucketName, region } = parts;
  if (!TABLE.test(tableName))
    throw new ConfigError('config.invalid_table_name', 'CUTPOINT_TABLE_NAME is not a valid DynamoDB table name');
  if (!BUCKET.test(bucketName))
    throw new ConfigError('config.invalid_bucket_name', 'CUTPOINT_BUCKET_NAME is not a valid S3 bucket name');
  assertRegion(region);
  return {
    tableName,
    bucketName,
    region,
    ...(parts.profile === undefined ? {} : { profile: parts.profile }),
    ...(parts.operator ? { operator: true as const } : {}),
    endpoints: {
      dynamodb: endpoint(env, 'CUTPOINT_DYNAMODB_ENDPOINT'),
      s3: endpoint(env, 'CUTPOINT_S3_ENDPOINT'),
    },
  };
}

export function assertRegion(region: string): void {
  if (!REGION.test(region))
    throw new ConfigError('config.invalid_region', `${JSON.stringify(region.slice(0, 40))} is not a valid region name`);
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
    throw new ConfigError(
      'config.invalid_endpoint',
      `${name} must be an http:// loopback address (local emulators only)`,
    );
  }
  return url.origin;
}
