import type { DeliveryDeps } from '../delivery/deps.js';
import type { InvocationRecord } from '../delivery/journal/records.js';
import { workRootOf } from '../delivery/steps/common.js';
import {
  AuthorityMismatchError,
  recomputeAuthority,
  verifySealed,
  type AuthorityField,
} from '../domain/delivery/sealed-authority.js';
import { ValidationError } from '../domain/errors.js';

/** The manifest an observation is given: the exact text and selector (the flow's Task input carries both). */
export interface GivenManifest {
  manifestText?: unknown;
  selector?: unknown;
}

/** Only the seal's manifest and selector digests need the text; the rest is recomputed from the route and what is observed. */
const NEEDS_TEXT: ReadonlySet<AuthorityField> = new Set(['manifestDigest', 'selectorDigest']);

/**
 * The seal recomputed from manifest, selector and identity (docs/rules.md#bounded-reader), run
 * BEFORE the reader guard is taken, so a refusal writes nothing: the operation's seal against
 * the bindings of the route given, the target's identity observed now, the work root under this
 * object store and — when the caller hands the exact text (the flow always does) — the manifest
 * and selector digests. A mismatch is Delivery.AuthorityMismatch
 * (`delivery.recovery_authority_mismatch`, docs/rules.md#capsule-versions), naming the fields,
 * never a digest. In-process callers that pass only the parsed route get every check but the
 * two that need the text.
 */
export async function assertObservedSeal(
  given: GivenManifest,
  record: InvocationRecord,
  deps: DeliveryDeps,
): Promise<void> {
  const hasText = given.manifestText !== undefined || given.selector !== undefined;
  if (hasText && (typeof given.manifestText !== 'string' || typeof given.selector !== 'string')) {
    throw new ValidationError('delivery.step_input_invalid', 'manifestText and selector come together, both strings');
  }
  const recomputed = recomputeAuthority({
    invocationId: record.invocationId,
    manifestText: hasText ? (given.manifestText as string) : '',
    selector: hasText ? (given.selector as string) : `/observe#${deps.route.name}`,
    route: deps.route,
    targetIdentity: await deps.target.identity(),
    workRoot: workRootOf(deps),
  });
  const fields = verifySealed(record.sealed, recomputed).filter((field) => hasText || !NEEDS_TEXT.has(field));
  if (fields.length > 0) throw new AuthorityMismatchError(fields);
}
