import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openSnsNotifier, snsSubject } from '../../src/adapters/sns/notifier.js';

/**
 * The SNS notifier against the run's fauxqs emulator (global-setup.ts), which serves
 * SNS, SQS and S3 on one endpoint: a topic with an SQS queue subscribed (raw delivery),
 * a publish through the adapter, and the message read back from the queue.
 */
const endpoint = inject('s3Endpoint');
const clientConfig = { region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
const sns = new SNSClient(clientConfig);
const sqs = new SQSClient(clientConfig);

let topicArn: string;
let queueUrl: string;

beforeAll(async () => {
  const id = randomUUID().slice(0, 8);
  topicArn = (await sns.send(new CreateTopicCommand({ Name: `cutpoint-incidents-${id}` }))).TopicArn ?? '';
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `cutpoint-incidents-${id}` }))).QueueUrl ?? '';
  const queueArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  await sns.send(new SubscribeCommand({ TopicArn: topicArn, Protocol: 'sqs', Endpoint: queueArn, Attributes: { RawMessageDelivery: 'true' } }));
});

afterAll(() => {
  sns.destroy();
  sqs.destroy();
});

async function receiveOne(): Promise<string> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    const messages = out.Messages ?? [];
    if (messages.length > 0) {
      expect(messages).toHaveLength(1);
      return messages[0]?.Body ?? '';
    }
  }
  throw new Error('no message arrived on the subscribed queue');
}

describe('SNS notifier (fauxqs)', () => {
  it('publishes the message as JSON to the topic; a raw SQS subscription receives exactly it', async () => {
    const notifier = openSnsNotifier({ topicArn, client: sns });
    const message = { kind: 'delivery.custody_retained', invocation_id: 'inv-0001', route: 'daily', retained: true, count: 2, nested: { a: [1, 'b', null] } };
    await notifier.publish('cutpoint: custody retained for inv-0001', message);
    expect(JSON.parse(await receiveOne())).toEqual(message);
  });

  it('accepts a subject SNS would refuse (too long, line breaks, non-ASCII) by making it acceptable', async () => {
    const notifier = openSnsNotifier({ topicArn, client: sns });
    const subject = `cutpoint: retained incident\nsecond line ✓ ${'x'.repeat(200)}`;
    await notifier.publish(subject, { n: 1 });
    expect(JSON.parse(await receiveOne())).toEqual({ n: 1 });
    const line = snsSubject(subject);
    expect(line.length).toBeLessThan(100);
    expect(line).toMatch(/^[ -~]+$/);
    expect(line.startsWith('cutpoint: retained incident second line ? x')).toBe(true);
  });

  it('fails with a stable error naming the topic when the topic does not exist', async () => {
    const missing = topicArn.replace(/[^:]+$/, `cutpoint-missing-${randomUUID().slice(0, 8)}`);
    const notifier = openSnsNotifier({ topicArn: missing, client: sns });
    const error = await notifier.publish('subject', { n: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'Cutpoint.EffectFailed', code: 'cutpoint.effect_failed', cutPoint: 'notifier.publish' });
    expect((error as Error).message).toContain('cutpoint-missing-');
  });
});
