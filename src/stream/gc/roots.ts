import { OutcomeUnknownError } from '../../domain/errors.js';
import type { LaneRef } from '../../domain/stream.js';
import type { AuthorityItem } from '../../ports/authority.js';
import type { Ports } from '../../ports/index.js';
import { gcKeys, newMoveId, type LifecycleRoot } from './model.js';

export async function loadRoot(ports: Ports, lane: LaneRef, objectKey: string): Promise<LifecycleRoot | undefined> {
  return (await ports.authority.get(gcKeys.root(lane, objectKey))) as unknown as LifecycleRoot | undefined;
}

export const asRoot = (item: AuthorityItem | undefined) => item as unknown as LifecycleRoot | undefined;

/**
 * Creates the first root of a key (ACTIVE, epoch 1) put-if-absent. A lost response is
 * resolved by reloading the exact root; a CONFLICT returns the root another scanner
 * created. Either way the caller gets the root as it is (its first-seen decides the grace).
 */
export async function createRoot(
  ports: Ports,
  cut: string,
  lane: LaneRef,
  objectKey: string,
  set: Partial<LifecycleRoot>,
): Promise<LifecycleRoot | undefined> {
  const moveId = newMoveId();
  const item = {
    ...gcKeys.root(lane, objectKey),
    stream: lane.stream,
    partition: lane.partition,
    objectKey,
    epoch: 1,
    state: 'ACTIVE',
    ...set,
    moveId,
  };
  const outcome = await ports.authority.put(cut, item, 'absent');
  if (outcome.status === 'APPLIED') return asRoot(outcome.item);
  if (outcome.status === 'CONFLICT') return asRoot(outcome.current);
  // UNKNOWN: the root as it is now (ours or a racing scanner's); still absent means the
  // put did not land — the step fails and its retry scans the page again.
  const reloaded = await loadRoot(ports, lane, objectKey);
  if (!reloaded) throw new OutcomeUnknownError(cut, `${cut}: creating the lifecycle root of ${objectKey} did not land`);
  return reloaded;
}

/**
 * Moves a root by CAS on its version. Returns the moved root when THIS move applied —
 * after a lost response, only if the reloaded root carries this move's id (exact
 * identity, never "a root in that state exists") — or undefined when the root is not
 * where the caller saw it (another writer moved it; the caller re-decides on the next run).
 * A lost request (the reload shows the same version) is sent once more.
 */
export async function moveRoot(
  ports: Ports,
  cut: string,
  root: LifecycleRoot,
  set: Partial<LifecycleRoot>,
): Promise<LifecycleRoot | undefined> {
  for (let round = 0; round < 2; round++) {
    const moveId = newMoveId();
    const outcome = await ports.authority.update(
      cut,
      { pk: root.pk, sk: root.sk },
      { version: root.version },
      { ...set, moveId },
    );
    if (outcome.status === 'APPLIED') return asRoot(outcome.item);
    if (outcome.status === 'CONFLICT') return undefined;
    const reloaded = await loadRoot(ports, root, root.objectKey);
    if (reloaded?.moveId === moveId) return reloaded;
    if (reloaded?.version !== root.version) return undefined;
  }
  throw new OutcomeUnknownError(cut, `${cut}: moving the lifecycle root of ${root.objectKey} did not settle`);
}
