import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { provisionLocal } from '../../src/adapters/provision.js';
import { awsStateMachines } from './sfn-aws.js';
import { localStateMachines, type StateMachines } from './sfn-target.js';

/**
 * What the conformance cases run against: a table (pk, sk: strings, on demand) and a bucket
 * of their own, on the emulators (`npm test`) or in a real account (`npm run test:aws`),
 * and where state machines run: the local runner over that table and bucket, or Step
 * Functions with the given role (each state machine deleted by its case).
 * Created by `openTarget`, deleted by `closeTarget`: nothing else in the account is touched.
 */
export interface ConformanceTarget {
  kind: 'emulators' | 'aws';
  dynamodb: DynamoDBClient;
  s3: S3Client;
  table: string;
  bucket: string;
  machines: StateMachines;
  /** The Step Functions client on AWS (destroyed by closeTarget). */
  sfn?: SFNClient;
}

export interface TargetOptions {
  kind: ConformanceTarget['kind'];
  /** The throw-away resources' name (a stack name on AWS): the table and bucket are named after it. */
  name: string;
  region: string;
  /** Emulator endpoints; absent on AWS. */
  endpoints?: { dynamodb: string; s3: string };
  /** On AWS: the role the Step Functions cases' state machines run as (required there). */
  roleArn?: string;
}

const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export async function openTarget(o: TargetOptions): Promise<ConformanceTarget> {
  const local = o.endpoints !== undefined;
  // Checked before anything is created.
  if (!local && !o.roleArn) throw new Error('openTarget: the Step Functions cases need a role on AWS (roleArn)');
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
  const config = { tableName: table, bucketName: bucket, region: o.region, endpoints: o.endpoints ?? {} };
  // The project's own provisioning (pk/sk strings, on demand; the region's bucket constraint).
  await provisionLocal(config);
  if (local) {
    // The local runner's Distributed Map reads and writes through the ports' object store: this bucket.
    const machines = localStateMachines(awsPorts(config, new FaultSwitch()));
    return { kind: o.kind, dynamodb, s3, table, bucket, machines };
  }
  const sfn = new SFNClient({ region: o.region });
  return {
    kind: o.kind,
    dynamodb,
    s3,
    table,
    bucket,
    sfn,
    machines: awsStateMachines({ client: sfn, name: o.name, roleArn: o.roleArn! }),
  };
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
  t.sfn?.destroy();
}
