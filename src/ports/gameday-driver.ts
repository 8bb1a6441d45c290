import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import type { Ports } from './index.js';
import type { TargetPort } from './target.js';
import type { WindowCensusPort } from './window-census.js';

/**
 * Where a game day runs its drills: the local runtime (the flows run in this process, the
 * faults armed in it) or a deployed stack (the state machines run on AWS, the faults armed
 * in its Lambdas). The drills, the recovery and the checks are the same code over this.
 */
export interface GamedayDriver {
  kind: 'local' | 'aws';
  /** The authority and object stores the flows write (the checks read the journal there). */
  ports(): Promise<Ports>;
  /** Arms a CUTPOINT_FAULTS spec where the flows' steps run, until `disarm`. */
  arm(spec: string): Promise<ArmedDrill>;
  /** Runs one flow to its end under `executionName`. */
  runFlow(flow: string, executionName: string, input: unknown): Promise<DrillRun>;
  /** The route's target (read-only use: receipt and stage) and its window census, for the checks. */
  openObservers(route: SelectedRoute): Promise<TargetObservers>;
}

export interface ArmedDrill {
  /** Disarms; how many times the fault fired, or undefined where that cannot be seen from here. */
  disarm(): Promise<number | undefined>;
}

export interface DrillRun {
  status: string;
  output?: unknown;
  error?: string;
  cause?: string;
}

export interface TargetObservers {
  target: TargetPort;
  census: WindowCensusPort;
  close(): Promise<void>;
}
