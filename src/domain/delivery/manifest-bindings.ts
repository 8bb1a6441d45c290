import { isManifestName } from './identifiers.js';
import type { Checker, Segment } from './manifest-checker.js';
import { BINDING_KEYS, BindingSchema } from './manifest-schema.js';
import { isRecord } from './manifest-shape.js';
import type { Binding, BindingKind } from './manifest-types.js';

/**
 * Bindings: where a connection's credentials live (environment variable names, a Secrets
 * Manager ARN), never the credentials themselves; and a route's references to them. The
 * shape is BindingSchema's; here, what it cannot say by itself.
 */

/** Keys that would hold a credential or connection value in the manifest itself. */
const LITERAL_CREDENTIAL_KEY = /pass|pwd|secret|token|credential|auth|user|login|url|uri|dsn|conn|key/i;

/**
 * Before the shape: a key that would hold a credential (`password`, `url`, …) is refused
 * with `delivery.binding_literal_credential` and removed, so it is not reported again as
 * an unknown key.
 */
export function refuseLiteralCredentials(bindings: unknown, check: Checker): void {
  if (!isRecord(bindings)) return;
  for (const [name, value] of Object.entries(bindings)) {
    if (!isRecord(value)) continue;
    for (const key of Object.keys(value)) {
      if ((BINDING_KEYS as readonly string[]).includes(key) || !LITERAL_CREDENTIAL_KEY.test(key)) continue;
      check.add(
        ['bindings', name, key],
        'literal credentials are not allowed in a manifest; name environment variables (url_env, username_env, password_env) or a Secrets Manager secret (secret_arn)',
        'delivery.binding_literal_credential',
      );
      delete value[key];
    }
  }
}

export interface BindingScope {
  /** The valid bindings. */
  bindings: Record<string, Binding>;
  /** Declared names, valid or not: a route naming an invalid binding is not "unknown". */
  declared: Set<string>;
  /** Without a readable bindings section, references cannot be judged: it is reported once. */
  readable: boolean;
}

/** The bindings section's valid bindings, each needing somewhere to read its connection from. */
export function bindingScope(bindings: unknown, check: Checker): BindingScope {
  const scope: BindingScope = {
    bindings: Object.create(null) as Record<string, Binding>,
    declared: new Set(),
    readable: isRecord(bindings),
  };
  if (!isRecord(bindings)) return scope;
  for (const [name, value] of Object.entries(bindings)) {
    if (!isManifestName(name)) continue;
    scope.declared.add(name);
    if (!isRecord(value)) continue;
    const path = ['bindings', name];
    if (!Object.hasOwn(value, 'url_env') && !Object.hasOwn(value, 'secret_arn')) {
      check.add(path, 'needs url_env (local runs) or secret_arn (AWS), or both');
    }
    const parsed = BindingSchema.safeParse(value);
    if (!parsed.success || check.has(path)) continue;
    const b = parsed.data;
    scope.bindings[name] = {
      name,
      kind: b.kind,
      ...(b.url_env !== undefined && { urlEnv: b.url_env }),
      ...(b.username_env !== undefined && { usernameEnv: b.username_env }),
      ...(b.password_env !== undefined && { passwordEnv: b.password_env }),
      ...(b.secret_arn !== undefined && { secretArn: b.secret_arn }),
    };
  }
  return scope;
}

/** A route's reference to a binding (its shape already checked): declared, valid, of a kind the role takes. */
export function validateBindingRef(
  value: unknown,
  path: Segment[],
  scope: BindingScope,
  kinds: readonly BindingKind[],
  role: string,
  check: Checker,
): string | undefined {
  if (!isManifestName(value) || !scope.readable) return undefined;
  if (!scope.declared.has(value))
    return check.add(path, 'names a binding that is not declared under bindings', 'delivery.binding_unknown');
  const binding = scope.bindings[value];
  if (!binding) return undefined; // declared but invalid: already reported there
  if (!kinds.includes(binding.kind)) return check.add(path, `a ${role} binding must be of kind ${kinds.join(' or ')}`);
  return value;
}
