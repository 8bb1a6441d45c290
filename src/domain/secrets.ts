import { ConfigError } from './errors.js';

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
