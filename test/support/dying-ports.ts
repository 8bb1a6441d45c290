import type { TransactionLeg } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import { interceptPorts } from './intercept-ports.js';

export interface DyingPorts {
  ports: Ports;
  /** The legs of the transaction the process died on (to replay it later, as a late duplicate of the request). */
  lastLegs(): TransactionLeg[];
  /** Resolves when the process died. */
  died: Promise<void>;
}

/**
 * The ports of a process that dies right after it sends its `nth` transaction at `cutPoint`:
 * that transaction reaches the store (whatever an armed fault makes of it), then neither its
 * answer nor any later call's ever comes back, and nothing more reaches the stores — the
 * process is gone, its promises pending for good. Calls already on their way land (a PUT
 * in flight when the process died may still create its object), their answers are lost.
 */
export function dyingAfter(ports: Ports, cutPoint: string, nth = 1): DyingPorts {
  let dead = false;
  let sent = 0;
  let legs: TransactionLeg[] = [];
  let die!: () => void;
  const died = new Promise<void>((resolve) => (die = resolve));
  const never = new Promise<never>(() => undefined);
  const guard = <T>(call: () => Promise<T>): Promise<T> =>
    dead
      ? never
      : call().then(
          (value) => (dead ? never : value),
          (error: unknown) => (dead ? never : Promise.reject(error as Error)),
        );
  const a = ports.authority;
  const o = ports.objects;
  const dying = interceptPorts(ports, {
    authority: {
      get: (key) => guard(() => a.get(key)),
      getTogether: (keys) => guard(() => a.getTogether(keys)),
      query: (...args) => guard(() => a.query(...args)),
      put: (...args) => guard(() => a.put(...args)),
      update: (...args) => guard(() => a.update(...args)),
      delete: (...args) => guard(() => a.delete(...args)),
      transact: (cut, l) => {
        if (dead) return never;
        if (cut !== cutPoint || ++sent < nth) return guard(() => a.transact(cut, l));
        legs = l;
        const end = (): Promise<never> => ((dead = true), die(), never);
        return a.transact(cut, l).then(end, end);
      },
    },
    objects: {
      put: (...args) => guard(() => o.put(...args)),
      copy: (...args) => guard(() => o.copy(...args)),
      head: (key) => guard(() => o.head(key)),
      get: (...args) => guard(() => o.get(...args)),
      delete: (...args) => guard(() => o.delete(...args)),
      list: (prefix) => guard(() => o.list(prefix)),
    },
  });
  return { ports: dying, lastLegs: () => legs, died };
}
