import { randomUUID } from 'node:crypto';
import { awsPorts } from '../../../src/adapters/ports.js';
import { provisionLocal } from '../../../src/adapters/provision.js';
import type { CutpointConfig } from '../../../src/config.js';
import type { FaultInjector } from '../../../src/ports/faults.js';
import type { Ports } from '../../../src/ports/index.js';
import { MovableClock } from '../../faults/stream-gc-world.js';

/** Where the run's emulators listen: vitest's globalSetup in a test, the soak's own runtime in `npm run soak`. */
export interface Endpoints {
  dynamodb: string;
  s3: string;
}

/**
 * One table and bucket for a scenario's whole run (provisioning per schedule would cost
 * more than the schedule): each schedule works on keys of its own (a stream, a route, a
 * generation root named by its seed). Every effect goes through `faults`, which follows
 * the schedule now running (`use`), and every port reads one movable clock.
 */
export interface SchedStores {
  config: CutpointConfig;
  ports: Ports;
  clock: MovableClock;
  /** The injector that follows `use`: hand it to an adapter outside `ports` (a target) so its effects park too. */
  faults: FaultInjector;
  /** The scheduler the ports' effects park on from now (undefined: effects run as they are). */
  use(faults: FaultInjector | undefined): void;
}

export async function openStores(endpoints: Endpoints, prefix: string): Promise<SchedStores> {
  const id = `${prefix}-${randomUUID().slice(0, 8)}`;
  const config: CutpointConfig = {
    tableName: `cutpoint-sched-${id}`,
    bucketName: `cutpoint-sched-${id}`,
    region: 'us-east-1',
    endpoints: { dynamodb: endpoints.dynamodb, s3: endpoints.s3 },
  };
  await provisionLocal(config);
  let current: FaultInjector | undefined;
  const faults: FaultInjector = { at: (cutPoint, effect) => (current ? current.at(cutPoint, effect) : effect()) };
  const clock = new MovableClock();
  return { config, ports: { ...awsPorts(config, faults), clock }, clock, faults, use: (f) => (current = f) };
}
