import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';

/**
 * What the conformance cases run against: a table (pk, sk: strings, on demand) and a bucket
 * of their own, on the emulators (`npm test`) or in a real account (`npm run test:aws`).
 * Created by `openTarget`, deleted by `closeTarget`: nothing else in the account is touched.
 */
export interface ConformanceTarget {
  kind: 'emulators' | 'aws';
  dynamodb: DynamoDBClient;
  s3: S3Client;
  table: string;
  bucket: string;
}

export interface TargetOptions {
  kind: ConformanceTarget['kind'];
  /** The throw-away resources' name (a stack name on AWS): the table and bucket are named after it. */
  name: string;
  region: string;
  /** Emulator endpoints; absent on AWS. */
  endpoints?: { dynamodb: string; s3: string };
}

const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export async function openTarget(o: TargetOptions): Promise<ConformanceTarget> {
  const local = o.endpoints !== undefined;
  const dynamodb = new DynamoDBClient({
    region: o.region,
    ...(local ? { endpoint: o.endpoints!.dynamodb, credentials: EMULATOR_CREDENTIALS } : {}),
  });
  const s3 = new S3Client({
    region: o.region,
    ...(local ? { endpoint: o.endpoints!.s3, forcePathStyle: true, credentials: EMULATOR_CREDENTIALS } : {}),
  });
  const table = `${o.name}-conformance`;
  const bucket = `${o.name}-conformance`.toLowerCase();
  await dynamodb.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  for (let i = 0; i < 120; i++) {
    const described = await dynamodb.send(new DescribeTableCommand({ TableName: table }));
    if (described.Table?.TableStatus === 'ACTIVE') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await s3.send(
    new CreateBucketCommand({
      Bucket: bucket,
      ...(o.region !== 'us-east-1' ? { CreateBucketConfiguration: { LocationConstraint: o.region as never } } : {}),
    }),
  );
  return { kind: o.kind, dynamodb, s3, table, bucket };
}

/** Deletes what `openTarget` created (every object of the bucket, then the bucket and the table). */
export async function closeTarget(t: ConformanceTarget): Promise<void> {
  for (;;) {
    const listed = await t.s3.send(new ListObjectsV2Command({ Bucket: t.bucket }));
    const keys = (listed.Contents ?? []).map((c) => ({ Key: c.Key! }));
    if (keys.length === 0) break;
    await t.s3.send(new DeleteObjectsCommand({ Bucket: t.bucket, Delete: { Objects: keys } }));
  }
  await t.s3.send(new DeleteBucketCommand({ Bucket: t.bucket }));
  await t.dynamodb.send(new DeleteTableCommand({ TableName: t.table }));
  t.dynamodb.destroy();
  t.s3.destroy();
}
