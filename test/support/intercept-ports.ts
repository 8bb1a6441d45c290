import type { AuthorityStore, ItemKey } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import type { ObjectStore } from '../../src/ports/objects.js';

/**
 * `ports` with some authority or object-store methods replaced (to land a racing write
 * between two of a use case's reads, say); every other call reaches the real store.
 */
export function interceptPorts(
  ports: Ports,
  over: { authority?: Partial<AuthorityStore>; objects?: Partial<ObjectStore> },
): Ports {
  const a = ports.authority;
  const o = ports.objects;
  const authority: AuthorityStore = {
    describeBinding: () => a.describeBinding(),
    get: (key) => a.get(key),
    getTogether: (keys) => a.getTogether(keys),
    query: (...args) => a.query(...args),
    put: (...args) => a.put(...args),
    update: (...args) => a.update(...args),
    delete: (...args) => a.delete(...args),
    transact: (...args) => a.transact(...args),
    ...over.authority,
  };
  const objects: ObjectStore = {
    location: o.location,
    put: (...args) => o.put(...args),
    copy: (...args) => o.copy(...args),
    head: (key) => o.head(key),
    get: (...args) => o.get(...args),
    delete: (...args) => o.delete(...args),
    deleteMany: (...args) => o.deleteMany(...args),
    list: (prefix) => o.list(prefix),
    ...(o.listPage
      ? { listPage: (prefix: string, options: { startAfter?: string; limit: number }) => o.listPage!(prefix, options) }
      : {}),
    ...over.objects,
  };
  return { ...ports, authority, objects };
}

export const sameKey = (x: ItemKey, y: ItemKey): boolean => x.pk === y.pk && x.sk === y.sk;

/**
 * `ports` whose first authority read (get or getTogether) that includes `key` waits until
 * `write` has landed: a racing write forced just before a use case reads that item.
 * `landed()` says how many times it did (1 once that read happened).
 */
export function landBeforeRead(
  ports: Ports,
  key: ItemKey,
  write: () => Promise<void>,
): { ports: Ports; landed: () => number } {
  let landed = 0;
  const before = async (keys: ItemKey[]) => {
    if (landed > 0 || !keys.some((k) => sameKey(k, key))) return;
    landed++;
    await write();
  };
  const a = ports.authority;
  return {
    landed: () => landed,
    ports: interceptPorts(ports, {
      authority: {
        get: async (k) => (await before([k]), a.get(k)),
        getTogether: async (keys) => (await before(keys), a.getTogether(keys)),
      },
    }),
  };
}

/**
 * Two reads of a use case with a racing write forced between them: the first `between`
 * read to start runs, then `write` lands, and only then does any later one start (a read
 * issued beside the first waits for the write). Returns the wrapper for those reads and
 * how many times the write landed.
 */
export function landBetween(write: () => Promise<void>): {
  read: <T>(read: () => Promise<T>) => Promise<T>;
  landed: () => number;
} {
  let landing: Promise<void> | undefined;
  let landed = 0;
  return {
    landed: () => landed,
    read: async (read) => {
      if (landing) {
        await landing;
        return read();
      }
      let done!: () => void;
      landing = new Promise((resolve) => (done = resolve));
      try {
        return await read();
      } finally {
        await write().finally(done);
        landed++;
      }
    },
  };
}
