import { setImmediate as nextTurn } from 'node:timers/promises';
import { ScheduleStall } from './errors.js';
import type { Actor } from './scheduler-types.js';

/**
 * Whose move the scheduler awaits (scheduler.ts), and when that move is over: the mover
 * parked, ended or waits on a child. A stall past `stallMs` fails the schedule.
 */
export class Turn {
  /** The actor whose move the scheduler awaits: only its park, end or wait ends the move. */
  mover: Actor | undefined;
  private signal: (() => void) | undefined;

  constructor(private readonly stallMs: number) {}

  /** Resolves when the actor just moved parks, ends or waits; a stall past stallMs rejects. */
  moved(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.signal = undefined;
        reject(new ScheduleStall(`an actor ran for ${this.stallMs} ms without reaching a cut point`));
      }, this.stallMs);
      this.signal = () => {
        clearTimeout(timer);
        this.signal = undefined;
        resolve();
      };
    });
  }

  /** Ends the wait now (the move awaited will not come: a detached zombie, a parent waiting on others). */
  cancel(): void {
    this.signal?.();
  }

  /**
   * The mover parked, ended or waits: its move is over. A park of another actor is a
   * fan-out thread arriving late (its sibling's park already ended that actor's move):
   * its ticket waits for a pick, and the move under way goes on.
   */
  yielded(by: Actor): void {
    if (this.mover && by !== this.mover) return;
    this.signal?.();
  }
}

/** A few turns of the event loop: what the last move set off without I/O runs before the next pick. */
export async function letTurnsPass(): Promise<void> {
  for (let i = 0; i < 3; i++) await nextTurn();
}
