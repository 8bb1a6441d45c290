import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { CutpointConfig } from '../config.js';
import { awsClients } from './aws-clients.js';

/**
 * Creates the authority table and the object bucket on local emulators (on AWS the CDK
 * app owns them; the conformance suite's throw-away table and bucket are made here too,
 * hence the region's bucket constraint and the wait for an ACTIVE table). Same key schema
 * as infra/: `pk`/`sk` strings, on-demand.
 */
export async function provisionLocal(config: CutpointConfig): Promise<void> {
  const clients = awsClients(config);
  try {
    await clients.dynamoReader.send(
      new CreateTableCommand({
        TableName: config.tableName,
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
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  for (let tries = 0; tries < 120; tries++) {
    const described = await clients.dynamoReader.send(new DescribeTableCommand({ TableName: config.tableName }));
    if (described.Table?.TableStatus !== 'CREATING') break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  try {
    await clients.s3.send(new HeadBucketCommand({ Bucket: config.bucketName }));
  } catch {
    const outsideUsEast1 = config.endpoints?.s3 === undefined && config.region !== 'us-east-1';
    await clients.s3.send(
      new CreateBucketCommand({
        Bucket: config.bucketName,
        ...(outsideUsEast1 ? { CreateBucketConfiguration: { LocationConstraint: config.region as never } } : {}),
      }),
    );
  }
  clients.dynamoReader.destroy();
  clients.dynamoWriter.destroy();
  clients.s3.destroy();
}
