import { isManifestName } from './identifiers.js';
import type { Checker, Segment } from './manifest-checker.js';
import { BINDING_KINDS, type Binding, type BindingKind } from './manifest-types.js';

/**
 * Bindings: where a connection's credentials live (environment variable names, a Secrets
 * Manager ARN), never the credentials themselves; and a route's references to them.
 */

const BINDING_KEYS = ['kind', 'url_env', 'username_env', 'password_env', 'secret_arn'] as const;
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Keys that would hold a credential or connection value in the manifest itself. */
const LITERAL_CREDENTIAL_KEY = /pass|pwd|secret|token|credential|auth|user|login|url|uri|dsn|conn|key/i;
/** An *_env value that is evidently a value, not a name: a URL, user@host, k=v;… */
const LOOKS_LIKE_VALUE = /[:/@=;]/;

export function validateBinding(name: string, value: unknown, check: Checker): Binding | undefined {
  const path = ['bindings', name];
  if (!(value instanceof Map)) return check.add(path, 'must be a mapping');
  const before = check.issues.length;
  const credentialKeys = new Set<string>();
  for (const key of value.keys()) {
    if (
      typeof key === 'string' &&
      !(BINDING_KEYS as readonly string[]).includes(key) &&
      LITERAL_CREDENTIAL_KEY.test(key)
    ) {
      credentialKeys.add(key);
      check.add(
        [...path, key],
        'literal credentials are not allowed in a manifest; name environment variables (url_env, username_env, password_env) or a Secrets Manager secret (secret_arn)',
        'delivery.binding_literal_credential',
      );
    }
  }
  const map = check.map(value, path, BINDING_KEYS, ['kind'], credentialKeys);
  if (!map) return undefined;
  const kind = map.has('kind') ? check.oneOf(map.get('kind'), [...path, 'kind'], BINDING_KINDS) : undefined;
  const env: Partial<Record<'url_env' | 'username_env' | 'password_env', string>> = {};
  for (const key of ['url_env', 'username_env', 'password_env'] as const) {
    if (!map.has(key)) continue;
    const v = map.get(key);
    if (typeof v === 'string' && ENV_NAME.test(v)) env[key] = v;
    else if (typeof v === 'string' && LOOKS_LIKE_VALUE.test(v)) {
      check.add(
        [...path, key],
        'must name an environment variable, not hold its value',
        'delivery.binding_literal_credential',
      );
    } else {
      check.add([...path, key], 'must be an environment variable name ([A-Z_][A-Z0-9_]*)');
    }
  }
  let secretArn: string | undefined;
  if (map.has('secret_arn')) {
    const v = map.get('secret_arn');
    if (typeof v === 'string' && SECRET_ARN.test(v)) secretArn = v;
    else
      check.add(
        [...path, 'secret_arn'],
        'must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
      );
  }
  if (!map.has('url_env') && !map.has('secret_arn')) {
    check.add(path, 'needs url_env (local runs) or secret_arn (AWS), or both');
  }
  if (check.issues.length > before || !kind) return undefined;
  return {
    name,
    kind,
    ...(env.url_env !== undefined && { urlEnv: env.url_env }),
    ...(env.username_env !== undefined && { usernameEnv: env.username_env }),
    ...(env.password_env !== undefined && { passwordEnv: env.password_env }),
    ...(secretArn !== undefined && { secretArn }),
  };
}

export interface BindingScope {
  bindings: Record<string, Binding>;
  declared: Set<string>;
  readable: boolean;
}

export function validateBindingRef(
  value: unknown,
  path: Segment[],
  scope: BindingScope,
  kinds: readonly BindingKind[],
  role: string,
  check: Checker,
): string | undefined {
  if (!isManifestName(value)) return check.add(path, 'must name a binding');
  if (!scope.readable) return undefined;
  if (!scope.declared.has(value))
    return check.add(path, 'names a binding that is not declared under bindings', 'delivery.binding_unknown');
  const binding = scope.bindings[value];
  if (!binding) return undefined; // declared but invalid: already reported there
  if (!kinds.includes(binding.kind)) return check.add(path, `a ${role} binding must be of kind ${kinds.join(' or ')}`);
  return value;
}
