import { loadCustody } from '../../../src/delivery/journal/records.js';
import type { CustodyRecord } from '../../../src/delivery/journal/records.js';
import type { CapsuleState } from '../../../src/domain/quality/capsule.js';
import type { Ports } from '../../../src/ports/index.js';
import { readCapsule } from '../../../src/quality/capsule-store.js';

/**
 * The durable history of one publication operation as the schedule made it: the capsule and
 * the target's custody item, read (fault-free) after every store effect that may change
 * them, kept when they changed. The checker holds the capsule's moves to its permitted
 * transitions (docs/rules.md#quality-capsule) and custody's to its owner's fence.
 */

export interface CapsuleSample {
  version: number;
  state: CapsuleState;
  completionVersion?: number;
  reader?: string;
  retired: boolean;
  at: string;
}

export interface CustodySample {
  state: CustodyRecord['state'];
  epoch: number;
  invocationId: string;
  session?: string;
  at: string;
}

/** Cut points after which the capsule or the custody item may have changed. */
const WATCHED = /^(quality\.|delivery\.custody\.|delivery\.journal\.transition|publication\.dispatch\.intent)/;

export class OperationWatch {
  readonly capsules: CapsuleSample[] = [];
  readonly custody: CustodySample[] = [];

  constructor(
    private readonly ports: Ports,
    readonly ref: { targetId: string; invocationId: string },
  ) {}

  /** After a store effect at `cutPoint` (any outcome). */
  async after(cutPoint: string): Promise<void> {
    if (!WATCHED.test(cutPoint)) return;
    await this.sample(cutPoint);
  }

  async sample(at: string): Promise<void> {
    const capsule = await readCapsule(this.ports, this.ref).catch(() => undefined);
    if (capsule?.schema === 2) {
      const last = this.capsules.at(-1);
      if (last?.version !== capsule.version) {
        this.capsules.push({
          version: capsule.version,
          state: capsule.state,
          ...(capsule.completion ? { completionVersion: capsule.completion.version } : {}),
          ...(capsule.reader ? { reader: capsule.reader.token } : {}),
          retired: capsule.retiredAt !== undefined,
          at,
        });
      }
    }
    const custody = await loadCustody(this.ports, this.ref.targetId).catch(() => undefined);
    if (custody) {
      const last = this.custody.at(-1);
      if (last?.state !== custody.state || last.epoch !== custody.epoch || last.invocationId !== custody.invocationId) {
        this.custody.push({
          state: custody.state,
          epoch: custody.epoch,
          invocationId: custody.invocationId,
          ...(custody.fence ? { session: custody.fence.session } : {}),
          at,
        });
      }
    }
  }
}

/**
 * docs/rules.md#quality-capsule: the capsule's permitted moves (a state to itself is a guard,
 * completion or retirement write).
 */
const NEXT: Readonly<Record<CapsuleState, readonly CapsuleState[]>> = {
  PREPARED: ['PREPARED', 'TARGET_PENDING', 'COMPLETE', 'FAILED'],
  TARGET_PENDING: ['TARGET_PENDING', 'COMPLETE', 'FAILED'],
  COMPLETE: ['COMPLETE'],
  FAILED: ['FAILED'],
};

/** What is wrong with the capsule's history (empty: it moved only forward, a verdict never rewritten). */
export function capsuleHistoryProblems(samples: readonly CapsuleSample[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < samples.length; i++) {
    const [a, b] = [samples[i - 1]!, samples[i]!];
    const move = `v${a.version} ${a.state} → v${b.version} ${b.state} (after ${b.at})`;
    if (b.version < a.version) problems.push(`capsule version went back: ${move}`);
    if (!NEXT[a.state].includes(b.state)) problems.push(`capsule moved outside its state machine: ${move}`);
    if (a.completionVersion !== undefined && b.completionVersion !== a.completionVersion)
      problems.push(`completion version rewritten ${a.completionVersion} → ${b.completionVersion}: ${move}`);
    if (a.retired && !b.retired) problems.push(`capsule un-retired: ${move}`);
    if (b.reader && a.reader && b.reader !== a.reader)
      problems.push(
        `reader guard ${a.reader.slice(0, 8)}… replaced by ${b.reader.slice(0, 8)}… without a release: ${move}`,
      );
  }
  return problems;
}

/**
 * Custody of the target: only this operation ever holds it; epochs never go back; a
 * release keeps the epoch of the session that held it (released only by its owner's
 * fenced transition, never by a later or an older session).
 */
export function custodyHistoryProblems(samples: readonly CustodySample[], invocationId: string): string[] {
  const problems: string[] = [];
  for (const [i, b] of samples.entries()) {
    if (b.invocationId !== invocationId) problems.push(`custody names ${b.invocationId} (after ${b.at})`);
    const a = samples[i - 1];
    if (!a) continue;
    if (b.epoch < a.epoch) problems.push(`custody epoch went back ${a.epoch} → ${b.epoch} (after ${b.at})`);
    if (b.state === 'RELEASED' && a.state === 'HELD' && b.epoch !== a.epoch)
      problems.push(`custody held at epoch ${a.epoch} released at epoch ${b.epoch} (after ${b.at})`);
  }
  return problems;
}
