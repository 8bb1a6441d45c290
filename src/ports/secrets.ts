import { ConfigError } from '../domain/errors.js';

/**
 * Where a deployed route's connection settings live: AWS Secrets Manager, addressed by
 * the ARN a manifest binding names (`secret_arn`). The port returns the secret's JSON
 * object; what the keys mean is src/delivery/bindings.ts's business.
 *
 * Contract every adapter keeps:
 * - On AWS a successful read is cached for a TTL (src/adapters/secrets-manager/secret-cache.ts,
 *   default 5 minutes), a failed one is not (the next invocation tries again).
 * - A secret that is missing, denied, unreachable, binary, or not a JSON object fails
 *   with {@link SecretUnavailableError}. Its message names the secret by its NAME only
 *   (never the account, never the value); the SDK's own error is not kept as `cause`,
 *   so nothing it quoted can reach a log through the error.
 */
export interface SecretsPort {
  /** The secret's `SecretString`, parsed; always a plain JSON object. */
  secretJson(arn: string): Promise<Record<string, unknown>>;
}

/** Why a secret could not be used; stable, for diagnostics and tests. */
export type SecretUnavailableReason = 'not_found' | 'access_denied' | 'not_json_object' | 'binary' | 'unreachable';

/**
 * A secret cannot be read or parsed. A `Cutpoint.ConfigError` (a deployed step fails its
 * cold start; the flow's catch lists already name it) with the stable code
 * `delivery.binding_secret_unavailable`.
 */
export class SecretUnavailableError extends ConfigError {
  readonly secretName: string;
  readonly reason: SecretUnavailableReason;
  readonly detail: string;
  readonly binding?: string;
  constructor(secretName: string, reason: SecretUnavailableReason, detail: string, binding?: string) {
    super(
      'delivery.binding_secret_unavailable',
      `${binding === undefined ? '' : `binding ${binding}: `}secret ${secretName}: ${detail}`,
    );
    this.secretName = secretName;
    this.reason = reason;
    this.detail = detail;
    if (binding !== undefined) this.binding = binding;
  }

  /** The same failure, its message prefixed with the manifest binding that named the secret. */
  forBinding(binding: string): SecretUnavailableError {
    return new SecretUnavailableError(this.secretName, this.reason, this.detail, binding);
  }
}

/**
 * The secret's name from its ARN (`arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME` →
 * `NAME`, with the random suffix Secrets Manager may have appended), safe to print;
 * anything that is not a Secrets Manager ARN prints as `(not a secret ARN)`, so a value
 * pasted into `secret_arn` is never echoed.
 */
export function secretNameOf(arn: string): string {
  const match = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:([A-Za-z0-9/_+=.@-]{1,512})$/.exec(arn);
  return match?.[1] ?? '(not a secret ARN)';
}
