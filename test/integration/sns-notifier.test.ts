import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSnsNotifier, snsSubject } from '../../src/adapters/sns/notifier.js';
import { subscribedTopic, type SubscribedTopic } from '../support/sns-queue.js';

/**
 * The SNS notifier against the run's fauxqs emulator (global-setup.ts), which serves
 * SNS, SQS and S3 on one endpoint: a topic with an SQS queue subscribed (raw delivery),
 * a publish through the adapter, and the message read back from the queue.
 */
let topic: SubscribedTopic;
let topicArn: string;
let sns: SubscribedTopic['sns'];
const receiveOne = () => topic.receiveOne();

beforeAll(async () => {
  topic = await subscribedTopic('incidents');
  ({ topicArn, sns } = topic);
});

afterAll(() => topic.destroy());

describe('SNS notifier (fauxqs)', () => {
  it('publishes the message as JSON to the topic; a raw SQS subscription receives exactly it', async () => {
    const notifier = openSnsNotifier({ topicArn, client: sns });
    const message = {
      kind: 'delivery.custody_retained',
      invocation_id: 'inv-0001',
      route: 'daily',
      retained: true,
      count: 2,
      nested: { a: [1, 'b', null] },
    };
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
    expect(error).toMatchObject({
      name: 'Cutpoint.EffectFailed',
      code: 'cutpoint.effect_failed',
      cutPoint: 'notifier.publish',
    });
    expect((error as Error).message).toContain('cutpoint-missing-');
  });
});
