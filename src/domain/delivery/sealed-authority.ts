import { isAbsolute, normalize } from 'node:path';
import { canonicalDigest, sha256Hex } from '../digest.js';
import { CutpointError, ValidationError } from '../errors.js';
import { isInvocationId, validateInvocationId } from './identifiers.js';
import { JournalUnavailableError } from './journal-states.js';
import { parseSelector } from './manifest.js';
import type { Binding, SelectedRoute, Selector } from './manifest-types.js';
import { validateSealedWindow, type SealedWindow } from './window.js';

/**
 * The recovery authority (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"): before any source row I/O an invocation seals the
 * exact UTC window and digests of everything a later live action must agree with — the
 * manifest, the selector, the connection bindings, the identity the target reported, and
 * the work root. Every live recovery action recomputes the digests from what the operator
 * supplies and compares; any mismatch performs no target mutation and leaves custody held.
 *
 * Only digests and the window are sealed, never values: a binding digest covers the
 * binding's kind, environment variable names and secret ARN, which name credentials but
 * are not credentials. Recovery restores the window from the seal and never re-resolves
 * the route's window policy (see window.ts).
 */

export const SEAL_VERSION = 1;

/**
 * What the target said about itself when the run started (e.g. `{ server, database,
 * principal }` from `@@SERVERNAME`, `DB_NAME()`, `SUSER_SNAME()`): recovery against a
 * binding that now points at another server or login must be refused. Opaque to this
 * module; values are digested, never sealed in clear.
 */
export type TargetIdentity = Readonly<Record<string, string | number | boolean>>;

export interface AuthorityInput {
  invocationId: string;
  /** The exact manifest text; its digest is the plain SHA-256 (`sha256sum route.yaml`). */
  manifestText: string;
  /** `route.yaml#daily` or its parsed form; pass the file as the caller resolved it (absolute). */
  selector: Selector | string;
  route: SelectedRoute;
  targetIdentity: TargetIdentity;
  /** Absolute path of the invocation's work root (chunk files, evidence drafts). */
  workRoot: string;
}

export interface AuthorityDigests {
  invocationId: string;
  manifestDigest: string;
  selectorDigest: string;
  bindingDigest: string;
  identityDigest: string;
  workRootDigest: string;
}

export interface SealedAuthority extends AuthorityDigests {
  version: typeof SEAL_VERSION;
  window: SealedWindow;
  /** Digest over every other field: a seal edited or torn in the journal is detectable. */
  sealDigest: string;
}

/** Fields `verifySealed` can report, in this order. */
export const AUTHORITY_FIELDS = [
  'invocationId',
  'manifestDigest',
  'selectorDigest',
  'bindingDigest',
  'identityDigest',
  'workRootDigest',
  'sealDigest',
] as const;
export type AuthorityField = (typeof AUTHORITY_FIELDS)[number];

/**
 * The non-secret description of a binding that its digest covers. Built field by field
 * (not by spreading the binding) so a value added to Binding later can never leak in
 * unnoticed.
 */
export function bindingDescriptor(binding: Binding): Record<string, string | undefined> {
  return {
    name: binding.name,
    kind: binding.kind,
    url_env: binding.urlEnv,
    username_env: binding.usernameEnv,
    password_env: binding.passwordEnv,
    secret_arn: binding.secretArn,
  };
}

/** Keys that must never be part of an identity: it would put a credential in a digest. */
const CREDENTIAL_KEY = /pass|pwd|secret|token|credential|conn|dsn|url|uri/i;

function validateIdentity(identity: TargetIdentity): TargetIdentity {
  if (!identity || typeof identity !== 'object' || Array.isArray(identity) || Object.keys(identity).length === 0) {
    throw new ValidationError(
      'delivery.identity_invalid',
      'target identity must be a non-empty object of scalar facts',
    );
  }
  for (const [key, value] of Object.entries(identity)) {
    if (CREDENTIAL_KEY.test(key)) {
      throw new ValidationError(
        'delivery.identity_invalid',
        `target identity key ${key} looks like a credential; identity holds observed facts only`,
      );
    }
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw new ValidationError(
        'delivery.identity_invalid',
        `target identity ${key} must be a string, number or boolean`,
      );
    }
  }
  return identity;
}

/** The work root as one canonical string: `/w/x/` and `/w/./x` are the same root. */
function canonicalWorkRoot(workRoot: string): string {
  if (typeof workRoot !== 'string' || !isAbsolute(workRoot)) {
    throw new ValidationError('delivery.work_root_invalid', 'work root must be an absolute path');
  }
  const n = normalize(workRoot);
  return n.length > 1 && (n.endsWith('/') || n.endsWith('\\')) ? n.slice(0, -1) : n;
}

/** The digest a seal keeps of its work root: what a later action compares its own root with. */
export function workRootDigestOf(workRoot: string): string {
  return canonicalDigest({ kind: 'cutpoint.delivery.work-root', path: canonicalWorkRoot(workRoot) });
}

/**
 * Digests of what the operator supplies now. Used at seal time and again by every live
 * recovery action. Each canonical digest is domain-separated by a `kind`, so equal
 * content in two fields never yields equal digests.
 */
export function recomputeAuthority(input: AuthorityInput): AuthorityDigests {
  validateInvocationId(input.invocationId);
  if (typeof input.manifestText !== 'string')
    throw new ValidationError('delivery.manifest_invalid', 'manifest text must be a string');
  const selector =
    typeof input.selector === 'string'
      ? parseSelector(input.selector)
      : parseSelector(`${input.selector.file}#${input.selector.route}`);
  if (selector.route !== input.route.name) {
    throw new ValidationError(
      'delivery.selector_invalid',
      `selector names route ${selector.route} but the route given is ${input.route.name}`,
    );
  }
  return {
    invocationId: input.invocationId,
    manifestDigest: sha256Hex(input.manifestText),
    selectorDigest: canonicalDigest({ kind: 'cutpoint.delivery.selector', file: selector.file, route: selector.route }),
    bindingDigest: canonicalDigest({
      kind: 'cutpoint.delivery.bindings',
      source: bindingDescriptor(input.route.sourceBinding),
      target: bindingDescriptor(input.route.targetBinding),
    }),
    identityDigest: canonicalDigest({
      kind: 'cutpoint.delivery.target-identity',
      identity: validateIdentity(input.targetIdentity),
    }),
    workRootDigest: workRootDigestOf(input.workRoot),
  };
}

function sealDigestOf(seal: Omit<SealedAuthority, 'sealDigest'>): string {
  return canonicalDigest({
    kind: 'cutpoint.delivery.seal',
    version: seal.version,
    invocationId: seal.invocationId,
    manifestDigest: seal.manifestDigest,
    selectorDigest: seal.selectorDigest,
    bindingDigest: seal.bindingDigest,
    identityDigest: seal.identityDigest,
    workRootDigest: seal.workRootDigest,
    window: { start: seal.window.start, end: seal.window.end },
  });
}

/**
 * Seals the authority and the window an invocation runs under. The window must already
 * be resolved (resolveWindow) and is sealed as given.
 */
export function sealAuthority(input: AuthorityInput & { window: SealedWindow }): SealedAuthority {
  const digests = recomputeAuthority(input);
  const window = validateSealedWindow(input.window);
  const unsealed = { version: SEAL_VERSION, ...digests, window } as const;
  return { ...unsealed, sealDigest: sealDigestOf(unsealed) };
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * Checks a seal read back from the journal: shape, digests, window, and that its
 * sealDigest matches its contents. Anything else is an inconsistent journal.
 */
export function validateSealedAuthority(value: unknown): SealedAuthority {
  const inconsistent = (what: string) =>
    new JournalUnavailableError('delivery.recovery_journal_inconsistent', `sealed authority ${what}`);
  const v = value as Partial<Record<keyof SealedAuthority, unknown>> | null;
  if (!v || typeof v !== 'object') throw inconsistent('is missing');
  if (v.version !== SEAL_VERSION) throw inconsistent('has an unsupported version');
  if (!isInvocationId(v.invocationId)) throw inconsistent('has an invalid invocation id');
  for (const field of [
    'manifestDigest',
    'selectorDigest',
    'bindingDigest',
    'identityDigest',
    'workRootDigest',
    'sealDigest',
  ] as const) {
    if (typeof v[field] !== 'string' || !HEX64.test(v[field])) throw inconsistent(`has an invalid ${field}`);
  }
  let window: SealedWindow;
  try {
    window = validateSealedWindow(v.window);
  } catch {
    throw inconsistent('has an invalid window');
  }
  const seal = { ...(v as SealedAuthority), window };
  const sealed: SealedAuthority = {
    version: SEAL_VERSION,
    invocationId: seal.invocationId,
    manifestDigest: seal.manifestDigest,
    selectorDigest: seal.selectorDigest,
    bindingDigest: seal.bindingDigest,
    identityDigest: seal.identityDigest,
    workRootDigest: seal.workRootDigest,
    window,
    sealDigest: seal.sealDigest,
  };
  if (sealDigestOf(sealed) !== sealed.sealDigest) throw inconsistent('does not match its seal digest');
  return sealed;
}

/**
 * The fields where the seal and the recomputed digests disagree (empty: they agree).
 * `sealDigest` is listed when the seal no longer matches its own contents.
 */
export function verifySealed(sealed: SealedAuthority, recomputed: AuthorityDigests): AuthorityField[] {
  const mismatched: AuthorityField[] = [];
  for (const field of AUTHORITY_FIELDS) {
    if (field === 'sealDigest') {
      if (sealDigestOf(sealed) !== sealed.sealDigest) mismatched.push(field);
    } else if (sealed[field] !== recomputed[field]) {
      mismatched.push(field);
    }
  }
  return mismatched;
}

/** Names the fields that differ, never their values or digests. */
export class AuthorityMismatchError extends CutpointError {
  constructor(readonly fields: readonly AuthorityField[]) {
    super(
      'Delivery.AuthorityMismatch',
      'delivery.recovery_authority_mismatch',
      `recovery authority does not match the seal: ${fields.join(', ')}; nothing was mutated and custody is held`,
    );
  }
}

/** Every live action calls this after taking custody and before any target mutation. */
export function assertAuthority(sealed: SealedAuthority, recomputed: AuthorityDigests): void {
  const fields = verifySealed(sealed, recomputed);
  if (fields.length > 0) throw new AuthorityMismatchError(fields);
}
