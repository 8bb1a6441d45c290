/**
 * Removes anything that looks like a credential or a connection string from a driver
 * message, plus the exact secrets given (password, connection string, user). The one
 * redactor: driver messages, every error that leaves a Lambda handler
 * (functions/lib/telemetry-redact.ts) and every diagnostic the CLI prints — also Secrets
 * Manager ARNs, AWS access keys, bearer tokens, `"key": value` credentials in JSON or YAML
 * form, and where an endpoint listens (`connect ECONNREFUSED 127.0.0.1:8000`, `localhost:8123`,
 * `[::1]:4566`, `ch.internal:9000`: an internal host and port is not the operator's business).
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 3) out = out.split(secret).join('[redacted]');
  return (
    out
      // A file:// URL is a stack frame's path, never a credential.
      .replace(/\b(?!file:)[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, '[redacted-url]')
      .replace(SYSTEM_ERROR_ADDRESS, '$1 [redacted-endpoint]')
      .replace(HOST_PORT, '[redacted-endpoint]')
      .replace(/\b(password|pwd|user id|uid|user|username|server|data source|address)\s*=\s*[^;\s]*/gi, '$1=[redacted]')
      .replace(/\barn:aws[a-z-]*:secretsmanager:[^\s'",;)\]}]*/gi, '[redacted-secret-arn]')
      .replace(/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, '[redacted-aws-key]')
      .replace(/\bBearer\s+[A-Za-z0-9._~+/=-]+/gi, 'Bearer [redacted]')
      .replace(CREDENTIAL_PAIR, (_m, quote: string, key: string) => `${quote}${key}${quote}: [redacted]`)
  );
}

/** Node's text for a connection that failed: `connect ECONNREFUSED ::1:8000`, `getaddrinfo ENOTFOUND ch.internal`. */
const SYSTEM_ERROR_ADDRESS =
  /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EADDRINUSE|EADDRNOTAVAIL|ENOTFOUND|EAI_AGAIN) (?!\[redacted)[^\s,;)'"]+/g;

/**
 * A host and port: an IPv4 address, `localhost`, a bracketed IPv6 address or a dotted host
 * name ending in a letter label — never a file's `path/index.mjs:10:5` (after a slash, or a
 * line and column).
 */
const HOST_PORT =
  /(?<![/\\])(?:\b(?:\d{1,3}\.){3}\d{1,3}|\blocalhost|\[[0-9a-f:.]+\]|\b(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*):\d{1,5}\b(?!:\d)/gi;

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
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'session')
      .map(([key, v]) => [key, withoutSessionIds(v)]),
  );
}
