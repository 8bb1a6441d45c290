import type { GamedayDriver, TargetObservers } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';

/** What every drill runs on: the driver, the stores its checks read, where progress goes (and, for delivery, the target's observers). */
export interface DrillWorld {
  driver: GamedayDriver;
  ports: Ports;
  progress: (line: string) => void;
  observers?: TargetObservers;
}
