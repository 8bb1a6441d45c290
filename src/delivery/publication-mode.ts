import type { Fence } from '../domain/fence.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import type { DropStatus } from '../domain/delivery/target-types.js';
import type { StepList } from './deliver-in-process.js';
import type { DeliveryDeps } from './deps.js';
import type { BeginRequest } from './begin-custody.js';
import type { JournaledResult } from './journal/journaled-write.js';
import type { InvocationRef } from './journal/keys.js';
import type { InvocationRecord } from './journal/records.js';
import type { RecoveryContext } from './recovery/recovery-session.js';
import type { StepOutput } from './steps/common.js';

/**
 * How a route's window is published, as the delivery steps and the recovery actions see it
 * (docs/architecture.md 'The layers lint holds': the publication mode). Two modes, picked by the composition
 * root from the route's `target.mode` (src/publication/modes.ts `publicationModeOf`):
 * - the SQL transaction (`replace_window`, `merge`; src/delivery/transaction-mode.ts): one
 *   target transaction that also writes the receipt row — deliver-window's flow;
 * - the ClickHouse exchange (`exchange`; src/publication/exchange-mode.ts): a candidate,
 *   its quality capsule, ONE EXCHANGE and the observation — publish-clickhouse's flow, its
 *   publication governed by the capsule (src/quality).
 * src/delivery never asks which one it has: it calls the mode where the two differ.
 */
export interface PublicationMode {
  /** The steps after begin, in flow order, for the in-process runs (deliverWindow, resume). */
  readonly steps: StepList;
  /** Legs begin's custody transaction adds for the target slot, decided on the custody item it read (none: undefined). */
  beginLegs(
    deps: Pick<DeliveryDeps, 'ports' | 'route'>,
    successor: { targetId: string; invocationId: string },
  ): BeginRequest['legs'];
  /**
   * In VERIFIED_EOF, before the stage is verified or published again: a publication that
   * landed without being journaled, journaled now (PUBLISHED, or INCIDENT_RETAINED when it
   * contradicts the journal); undefined when there is none to adopt.
   */
  adoptPublication(record: InvocationRecord, fence: Fence, deps: DeliveryDeps): Promise<JournaledResult | undefined>;
  /**
   * The gate of evidence and checkpoint after PUBLISHED: refuses (nothing written) unless
   * the publication's governance allows them, and returns what their writes carry;
   * undefined when the mode has no governance.
   */
  governance(deps: DeliveryDeps, ref: InvocationRef): Promise<PublicationGovernance | undefined>;
  /** The last step (SUCCEEDED → CUSTODY_RELEASED): what the publication leaves behind, dropped and proved absent. */
  readonly cleanup: (input: unknown, deps: DeliveryDeps) => Promise<StepOutput & { drop?: DropStatus }>;
  /**
   * `reconcile` in PUBLICATION_UNKNOWN: observes whether the publication happened and
   * journals what that proves, its first write on the record and custody the takeover left
   * (recovery-session.ts `knownOf`); returns the record as its last write left it.
   */
  reconcilePublication(ctx: RecoveryContext): Promise<InvocationRecord>;
  /** `retire`, before the stage is dropped: whether this invocation's publication exists after all. */
  retirePublication(ctx: RecoveryContext): Promise<PublicationRetirement>;
  /** `resume`'s custody takeover condition (recovery-session.ts `custodyCondition`); absent: none. */
  readonly resumeCondition?: (ports: Ports, ref: InvocationRef & { route: string }) => Promise<TransactionLeg[]>;
}

/** What the governance gate hands evidence and checkpoint. */
export interface PublicationGovernance {
  /** Legs that hold the governance state as read: a write carrying them fails if it moved since. */
  legs: TransactionLeg[];
  /** What the evidence document adds about the governance (safe: digests and keys). */
  evidence: Record<string, unknown>;
}

/**
 * What retire learns about the publication before it drops the stage:
 * - ABSENT_PROVED: nothing was published (and whatever the mode left besides the stage is gone);
 * - PUBLISHED: the publication exists (retire retains an incident, drops nothing);
 * - NOT_OURS: a name of ours holds an object that is not (incident, left untouched);
 * - UNPROVABLE: the absence cannot be proved by this principal (custody kept).
 */
export type PublicationRetirement = 'ABSENT_PROVED' | 'PUBLISHED' | 'NOT_OURS' | 'UNPROVABLE';
