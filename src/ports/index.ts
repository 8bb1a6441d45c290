import type { AuthorityStore } from './authority.js';
import type { Clock } from './clock.js';
import type { ObjectStore } from './objects.js';

/** What a use case gets: the authority, the object store and a clock. Nothing else. */
export interface Ports {
  authority: AuthorityStore;
  objects: ObjectStore;
  clock: Clock;
}
