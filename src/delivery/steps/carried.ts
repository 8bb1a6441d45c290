import { ValidationError } from '../../domain/errors.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Fence } from '../../domain/fence.js';
import { requireFence } from '../journal/journaled-write.js';
import type { InvocationRef } from '../journal/keys.js';
import { parseCustody, parseInvocation, type CustodyRecord, type InvocationRecord } from '../journal/records.js';

/**
 * What the execution carries from step to step (`known` in a step's input and output):
 * the invocation record and the target's custody record exactly as the previous step
 * left them, versions included. A step that gets them reads nothing before it acts:
 * every write it makes is conditioned on the carried invocation version and custody
 * fence (journal/journaled-write.ts), so a carried state that is no longer current makes
 * the write CONFLICT, and only then is the journal read again (docs/delivery.md "Windows of any
 * size: parts"). A retry of a step (the flow's Retry passes `retry` = `$$.State.RetryCount`)
 * ignores what it carries and reads, since its first attempt may have written.
 */
export interface Carried {
  invocation: InvocationRecord;
  custody: CustodyRecord & { fence: Fence };
}

/**
 * The carried state checked as strictly as a read of the store would be (the same
 * parsers), for exactly this invocation, target and fence. Anything else is
 * `delivery.step_input_invalid`: a carried state is never half trusted.
 */
export function parseCarried(value: unknown, ref: InvocationRef, fence: Fence): Carried {
  const v = value as { invocation?: unknown; custody?: unknown } | null;
  try {
    if (!v || typeof v !== 'object' || !isItem(v.invocation) || !isItem(v.custody)) throw new Error('shape');
    const invocation = parseInvocation(v.invocation, ref);
    const custody = parseCustody(v.custody, ref.targetId);
    requireFence(ref, custody, fence);
    return { invocation, custody };
  } catch {
    throw new ValidationError(
      'delivery.step_input_invalid',
      'the carried journal state is malformed or belongs to another invocation, target or fence',
    );
  }
}

function isItem(v: unknown): v is AuthorityItem {
  return !!v && typeof v === 'object' && Number.isSafeInteger((v as { version?: unknown }).version);
}

/** Refusals that a carried state which is no longer current can cause. */
const STALE_REFUSALS: ReadonlySet<string> = new Set([
  'Delivery.TransitionPrecondition',
  'Delivery.JournalStateConflict',
  'Delivery.IllegalTransition',
]);

/**
 * A step that decides again from the journal when, on what it carried, it refused or did
 * nothing (`acted: false`): either may only say the carried state is stale (a redrive, a
 * retry without a retry count, a caller reusing an older output). On the happy path every
 * step acts, so this costs a read only off it. Without a carried state the step's own
 * result stands.
 */
export function rereadOnStale<O, D>(
  step: (input: unknown, deps: D) => Promise<O>,
): (input: unknown, deps: D) => Promise<O> {
  return async (input, deps) => {
    const known = (input as { known?: unknown } | null)?.known;
    if (known === undefined || known === null) return step(input, deps);
    const fromJournal = () => step({ ...(input as object), known: null }, deps);
    let out: O;
    try {
      out = await step(input, deps);
    } catch (error) {
      if (!STALE_REFUSALS.has((error as Error).name)) throw error;
      return fromJournal();
    }
    return (out as { acted?: unknown }).acted === false ? fromJournal() : out;
  };
}
