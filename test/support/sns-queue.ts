import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';

export interface SubscribedTopic {
  topicArn: string;
  /** The SNS client of the run's emulator, for the adapter under test. */
  sns: SNSClient;
  /** The one message the topic delivered since the last call (raw delivery: the published Message), deleted from the queue. */
  receiveOne(): Promise<string>;
  /** Nothing more was delivered since the last receive (waits two seconds for a late one). */
  expectNoMore(): Promise<void>;
  destroy(): void;
}

/**
 * A fresh SNS topic on the run's fauxqs emulator (global-setup.ts serves SNS, SQS and S3 on
 * one endpoint) with an SQS queue subscribed by raw delivery: what a publish through the
 * SNS adapter put on the topic is read back from the queue.
 */
export async function subscribedTopic(label: string): Promise<SubscribedTopic> {
  const clientConfig = {
    region: 'us-east-1',
    endpoint: inject('s3Endpoint'),
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  const sns = new SNSClient(clientConfig);
  const sqs = new SQSClient(clientConfig);
  const name = `cutpoint-${label}-${randomUUID().slice(0, 8)}`;
  const topicArn = (await sns.send(new CreateTopicCommand({ Name: name }))).TopicArn ?? '';
  const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? '';
  const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] })))
    .Attributes?.QueueArn;
  await sns.send(
    new SubscribeCommand({
      TopicArn: topicArn,
      Protocol: 'sqs',
      Endpoint: queueArn,
      Attributes: { RawMessageDelivery: 'true' },
    }),
  );
  return {
    topicArn,
    sns,
    async receiveOne() {
      for (let attempt = 0; attempt < 10; attempt++) {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        const messages = out.Messages ?? [];
        if (messages.length > 0) {
          expect(messages).toHaveLength(1);
          // Taken off the queue: a later receive (or expectNoMore) sees only what came after.
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: messages[0]!.ReceiptHandle }));
          return messages[0]?.Body ?? '';
        }
      }
      throw new Error('no message arrived on the subscribed queue');
    },
    async expectNoMore() {
      const out = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2 }),
      );
      expect((out.Messages ?? []).map((m) => m.Body)).toEqual([]);
    },
    destroy() {
      sns.destroy();
      sqs.destroy();
    },
  };
}
