import type { Scheduler } from './scheduler.js';

/** The scheduler's vocabulary (scheduler.ts): its actors, their parks (tickets), its options. */

export type FaultChoice = 'crash-before' | 'crash-after' | 'lose-response' | 'fail' | 'lose-request';
export const FAULT_CHOICES: readonly FaultChoice[] = [
  'crash-before',
  'crash-after',
  'lose-response',
  'fail',
  'lose-request',
];

/** The pseudo cut point every actor parks at before its first step. */
export const START = 'start';

export interface Actor {
  readonly id: number;
  readonly name: string;
  readonly parent?: Actor;
  /** A detached child (a zombie invocation): its parent no longer waits for it. */
  detached: boolean;
  done: boolean;
  /** Attached children not yet done: the actor waits while there are any. */
  waiting: number;
  /** Decisions during which the PRNG does not pick it (a `delay`). */
  delayedUntil: number;
  /** Parks so far (START excluded). */
  parks: number;
  /** Called when this actor is picked at one of its parks; returning true detaches it instead of moving it (a Task timeout). */
  onPick?: (actor: Actor, cutPoint: string) => boolean;
}

export interface Ticket {
  actor: Actor;
  cutPoint: string;
  seq: number;
  /** A read's scheduling point (`read`): it never faults, and moves alone (not with its fan-out siblings). */
  read?: boolean;
  wake: (fault: FaultChoice | undefined) => void;
}

export interface SchedulerOptions {
  /** Chance that a picked effect faults (until maxFaults). */
  faultRate?: number;
  maxFaults?: number;
  /** Chance that a pick is a `delay` instead: the actor sits out a few decisions. */
  delayRate?: number;
  /** A schedule longer than this many decisions is a livelock. */
  maxDecisions?: number;
  /** A running actor that does not park or end within this long is a stall. */
  stallMs?: number;
  /** The fault kinds allowed at a cut point (all by default; [] for none). */
  faultsAt?: (cutPoint: string, actor: Actor) => readonly FaultChoice[];
  /** Called before each pick: the scenario may move its clock. */
  beforePick?: (scheduler: Scheduler) => void;
}

export const DEFAULTS = { faultRate: 0.12, maxFaults: 4, delayRate: 0.08, maxDecisions: 3000, stallMs: 60_000 };
