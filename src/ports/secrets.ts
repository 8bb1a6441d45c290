/**
 * Where a deployed route's connection settings live: AWS Secrets Manager, addressed by
 * the ARN a manifest binding names (`secret_arn`). The port returns the secret's JSON
 * object; what the keys mean is src/delivery/bindings.ts's business.
 *
 * Contract every adapter keeps:
 * - On AWS a successful read is cached for a TTL (src/adapters/secrets-manager/secrets.ts,
 *   Powertools' SecretsProvider; default 5 minutes), a failed one is not (the next invocation tries again).
 * - A secret that is missing, denied, unreachable, binary, or not a JSON object fails
 *   with SecretUnavailableError (src/domain/secrets.ts). Its message names the secret by its NAME only
 *   (never the account, never the value); the SDK's own error is not kept as `cause`,
 *   so nothing it quoted can reach a log through the error.
 */
export interface SecretsPort {
  /** The secret's `SecretString`, parsed; always a plain JSON object. */
  secretJson(arn: string): Promise<Record<string, unknown>>;
}
