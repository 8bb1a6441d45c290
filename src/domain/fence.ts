/**
 * Owner, session and epoch of the caller that holds a lane, a route or a task (docs/architecture.md
 * "Glossary": fence). Every fenced write of the authority (src/ports/authority.ts) names one;
 * a higher epoch fences every older one. `session` is the owner's session id: a secret.
 */
export interface Fence {
  owner: string;
  session: string;
  epoch: number;
}

/** The same holder: owner, session and epoch all equal (an absent fence is never the same). */
export function sameFence(a: Fence | undefined, b: Fence | undefined): boolean {
  return !!a && !!b && a.owner === b.owner && a.session === b.session && a.epoch === b.epoch;
}
