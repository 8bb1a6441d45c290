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
  /** The scheduler the ports' reads park on from now (undefined: reads run as they are). */
  useReads(points: ReadPoints | undefined): void;
}

/** Where a read parks (Scheduler.read): `point` names the port and the call. */
export interface ReadPoints {
  read<T>(point: string, read: () => Promise<T>): Promise<T>;
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
  let reads: ReadPoints | undefined;
  const faults: FaultInjector = { at: (cutPoint, effect) => (current ? current.at(cutPoint, effect) : effect()) };
  const parked = <T>(point: string, read: () => Promise<T>): Promise<T> => (reads ? reads.read(point, read) : read());
  const clock = new MovableClock();
  const ports = awsPorts(config, faults);
  return {
    config,
    ports: { ...ports, ...readsParked(ports, parked), clock },
    clock,
    faults,
    use: (f) => (current = f),
    useReads: (points) => (reads = points),
  };
}

/**
 * The authority's and the object store's reads, each parked first: GetItem, TransactGetItems,
 * Query, HeadObject, GetObject (a get at a cut point already parks as an effect) and List.
 */
function readsParked(ports: Ports, parked: ReadPoints['read']): Pick<Ports, 'authority' | 'objects'> {
  const { authority, objects } = ports;
  return {
    authority: Object.assign(Object.create(authority) as Ports['authority'], {
      get: (key: Parameters<Ports['authority']['get']>[0]) => parked('authority.get', () => authority.get(key)),
      getTogether: (keys: Parameters<Ports['authority']['getTogether']>[0]) =>
        parked('authority.getTogether', () => authority.getTogether(keys)),
      query: (...args: Parameters<Ports['authority']['query']>) =>
        parked('authority.query', () => authority.query(...args)),
    }),
    objects: Object.assign(Object.create(objects) as Ports['objects'], {
      head: (key: string) => parked('objects.head', () => objects.head(key)),
      get: (key: string, cutPoint?: string) =>
        cutPoint === undefined ? parked('objects.get', () => objects.get(key)) : objects.get(key, cutPoint),
      list: (prefix: string) => parked('objects.list', () => objects.list(prefix)),
    }),
  };
}
