/**
 * Removes anything that looks like a credential or a connection string from a driver
 * message, plus the exact secrets given (password, connection string, user). The one
 * redactor: driver messages, and every error that leaves a Lambda handler
 * (functions/lib/telemetry-redact.ts) — also Secrets Manager ARNs, AWS access keys,
 * bearer tokens and `"key": value` credentials in JSON or YAML form.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join('[redacted]');
  return out
    // A file:// URL is a stack frame's path, never a credential.
    .replace(/\b(?!file:)[a-z][a-z0-9+.-]*:\/\/[^\s'"]*/gi, '[redacted-url]')
    .replace(/\b(password|pwd|user id|uid|user|username|server|data source|address)\s*=\s*[^;\s]*/gi, '$1=[redacted]')
    .replace(/\barn:aws[a-z-]*:secretsmanager:[^\s'",;)\]}]*/gi, '[redacted-secret-arn]')
    .replace(/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, '[redacted-aws-key]')
    .replace(/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, 'Bearer [redacted]')
    .replace(CREDENTIAL_PAIR, (_m, quote: string, key: string) => `${quote}${key}${quote}: [redacted]`);
}

/** `"password": "x"`, `secret_arn: x`, `token=x`: a credential-named key and its value. */
const CREDENTIAL_PAIR =
  /(["']?)\b(password|passwd|pwd|secret|secret_arn|secretarn|secret_?access_?key|aws_secret_access_key|session_?token|aws_session_token|token|access_token|api_?key|authorization|connection_?string|session)\1\s*[:=]\s*(?!\[redacted)("[^"]*"|'[^']*'|[^\s,;}\]]*)/gi;

/**
 * `value` without any property named `session`, at any depth: a fencing session id is a
 * secret of the writer that holds it, and a flow's output (a delivery's fence and carried
 * custody, an append's input passed through) may carry one. What a command prints of a
 * flow's output goes through here.
 */
export function withoutSessionIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSessionIds);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'session').map(([key, v]) => [key, withoutSessionIds(v)]));
}
