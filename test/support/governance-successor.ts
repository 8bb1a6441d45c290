import { expect } from 'vitest';
import { loadInvocation } from '../../src/delivery/journal/records.js';
import { candidateUuidOf } from '../../src/domain/publication/candidate.js';
import type { FaultKind } from '../../src/domain/faults.js';
import { readCapsule } from '../../src/quality/capsule-store.js';
import { newInvocationId } from './delivery-world.js';
import { checkGovernanceInvariants, governanceSnapshot, type GovernanceOp } from './governance-invariants.js';
import { forwardRun } from './governance-matrix.js';
import { SELECTOR, type GovernanceWorld } from './governance-world.js';
import { windowIds } from './publication-world.js';

/**
 * A successor's Begin on a slot whose previous operation completed
 * (docs/rules.md#successors-and-replay-window, I7): the begin transaction — custody, the
 * closing of the previous replay window and the boundary record, all legs of
 * `delivery.custody.acquire` — faulted with `kind`; begin's own reload (or a rerun of the same
 * invocation) decides. The previous window is closed exactly once, by this successor, with one
 * boundary; the successor publishes over C₁.
 */
export async function successorBoundaryCase(world: GovernanceWorld, table: string, kind: FaultKind): Promise<void> {
  const predecessor = await world.createTarget(table);
  const manifestText = world.manifest(table);
  const lane = world.lane();
  const deps = lane.deps(manifestText);
  const input = (invocationId: string) => ({
    invocationId,
    session: `run-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: SELECTOR,
  });
  const first: GovernanceOp = { targetId: '', invocationId: newInvocationId(), route: 'daily', database: 'pub', table };
  const firstRun = await forwardRun(lane, deps, input(first.invocationId));
  expect(firstRun.state).toBe('CUSTODY_RELEASED');
  first.targetId = firstRun.targetId;
  const closedBefore = await governanceSnapshot(world.view, first);

  const second: GovernanceOp = { ...first, invocationId: newInvocationId() };
  const injector = lane.storeFaults.arm(`delivery.custody.acquire:${kind}`);
  let outcome: string;
  try {
    outcome = (await forwardRun(lane, deps, input(second.invocationId))).state;
  } catch (error) {
    outcome = `threw ${(error as Error).name}`;
  } finally {
    lane.storeFaults.disarm();
  }
  expect(injector.fired).toHaveLength(1);
  if (outcome !== 'CUSTODY_RELEASED') outcome = (await forwardRun(lane, deps, input(second.invocationId))).state;
  expect(outcome).toBe('CUSTODY_RELEASED');

  const capsule = await readCapsule(world.view.ports, first);
  expect(capsule).toMatchObject({
    state: 'COMPLETE',
    replay: { closedBy: second.invocationId, reason: 'successor', closedAt: expect.any(String) },
  });
  const boundaries = await world.view.ports.authority.query(`target#${first.targetId}`, 'boundary#');
  expect(boundaries.map((b) => b.closedOperation)).toEqual([first.invocationId]);
  expect((await loadInvocation(world.view.ports, second.invocationId)).state).toBe('CUSTODY_RELEASED');
  expect(await world.observe.uuidOf(table)).toBe(candidateUuidOf(second.invocationId));
  expect(await world.windowIds(table)).toEqual(windowIds);

  await checkGovernanceInvariants(world.view, first, {
    exchangeCount: world.rec.exchangeCount(first),
    before: [closedBefore],
    predecessorUuid: predecessor,
    successorPublished: true,
  });
  await checkGovernanceInvariants(world.view, second, {
    exchangeCount: world.rec.exchangeCount(second),
    predecessorUuid: candidateUuidOf(first.invocationId),
    successorPublished: true,
  });
}
