import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { AwsConnection, CutpointConfig } from '../config.js';
import { classifyUnreachable } from './aws-errors.js';

/** Emulators accept any credentials; these never leave loopback. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface AwsClients {
  /** Conditional writes: SDK retries off, so a lost response surfaces as UNKNOWN. */
  dynamoWriter: DynamoDBClient;
  dynamoReader: DynamoDBClient;
  s3: S3Client;
}

/**
 * What every SDK client of one command is built with: the ONE region the command resolved
 * (never the SDK's own resolution, which read the profile's region for some clients and
 * not for others) and the named profile's credentials, if one was named.
 */
function base(connection: AwsConnection): { region: string; profile?: string } {
  return connection.profile === undefined
    ? { region: connection.region }
    : { region: connection.region, profile: connection.profile };
}

/** An operator's client: a call that never got a connection is `aws.unreachable` (aws-errors.ts); a Lambda's is left as the SDK made it. */
function forWho<C>(client: C, connection: AwsConnection, service: string): C {
  return connection.operator ? classifyUnreachable(client, service, connection.region) : client;
}

export function awsClients(config: CutpointConfig): AwsClients {
  const requestHandler = new NodeHttpHandler({ connectionTimeout: 3000, requestTimeout: 10000 });
  const dynamo = (maxAttempts: number) =>
    forWho(
      new DynamoDBClient({
        ...base(config),
        maxAttempts,
        requestHandler,
        ...(config.endpoints.dynamodb ? { endpoint: config.endpoints.dynamodb, credentials: LOCAL_CREDENTIALS } : {}),
      }),
      config,
      'DynamoDB',
    );
  return {
    dynamoWriter: dynamo(1),
    dynamoReader: dynamo(3),
    s3: forWho(
      new S3Client({
        ...base(config),
        // Lost PUT responses are resolved by exact identity, not by SDK retries.
        maxAttempts: 1,
        requestHandler,
        ...(config.endpoints.s3
          ? { endpoint: config.endpoints.s3, forcePathStyle: true, credentials: LOCAL_CREDENTIALS }
          : {}),
      }),
      config,
      'S3',
    ),
  };
}

/** Optional per-client hook: the Lambda layer passes X-Ray capture (functions/lib/telemetry.ts); Powertools stays out of src/. */
export interface AwsClientOptions {
  instrument?: <C extends object>(client: C) => C;
}

/** The clients, each passed through `options.instrument` when given. */
export function instrumentedClients(clients: AwsClients, options: AwsClientOptions = {}): AwsClients {
  const { instrument } = options;
  if (!instrument) return clients;
  return {
    dynamoWriter: instrument(clients.dynamoWriter),
    dynamoReader: instrument(clients.dynamoReader),
    s3: instrument(clients.s3),
  };
}

/** Step Functions, SDK retries off: the caller decides, by exact execution name, what a retry means. */
export function sfnClient(connection: AwsConnection): SFNClient {
  return forWho(new SFNClient({ ...base(connection), maxAttempts: 1 }), connection, 'Step Functions');
}

/** CloudFormation, for the stacks' outputs (read-only: the SDK's retries are safe). */
export function cloudFormationClient(connection: AwsConnection): CloudFormationClient {
  return forWho(new CloudFormationClient(base(connection)), connection, 'CloudFormation');
}

/** Lambda, for a game day's fault arming (a configuration read and update per function). */
export function lambdaClient(connection: AwsConnection): LambdaClient {
  return forWho(new LambdaClient(base(connection)), connection, 'Lambda');
}

/** Secrets Manager in the command's region (a Lambda's port builds its own from the Lambda's region). */
export function secretsManagerClient(connection: AwsConnection): SecretsManagerClient {
  return forWho(new SecretsManagerClient(base(connection)), connection, 'Secrets Manager');
}
