import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import { describe, expect, it } from 'vitest';
import { SecretsManagerSecrets } from '../../src/adapters/secrets-manager/secrets.js';
import { SnsNotifier } from '../../src/adapters/sns/notifier.js';

/**
 * The Lambda layer traces every SDK client through one hook (functions/lib/telemetry.ts
 * instrumentClient): the data clients (aws-clients.ts) and, here, the Secrets Manager and
 * SNS clients the adapters build for themselves. No request is sent.
 */
describe('the instrument hook reaches the clients an adapter builds itself', () => {
  it('Secrets Manager and SNS pass their default client through it, once', () => {
    const seen: unknown[] = [];
    const instrument = <C extends object>(client: C): C => {
      seen.push(client);
      return client;
    };
    new SecretsManagerSecrets({ instrument });
    new SnsNotifier({ topicArn: 'arn:aws:sns:eu-west-1:123456789012:incidents', instrument });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBeInstanceOf(SecretsManagerClient);
    expect(seen[1]).toBeInstanceOf(SNSClient);
  });

  it('a client given by the caller is used as it is (tests and the CLI pass their own)', () => {
    const seen: unknown[] = [];
    const client = new SNSClient({ region: 'eu-west-1' });
    new SnsNotifier({
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:incidents',
      client,
      instrument: (c) => (seen.push(c), c),
    });
    expect(seen).toEqual([]);
  });
});
