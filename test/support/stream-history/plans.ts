import { FAULT_KINDS } from '../../../src/domain/faults.js';
import { STREAM_CUT_POINTS } from '../../../src/stream/cut-points.js';
import type { Prng } from '../prng.js';
import type { Attempt, History } from './model.js';

/**
 * The seeded choices of a stream history: which fault an operation meets, which writer
 * appends, where a read starts, where a trim goes. Every choice comes from the history's
 * PRNG, so a seed replays them all.
 */

/** Cut points an append reaches on its way (generation 0 and the index are off the acknowledged path). */
export const APPEND_CUT_POINTS = [STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas];
/** Cut points only recovery reaches (suspending the lane, spending an attempt). */
export const RECOVERY_CUT_POINTS = [STREAM_CUT_POINTS.suspend, STREAM_CUT_POINTS.retire];
export const RESOLVE_CUT_POINTS = [STREAM_CUT_POINTS.resolveFence, STREAM_CUT_POINTS.unsuspend];

/** One fault rule in the CUTPOINT_FAULTS grammar: once, from the second hit, or persistent. */
export function randomRule(rng: Prng, cutPoints: readonly string[]): string {
  const cutPoint = rng.pick(cutPoints);
  const kind = rng.pick(FAULT_KINDS);
  const delay = kind === 'delay' ? `=${rng.int(2, 30)}` : '';
  const r = rng.next();
  const repeat = r < 0.2 ? '*' : r < 0.35 ? '@2' : '';
  return `${cutPoint}:${kind}${delay}${repeat}`;
}

/**
 * A fault for one append:
 * - head-CAS requests lost for good (the outcome stays unknown and it did not apply:
 *   MAY_HAVE_COMMITTED), sometimes with a second fault in the recovery it triggers;
 * - a persistent fault on the append's own path, which can outlast the in-process reruns
 *   (the call throws: an unknown client outcome);
 * - every response of an applied head CAS lost: commit#<end> proves it committed;
 * - otherwise one rule anywhere on the append's path, rarely in recovery alone.
 */
export function appendFault(rng: Prng): string {
  const r = rng.next();
  if (r < 0.25) {
    const lost = `${STREAM_CUT_POINTS.headCas}:lose-request*`;
    return rng.chance(0.35) ? `${lost},${randomRule(rng, RECOVERY_CUT_POINTS)}` : lost;
  }
  if (r < 0.4) {
    const cutPoint = rng.pick([STREAM_CUT_POINTS.wal, STREAM_CUT_POINTS.headCas]);
    return `${cutPoint}:${rng.pick(['crash-before', 'crash-after', 'fail', 'lose-request', 'lose-response'])}*`;
  }
  if (r < 0.52) {
    // The CAS applies but every response is lost: commit#<end> proves it.
    return `${STREAM_CUT_POINTS.headCas}:lose-response*`;
  }
  return randomRule(rng, r < 0.92 ? APPEND_CUT_POINTS : RECOVERY_CUT_POINTS);
}

export interface ReadPlan {
  from: number;
  maxRecords?: number;
  fault?: string;
}

export function pickWriter(h: History): number {
  const stale = h.writers.map((w) => w.index).filter((i) => i !== h.owner);
  return stale.length && h.rng.chance(0.25) ? h.rng.pick(stale) : h.owner;
}

export function newPayloadAttempt(h: History, writer: number): Attempt {
  const payload = h.resend.length && h.rng.chance(0.35) ? h.resend.shift() : undefined;
  return h.newAttempt(writer, payload);
}

export function readPlan(h: History): ReadPlan {
  const { trimOffset, committedEnd } = h.head;
  const r = h.rng.next();
  const from =
    r < 0.08 && trimOffset > 0
      ? h.rng.int(0, trimOffset - 1)
      : r < 0.13
        ? committedEnd + h.rng.int(0, 3)
        : r < 0.35
          ? trimOffset
          : h.rng.int(trimOffset, committedEnd);
  const maxRecords = h.rng.chance(0.3) ? undefined : h.rng.int(1, 40);
  const fault = h.rng.chance(0.15) ? randomRule(h.rng, [STREAM_CUT_POINTS.indexRepair]) : undefined;
  return { from, ...(maxRecords === undefined ? {} : { maxRecords }), ...(fault ? { fault } : {}) };
}

export function trimTarget(h: History): number {
  const { committedEnd } = h.head;
  const r = h.rng.next();
  if (r < 0.1 && h.trim > 0) return h.rng.int(0, h.trim - 1); // refused: the trim never moves back
  if (r < 0.2) return h.trim; // the same target again is success
  return h.trim + Math.floor((committedEnd - h.trim) * h.rng.next() * 0.5);
}

export function trimFault(h: History): string | undefined {
  if (!h.rng.chance(0.4)) return undefined;
  return h.rng.chance(0.7)
    ? `${STREAM_CUT_POINTS.trimCas}:lose-response`
    : randomRule(h.rng, [STREAM_CUT_POINTS.trimCas]);
}
