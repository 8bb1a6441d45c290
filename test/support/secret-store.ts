import { SecretsManagerClient, type GetSecretValueCommandOutput } from '@aws-sdk/client-secrets-manager';
import { vi } from 'vitest';
import { SecretsManagerSecrets } from '../../src/adapters/secrets-manager/secrets.js';

/**
 * Secret values the test sets, served to a real SecretsManagerClient by a middleware that
 * answers GetSecretValue before anything is signed or sent (no AWS, no emulator), counting
 * reads. `failNext` makes the next read fail as Secrets Manager's own service error does.
 */
export class SecretStore {
  readonly values = new Map<string, Record<string, unknown>>();
  reads = 0;
  failNext = false;
  readonly client: SecretsManagerClient;

  constructor() {
    this.client = new SecretsManagerClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'test-only', secretAccessKey: 'test-only' },
    });
    this.client.middlewareStack.add(
      () => async (args) => ({
        output: this.answer((args.input as { SecretId: string }).SecretId) as never,
        response: {},
      }),
      { step: 'initialize', name: 'secretStore' },
    );
  }

  private answer(arn: string): GetSecretValueCommandOutput {
    this.reads++;
    if (this.failNext) {
      this.failNext = false;
      throw Object.assign(new Error('service unavailable'), { name: 'InternalServiceError' });
    }
    return { SecretString: JSON.stringify(this.values.get(arn)), $metadata: {} };
  }
}

/**
 * The secret cache the Lambdas build (secrets.ts: Powertools' SecretsProvider) over `store`,
 * and a clock the test moves: Powertools times its cache with Date, so Date alone is faked
 * (timers stay real); the test file restores it (`afterEach(() => vi.useRealTimers())`).
 */
export function cachedSecrets(store: SecretStore, ttlMs: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_000_000);
  return {
    secrets: new SecretsManagerSecrets({ client: store.client, ttlMs }),
    advance: (ms: number) => vi.setSystemTime(Date.now() + ms),
  };
}
