import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { EffectFailedError, OutcomeUnknownError } from '../../domain/errors.js';
import type { Notifier } from '../../ports/notifier.js';

/** The cut point a failed publish names (errors carry one). */
export const NOTIFY_CUT_POINT = 'notifier.publish';

/** SNS refuses a Subject of 100 characters or more, or one with line breaks/control characters. */
export const MAX_SUBJECT_LENGTH = 99;
/** SNS's message size limit (256 KiB, UTF-8). */
export const MAX_MESSAGE_BYTES = 262_144;
import type { AwsClientOptions } from '../aws-clients.js';

export interface SnsNotifierOptions {
  /** The topic every message goes to. */
  topicArn: string;
  /** Defaults to a client with the SDK's own region and credential resolution (the Lambda's role). */
  client?: SNSClient;
  /** Applied to the default client (the Lambda layer passes X-Ray capture, as for the data clients: aws-clients.ts). */
  instrument?: AwsClientOptions['instrument'];
}

/**
 * Notifier on Amazon SNS: one Publish per message to the topic given at construction,
 * `Message` = the message as JSON, `Subject` = the subject made acceptable to SNS
 * (printable ASCII, one line, under 100 characters; omitted if nothing is left).
 *
 * A failure leaves as a stable error naming the topic and the SDK's exception name only:
 * `Cutpoint.EffectFailed` when SNS answered with a client error (4xx: the message was
 * definitely not published) or the message is too large, `Cutpoint.OutcomeUnknown`
 * otherwise (5xx, timeout, lost connection: it may have been published). Subscribers must
 * tolerate duplicates either way: a notification is at-least-once.
 */
export class SnsNotifier implements Notifier {
  private readonly client: SNSClient;
  private readonly topicArn: string;
  private readonly topicName: string;

  constructor(options: SnsNotifierOptions) {
    this.topicArn = options.topicArn;
    this.topicName = topicNameOf(options.topicArn);
    this.client = options.client ?? (options.instrument ?? ((c) => c))(new SNSClient({}));
  }

  async publish(subject: string, message: Record<string, unknown>): Promise<void> {
    const body = JSON.stringify(message);
    if (Buffer.byteLength(body, 'utf8') > MAX_MESSAGE_BYTES) {
      throw new EffectFailedError(
        NOTIFY_CUT_POINT,
        `notification to topic ${this.topicName} not published: the message exceeds ${MAX_MESSAGE_BYTES} bytes`,
      );
    }
    const line = snsSubject(subject);
    try {
      await this.client.send(
        new PublishCommand({ TopicArn: this.topicArn, Message: body, ...(line ? { Subject: line } : {}) }),
      );
    } catch (error) {
      throw publishFailed(this.topicName, error);
    }
  }
}

export function openSnsNotifier(options: SnsNotifierOptions): Notifier {
  return new SnsNotifier(options);
}

/** A subject SNS accepts: line breaks and tabs become spaces, other control and non-ASCII characters `?`; one line, trimmed, < 100 chars. */
export function snsSubject(subject: string): string {
  const printable = subject
    .replace(/[\r\n\t\f\v]+/g, ' ')
    .replace(/[^ -~]/g, '?')
    .replace(/ {2,}/g, ' ')
    .trim();
  if (printable.length <= MAX_SUBJECT_LENGTH) return printable;
  return `${printable.slice(0, MAX_SUBJECT_LENGTH - 3).trimEnd()}...`;
}

function topicNameOf(arn: string): string {
  const match = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:([A-Za-z0-9_-]{1,256}(?:\.fifo)?)$/.exec(arn);
  return match?.[1] ?? '(not a topic ARN)';
}

function publishFailed(topicName: string, error: unknown): EffectFailedError | OutcomeUnknownError {
  const name = error instanceof Error && /^[A-Za-z.]{1,64}$/.test(error.name) ? error.name : 'error';
  const fault = (error as { $fault?: unknown } | null)?.$fault;
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
  const definite = fault === 'client' || (typeof status === 'number' && status >= 400 && status < 500);
  // The SDK's message is never copied: it can quote the request.
  return definite
    ? new EffectFailedError(NOTIFY_CUT_POINT, `notification to topic ${topicName} not published (${name})`)
    : new OutcomeUnknownError(
        NOTIFY_CUT_POINT,
        `notification to topic ${topicName} may not have been published (${name})`,
      );
}
