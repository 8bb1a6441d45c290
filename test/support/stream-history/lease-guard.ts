import type { LaneRef } from '../../../src/domain/stream.js';
import type { Ports } from '../../../src/ports/index.js';
import { gcKeys } from '../../../src/stream/gc/model.js';

/**
 * GC's object deletes, each checked as it is sent: no reader may hold an unexpired lease on
 * the object then (the rule: GC never deletes a byte a pinned
 * reader needs). Once GC seals an object no new lease can be taken on it, and it seals only
 * after the object's leases drained or expired, so at its delete none may be left. A delete
 * that finds one is written to `broken` (the checker reports it) and goes on.
 */
export function leaseGuarded(ports: Ports, lane: LaneRef, broken: string[]): Ports {
  const { objects, authority, clock } = ports;
  const held = async (key: string): Promise<string[]> => {
    const leases = (await authority.query(gcKeys.pk(lane), `lease#${key}#`)) as unknown as Array<{
      leaseId: string;
      expiresAt: string;
    }>;
    const now = clock.now().getTime();
    return leases.filter((l) => Date.parse(l.expiresAt) > now).map((l) => l.leaseId);
  };
  const guard = async (key: string): Promise<void> => {
    const leases = await held(key);
    if (leases.length > 0)
      broken.push(`GC deleted ${key} while a reader held an unexpired lease on it (${leases.join(', ')})`);
  };
  return {
    ...ports,
    objects: Object.assign(Object.create(objects) as Ports['objects'], {
      delete: async (cutPoint: string, key: string) => {
        await guard(key);
        return objects.delete(cutPoint, key);
      },
      deleteMany: async (cutPoint: string, keys: readonly string[]) => {
        for (const key of keys) await guard(key);
        return objects.deleteMany(cutPoint, keys);
      },
    }),
  };
}
