import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/local/free-port.js';
import { localDown, localUp, startLocalRuntime, type LocalRuntime } from '../../src/local/runtime.js';

// Any credentials work; the emulators never verify signatures.
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

function portOf(endpoint: string): number {
  return Number(new URL(endpoint).port);
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('local emulator runtime', () => {
  let runtime: LocalRuntime | undefined;
  let dynamodb: DynamoDBClient | undefined;
  let s3: S3Client | undefined;

  const started = (): { rt: LocalRuntime; dynamodb: DynamoDBClient; s3: S3Client } => {
    if (!runtime || !dynamodb || !s3) throw new Error('runtime did not start');
    return { rt: runtime, dynamodb, s3 };
  };

  beforeAll(async () => {
    // First run on a machine downloads DynamoDB Local (54 MiB); the JVM then takes a few seconds.
    runtime = await startLocalRuntime();
    dynamodb = new DynamoDBClient({ endpoint: runtime.dynamodbEndpoint, region: runtime.region, credentials });
    s3 = new S3Client({ endpoint: runtime.s3Endpoint, region: runtime.region, credentials, forcePathStyle: true });
  }, 180_000);

  afterAll(async () => {
    dynamodb?.destroy();
    s3?.destroy();
    await runtime?.stop();
  });

  it('binds both emulators to distinct loopback ports', () => {
    const { rt } = started();
    expect(rt.dynamodbEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(rt.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(portOf(rt.dynamodbEndpoint)).not.toBe(portOf(rt.s3Endpoint));
  });

  it('DynamoDB Local enforces conditional puts', async () => {
    const { dynamodb } = started();
    await dynamodb.send(
      new CreateTableCommand({
        TableName: 'ledger',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const claim = (): PutItemCommand =>
      new PutItemCommand({
        TableName: 'ledger',
        Item: { pk: { S: 'effect#1' }, owner: { S: 'worker-a' } },
        ConditionExpression: 'attribute_not_exists(pk)',
      });

    await expect(dynamodb.send(claim())).resolves.toBeDefined();
    await expect(dynamodb.send(claim())).rejects.toBeInstanceOf(ConditionalCheckFailedException);
  });

  it('S3 emulator round-trips an object with user metadata', async () => {
    const { s3 } = started();
    const body = 'exactly once';
    const sha256 = createHash('sha256').update(body).digest('hex');
    await s3.send(new CreateBucketCommand({ Bucket: 'cutpoint-artifacts' }));
    await s3.send(
      new PutObjectCommand({ Bucket: 'cutpoint-artifacts', Key: 'runs/1.txt', Body: body, Metadata: { sha256 } }),
    );

    const head = await s3.send(new HeadObjectCommand({ Bucket: 'cutpoint-artifacts', Key: 'runs/1.txt' }));
    expect(head.Metadata).toEqual({ sha256 });

    const got = await s3.send(new GetObjectCommand({ Bucket: 'cutpoint-artifacts', Key: 'runs/1.txt' }));
    expect(got.Metadata).toEqual({ sha256 });
    expect(await got.Body?.transformToString()).toBe(body);
  });

  it('stop() closes both ports', async () => {
    const { rt } = started();
    runtime = undefined; // afterAll must not stop it twice
    await rt.stop();
    expect(await acceptsConnections(portOf(rt.dynamodbEndpoint))).toBe(false);
    expect(await acceptsConnections(portOf(rt.s3Endpoint))).toBe(false);
  });
});

describe('persistent local runtime ports', () => {
  it("a port in use (say, another clone's runtime) is local.port_in_use, naming how to choose another; nothing starts", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cutpoint-ports-'));
    const server = createServer();
    await new Promise<void>((r) => server.listen({ port: 0, host: '127.0.0.1' }, r));
    const held = (server.address() as { port: number }).port;
    try {
      for (const ports of [
        { dynamodbPort: held, s3Port: await freePort() },
        { dynamodbPort: await freePort(), s3Port: held },
      ]) {
        const error = await localUp(stateDir, { ...ports, timeoutMs: 60_000 }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({ code: 'local.port_in_use', message: expect.stringContaining(`port ${held}`) });
        expect((error as Error).message).toMatch(
          ports.s3Port === held ? /--s3-port N.*CUTPOINT_S3_PORT/ : /--dynamodb-port N.*CUTPOINT_DYNAMODB_PORT/,
        );
        expect(existsSync(join(stateDir, 'runtime.json'))).toBe(false);
        expect(existsSync(join(stateDir, 'daemon.log'))).toBe(false);
      }
    } finally {
      server.close();
      await localDown(stateDir);
      await rm(stateDir, { recursive: true, force: true });
    }
  }, 120_000);
});
