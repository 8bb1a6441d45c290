import {
  GetSecretValueCommand,
  SecretsManagerClient,
  type GetSecretValueCommandOutput,
} from '@aws-sdk/client-secrets-manager';
import { SecretUnavailableError, secretNameOf } from '../../domain/secrets.js';
import { type SecretsPort } from '../../ports/secrets.js';
import { secretTtlMsFromEnv, TtlSecretCache, type SecretCache } from './secret-cache.js';
import type { AwsClientOptions } from '../aws-clients.js';

export interface SecretsManagerSecretsOptions {
  /** Defaults to a client with the SDK's own region and credential resolution (the Lambda's role). */
  client?: SecretsManagerClient;
  /** How long a secret is reused (secret-cache.ts); default from CUTPOINT_SECRET_TTL_SECONDS, else 5 minutes. */
  ttlMs?: number;
  /** Applied to the default client (the Lambda layer passes X-Ray capture, as for the data clients: aws-clients.ts). */
  instrument?: AwsClientOptions['instrument'];
}

/**
 * SecretsPort on AWS Secrets Manager (GetSecretValue, AWSCURRENT). The SecretString must
 * be a JSON object; a binary secret is refused. Every call reads: openSecretsManager puts
 * the TTL cache (secret-cache.ts) in front, so a rotated secret is picked up within the
 * TTL and a failed read is retried by the next use rather than remembered.
 *
 * Errors carry the secret's NAME and a reason, never the value, the account or the SDK's
 * message (which can quote the request).
 */
export class SecretsManagerSecrets implements SecretsPort {
  private readonly client: SecretsManagerClient;

  constructor(options: SecretsManagerSecretsOptions = {}) {
    this.client = options.client ?? (options.instrument ?? ((c) => c))(new SecretsManagerClient({}));
  }

  async secretJson(arn: string): Promise<Record<string, unknown>> {
    const name = secretNameOf(arn);
    let out: GetSecretValueCommandOutput;
    try {
      out = await this.client.send(new GetSecretValueCommand({ SecretId: arn }));
    } catch (error) {
      throw unavailable(name, error);
    }
    const secretString = out.SecretString;
    if (secretString === undefined) {
      throw new SecretUnavailableError(
        name,
        'binary',
        out.SecretBinary !== undefined ? 'is a binary secret; a JSON SecretString is required' : 'has no SecretString',
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

/** The per-cold-start port: one client and one TTL cache for the whole container. */
export function openSecretsManager(options: SecretsManagerSecretsOptions = {}): SecretCache {
  return new TtlSecretCache(new SecretsManagerSecrets(options), {
    ttlMs: options.ttlMs ?? secretTtlMsFromEnv(process.env),
  });
}
