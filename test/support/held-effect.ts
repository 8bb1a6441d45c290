import { inertFaults } from '../../src/adapters/fault-injector.js';
import type { FaultInjector } from '../../src/ports/faults.js';

/** An effect held at its cut point: `reached` once the caller is stalled there, `release()` lets it run. */
export interface HeldEffect {
  reached: Promise<void>;
  release(): void;
}

/**
 * A fault injector that can hold the next effect at one cut point until the test releases
 * it — a zombie stalled inside its cut point for exactly as long as the test needs (a
 * takeover, another load), whatever the machine's speed. A `delay=` fault with a fixed sleep
 * is a wall-clock race instead: the sleep must outlast the zombie's way to its cut point,
 * and the delay what the test does meanwhile. Every other hit goes to `inner` (the armed
 * faults), the held one too once released.
 */
export class HoldingFaults implements FaultInjector {
  private readonly holds = new Map<string, { reached: () => void; gate: Promise<void> }>();

  constructor(private readonly inner: FaultInjector = inertFaults) {}

  /** Holds the next effect at `cutPoint` (one hit; later hits run as they come). */
  hold(cutPoint: string): HeldEffect {
    let reached: () => void = () => undefined;
    let release: () => void = () => undefined;
    const reachedOnce = new Promise<void>((resolve) => (reached = resolve));
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(cutPoint, { reached, gate });
    return { reached: reachedOnce, release };
  }

  async at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T> {
    const held = this.holds.get(cutPoint);
    if (held) {
      this.holds.delete(cutPoint);
      held.reached();
      await held.gate;
    }
    return this.inner.at(cutPoint, effect);
  }
}
