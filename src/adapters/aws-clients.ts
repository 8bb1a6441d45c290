import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { CutpointConfig } from '../config.js';

/** Emulators accept any credentials; these never leave loopback. */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface AwsClients {
  /** Conditional writes: SDK retries off, so a lost response surfaces as UNKNOWN. */
  dynamoWriter: DynamoDBClient;
  dynamoReader: DynamoDBClient;
  s3: S3Client;
}

export function awsClients(config: CutpointConfig): AwsClients {
  const requestHandler = new NodeHttpHandler({ connectionTimeout: 3000, requestTimeout: 10000 });
  const dynamo = (maxAttempts: number) =>
    new DynamoDBClient({
      region: config.region,
      maxAttempts,
      requestHandler,
      ...(config.endpoints.dynamodb ? { endpoint: config.endpoints.dynamodb, credentials: LOCAL_CREDENTIALS } : {}),
    });
  return {
    dynamoWriter: dynamo(1),
    dynamoReader: dynamo(3),
    s3: new S3Client({
      region: config.region,
      // Lost PUT responses are resolved by exact identity, not by SDK retries.
      maxAttempts: 1,
      requestHandler,
      ...(config.endpoints.s3
        ? { endpoint: config.endpoints.s3, forcePathStyle: true, credentials: LOCAL_CREDENTIALS }
        : {}),
    }),
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
  return { dynamoWriter: instrument(clients.dynamoWriter), dynamoReader: instrument(clients.dynamoReader), s3: instrument(clients.s3) };
}
