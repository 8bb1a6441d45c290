import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretUnavailableError, secretNameOf } from '../../domain/secrets.js';
import { secretTtlMsFromEnv, type SecretCache } from './secret-cache.js';
import type { AwsClientOptions } from '../aws-clients.js';

export interface SecretsManagerSecretsOptions {
  /** Defaults to a client with the SDK's own region and credential resolution (the Lambda's role). */
  client?: SecretsManagerClient;
  /** How long a secret is reused, in whole seconds' worth of milliseconds; default from CUTPOINT_SECRET_TTL_SECONDS, else 5 minutes. */
  ttlMs?: number;
  /** Applied to the default client (the Lambda layer passes X-Ray capture, as for the data clients: aws-clients.ts). */
  instrument?: AwsClientOptions['instrument'];
}

/**
 * SecretsPort on AWS Secrets Manager (GetSecretValue, AWSCURRENT) behind Powertools
 * Parameters' SecretsProvider, over our client (instrumented like the data clients): its
 * cache keeps a read secret for the TTL (`maxAge`, whole seconds; 0 reads on every use),
 * a failed read is not cached, and `invalidate(arn)` makes the next read of that secret a
 * forced fetch (`forceFetch`) — kept until a fetch succeeds. The SecretString must be a JSON
 * object (parsed here on every use, so a secret that is not one fails every use and is
 * re-read, never remembered as good); a binary secret is refused.
 *
 * Errors carry the secret's NAME and a reason, never the value, the account or the SDK's
 * message (which can quote the request): Powertools' GetParameterError is unwrapped and
 * sorted by the SDK exception's name alone.
 */
export class SecretsManagerSecrets implements SecretCache {
  private readonly provider: SecretsProvider;
  private readonly maxAge: number;
  /** Secrets whose next read must bypass the cache (invalidated, or not a JSON object when last read). */
  private readonly stale = new Set<string>();

  constructor(options: SecretsManagerSecretsOptions = {}) {
    const client = options.client ?? (options.instrument ?? ((c) => c))(new SecretsManagerClient({}));
    this.provider = new SecretsProvider({ awsSdkV3Client: client });
    this.maxAge = Math.floor((options.ttlMs ?? secretTtlMsFromEnv(process.env)) / 1000);
  }

  async secretJson(arn: string): Promise<Record<string, unknown>> {
    const name = secretNameOf(arn);
    let value: string | Uint8Array | undefined;
    try {
      value = await this.provider.get(arn, { maxAge: this.maxAge, forceFetch: this.stale.has(arn) });
    } catch (error) {
      throw unavailable(name, error instanceof GetParameterError ? error.cause : error);
    }
    try {
      const parsed = jsonObjectOf(name, value);
      this.stale.delete(arn);
      return parsed;
    } catch (error) {
      this.stale.add(arn);
      throw error;
    }
  }

  invalidate(arn: string): void {
    this.stale.add(arn);
  }
}

function jsonObjectOf(name: string, secretString: string | Uint8Array | undefined): Record<string, unknown> {
  if (typeof secretString !== 'string') {
    throw new SecretUnavailableError(
      name,
      'binary',
      secretString !== undefined ? 'is a binary secret; a JSON SecretString is required' : 'has no SecretString',
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    // JSON.parse's message quotes the text: say only that it is not JSON.
    throw new SecretUnavailableError(name, 'not_json_object', 'SecretString is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SecretUnavailableError(name, 'not_json_object', 'SecretString is not a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** Sorts an SDK failure by its exception name only; its message is never copied. */
function unavailable(name: string, error: unknown): SecretUnavailableError {
  const code = error instanceof Error ? error.name : '';
  switch (code) {
    case 'ResourceNotFoundException':
      return new SecretUnavailableError(name, 'not_found', 'does not exist (or has no AWSCURRENT version)');
    case 'AccessDeniedException':
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
      return new SecretUnavailableError(name, 'access_denied', `cannot be read by this role (${code})`);
    case 'DecryptionFailure':
      return new SecretUnavailableError(
        name,
        'access_denied',
        'cannot be decrypted with its KMS key by this role (DecryptionFailure)',
      );
    case 'InvalidRequestException':
    case 'InvalidParameterException':
      return new SecretUnavailableError(
        name,
        'not_found',
        `cannot be read (${code}; deleted or scheduled for deletion?)`,
      );
    default:
      return new SecretUnavailableError(
        name,
        'unreachable',
        `Secrets Manager did not answer (${/^[A-Za-z]{1,64}$/.test(code) ? code : 'error'})`,
      );
  }
}

/** The per-cold-start port: one client and one secret cache for the whole container. */
export function openSecretsManager(options: SecretsManagerSecretsOptions = {}): SecretCache {
  return new SecretsManagerSecrets(options);
}
