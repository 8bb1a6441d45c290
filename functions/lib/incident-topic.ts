import type { AwsClientOptions } from '../../src/adapters/aws-clients.js';
import { openSnsNotifier } from '../../src/adapters/sns/notifier.js';
import { ConfigError } from '../../src/domain/errors.js';
import type { Notifier } from '../../src/ports/notifier.js';

/** Set by the CDK app on the functions that notify (registry `notifies`, and the recovery dispatcher). */
export const INCIDENT_TOPIC_ENV = 'CUTPOINT_INCIDENT_TOPIC_ARN';

/** The incident topic's notifier, from the Lambda's environment; an unset topic is a ConfigError. */
export function incidentNotifier(env: NodeJS.ProcessEnv, instrument?: AwsClientOptions['instrument']): Notifier {
  const topicArn = env[INCIDENT_TOPIC_ENV];
  if (!topicArn)
    throw new ConfigError(
      'delivery.incident_topic_unset',
      `${INCIDENT_TOPIC_ENV} is not set; the incident topic cannot be notified`,
    );
  return openSnsNotifier({ topicArn, ...(instrument ? { instrument } : {}) });
}
