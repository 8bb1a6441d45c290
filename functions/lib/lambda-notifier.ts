import { openSnsNotifier } from '../../src/adapters/sns/notifier.js';
import { ConfigError } from '../../src/domain/errors.js';
import type { Notifier } from '../../src/ports/notifier.js';
import { instrumentClient } from './telemetry.js';

/** Set by the CDK app on the functions that notify (registry `notifies`). */
export const INCIDENT_TOPIC_ENV = 'CUTPOINT_INCIDENT_TOPIC_ARN';

let cached: Promise<Notifier> | undefined;

/** The incident topic's notifier, built once per cold start; an unset topic fails the cold start. */
export function lambdaNotifier(): Promise<Notifier> {
  cached ??= Promise.resolve().then(() => {
    const topicArn = process.env[INCIDENT_TOPIC_ENV];
    if (!topicArn) throw new ConfigError('delivery.incident_topic_unset', `${INCIDENT_TOPIC_ENV} is not set; the incident topic cannot be notified`);
    return openSnsNotifier({ topicArn, instrument: instrumentClient });
  });
  return cached;
}
