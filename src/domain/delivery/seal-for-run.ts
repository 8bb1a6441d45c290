import { IdentityConflictError } from '../errors.js';
import type { SelectedRoute, Selector } from './manifest-types.js';
import { recomputeAuthority, type SealedAuthority } from './sealed-authority.js';

/**
 * A run under an invocation id that already has a journal (`delivery run --invocation-id`,
 * a re-run Begin) must be the same route of the same manifest: the route name, the
 * target, and the manifest, selector and binding digests of the seal. Otherwise the id is
 * sealed to another route or manifest and the run is refused before anything is opened,
 * observed or written (`delivery.invocation_sealed_elsewhere`, Cutpoint.IdentityConflict):
 * it must neither report that invocation as its own result nor name that invocation's
 * next command under this manifest. Names the differing fields, never digests.
 */
export function assertSealedForRun(
  record: { invocationId: string; route: string; targetId: string; sealed: SealedAuthority },
  run: { manifestText: string; selector: Selector | string; route: SelectedRoute; targetId: string },
): void {
  const differing: string[] = [];
  if (record.route !== run.route.name) differing.push('route');
  if (record.targetId !== run.targetId) differing.push('target');
  if (differing.length === 0) {
    const recomputed = recomputeAuthority({
      invocationId: record.invocationId,
      manifestText: run.manifestText,
      selector: run.selector,
      route: run.route,
      targetIdentity: { deferred: 'run' },
      workRoot: '/',
    });
    for (const field of ['manifestDigest', 'selectorDigest', 'bindingDigest'] as const)
      if (record.sealed[field] !== recomputed[field]) differing.push(field);
  }
  if (differing.length > 0) {
    throw new IdentityConflictError(
      'delivery.invocation_sealed_elsewhere',
      `invocation ${record.invocationId} is sealed to another route or manifest (${differing.join(', ')}); nothing was run. Inspect it: npx cutpoint delivery inspect ${record.invocationId} --format json`,
    );
  }
}
