import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, EffectFailedError, OutcomeUnknownError, WorkerCrashedError } from '../domain/errors.js';
import { FaultSchedule, FAULTS_IN_LAMBDA_ENV, parseFaultSpec, type FaultRule } from '../domain/faults.js';
import { CUT_POINT_NAMES } from '../cut-points.js';
import type { FaultInjector } from '../ports/faults.js';

/** Production: effects run as they are. */
export const inertFaults: FaultInjector = { at: (_cutPoint, effect) => effect() };

/** A fault that fired: evidence for tests and for the demo's output. */
export interface FiredFault {
  cutPoint: string;
  kind: FaultRule['kind'];
  hit: number;
}

/**
 * Applies armed faults around effects. `lose-response` and `crash-after` really apply
 * the effect first — that is the whole point: the durable state changed and the caller
 * does not know it.
 */
export class ArmedFaultInjector implements FaultInjector {
  private readonly schedule: FaultSchedule;
  readonly fired: FiredFault[] = [];

  constructor(rules: readonly FaultRule[]) {
    this.schedule = new FaultSchedule(rules);
  }

  async at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T> {
    const rule = this.schedule.hit(cutPoint);
    if (!rule) return effect();
    this.fired.push({ cutPoint, kind: rule.kind, hit: this.schedule.hitCounts()[cutPoint] ?? 0 });
    switch (rule.kind) {
      case 'crash-before':
        throw new WorkerCrashedError(cutPoint, 'before');
      case 'fail':
        throw new EffectFailedError(cutPoint, `injected definite failure at ${cutPoint}`);
      case 'delay':
        await sleep(rule.delayMs);
        return effect();
      case 'crash-after':
        await effect();
        throw new WorkerCrashedError(cutPoint, 'after');
      case 'lose-response':
        await effect();
        throw new OutcomeUnknownError(cutPoint, `injected lost response at ${cutPoint}`);
      case 'lose-request':
        throw new OutcomeUnknownError(cutPoint, `injected lost request at ${cutPoint}`);
    }
  }

  hitCounts(): Record<string, number> {
    return this.schedule.hitCounts();
  }
}

/**
 * Builds the injector from `CUTPOINT_FAULTS`; every cut point it names must be a real one
 * (src/cut-points.ts), or it is refused (`faults.unknown_cut_point`). Inside a deployed Lambda it refuses to arm
 * unless `CUTPOINT_FAULTS_IN_LAMBDA=enabled` is also set (a deliberate game day), so a
 * stray variable can never break production.
 */
export function faultsFromEnv(env: NodeJS.ProcessEnv): FaultInjector {
  const spec = env.CUTPOINT_FAULTS?.trim();
  if (!spec) return inertFaults;
  if (env.AWS_LAMBDA_FUNCTION_NAME && env[FAULTS_IN_LAMBDA_ENV] !== 'enabled') {
    throw new ConfigError(
      'faults.refused_in_lambda',
      'CUTPOINT_FAULTS is set in a deployed Lambda; set CUTPOINT_FAULTS_IN_LAMBDA=enabled to arm it for a game day',
    );
  }
  return new ArmedFaultInjector(parseFaultSpec(spec, CUT_POINT_NAMES));
}

/**
 * An injector that can be re-armed between runs (tests, the demo, the bench): adapters
 * hold it once, the caller swaps the rules behind it.
 */
export class FaultSwitch implements FaultInjector {
  private current: ArmedFaultInjector | undefined;

  arm(spec: string | readonly FaultRule[]): ArmedFaultInjector {
    this.current = new ArmedFaultInjector(typeof spec === 'string' ? parseFaultSpec(spec) : spec);
    return this.current;
  }

  disarm(): void {
    this.current = undefined;
  }

  at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T> {
    return this.current ? this.current.at(cutPoint, effect) : effect();
  }
}
