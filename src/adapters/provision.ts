import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import type { CutpointConfig } from '../config.js';
import { awsClients } from './aws-clients.js';

/**
 * Creates the authority table and the object bucket on local emulators (on AWS the CDK
 * app owns them). Same key schema as infra/: `pk`/`sk` strings, on-demand.
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
  await clients.dynamoReader.send(new DescribeTableCommand({ TableName: config.tableName }));
  try {
    await clients.s3.send(new HeadBucketCommand({ Bucket: config.bucketName }));
  } catch {
    await clients.s3.send(new CreateBucketCommand({ Bucket: config.bucketName }));
  }
  clients.dynamoReader.destroy();
  clients.dynamoWriter.destroy();
  clients.s3.destroy();
}
