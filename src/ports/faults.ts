/**
 * Every adapter runs each effect through this port at a named cut point. In production
 * the injector is inert; locally and in tests it crashes, loses responses, fails or
 * delays the effect as `CUTPOINT_FAULTS` says.
 */
export interface FaultInjector {
  /** Runs `effect` at `cutPoint`, applying whatever fault is armed for this hit. */
  at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T>;
}
