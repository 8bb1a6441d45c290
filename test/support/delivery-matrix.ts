import { expect } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { loadInvocation, type InvocationRecord } from '../../src/delivery/journal/records.js';
import { LIVE_ACTION_RUNNERS } from '../../src/delivery/recovery/actions.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { guardedSource, type GuardedSource } from '../../src/delivery/source-guard.js';
import { JOURNAL_STATES, type JournalState } from '../../src/domain/delivery/journal-states.js';
import { permittedActions, type LiveAction } from '../../src/domain/delivery/action-guide.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { eventsTableDdl, fixedWindowManifest, newInvocationId, type DeliveryWorld } from './delivery-world.js';

/**
 * One case of a delivery fault matrix: a persistent fault at one cut point during the
 * forward run (in process or the flow), then the permitted recovery actions in the guide's
 * order — source-free, but for resume's continue of a proved PARTIAL_PROVED, which the
 * order prefers to retire (it delivers the window) — until CUSTODY_RELEASED or RETIRED (never RETIRED once the window was
 * proved: VERIFIED_EOF or later), then the invariants: every window
 * row exactly once with one receipt and the checkpoint advanced once, or nothing published,
 * no receipt, the checkpoint unmoved; no stage left; ClickHouse never opened by recovery.
 */

export const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };
export const SELECTOR = '/config/route.yaml#daily';
const ACTION_ORDER: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];
/** States in which the journal has proved the window complete (its stage verified against the receipts). */
const PROVED_STATES: readonly JournalState[] = ['VERIFIED_EOF', 'PUBLICATION_UNKNOWN', 'PUBLISHED', 'SUCCEEDED'];

export interface MatrixCase {
  world: DeliveryWorld;
  /** The route's target table (created here), one per case: custody and checkpoints are per target. */
  table: string;
  route: { chunkRows: number; partRows?: number; maxConcurrency?: number };
  /** Which switch the cut point is on (the store adapters' or the target's). */
  faults: FaultSwitch;
  spec: string;
  /** The forward run (and a rerun of the same invocation when no live action applies): returns how it ended. */
  run: (input: BeginInput, deps: DeliveryDeps) => Promise<string>;
  windowIds: readonly string[];
}

export async function runMatrixCase(c: MatrixCase): Promise<void> {
  const { world, table } = c;
  await world.admin.query(eventsTableDdl(table));
  const manifestText = fixedWindowManifest({ daily: { table, ...c.route } });
  const deps = world.deps(selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily'));
  const refusing: GuardedSource = guardedSource(world.source, () => true);
  // A continue (resume of a proved PARTIAL_PROVED) reads the unfinished parts' remaining
  // ranges through its own guard over the world's source; every other action gets `refusing`.
  const recoveryDeps: RecoveryDeps = { ...world.recoveryDeps(deps.route, refusing), extract: { source: world.source } };
  const invocationId = newInvocationId();
  const beginInput: BeginInput = {
    invocationId,
    session: `run-${invocationId.slice(4, 14)}`,
    manifestText,
    selector: SELECTOR,
  };
  const recoveryInput: RecoveryInput = { invocationId, manifestText, selector: SELECTOR };

  const injector = c.faults.arm(c.spec);
  let firstOutcome: string;
  try {
    firstOutcome = await c.run(beginInput, deps);
  } catch (error) {
    firstOutcome = `threw ${(error as Error).name}`;
  } finally {
    c.faults.disarm();
  }
  // The forward path reached the cut point.
  expect(injector.fired.length, `${c.spec} was not hit (${firstOutcome})`).toBeGreaterThan(0);

  const history: string[] = [firstOutcome];
  const rerun = async (): Promise<void> => {
    try {
      history.push(`same invocation → ${await c.run(beginInput, deps)}`);
    } catch (error) {
      history.push(`same invocation threw ${(error as Error).name}: ${(error as Error).message}`);
    }
  };
  let record = await tryLoad(world, invocationId);
  if (!record) {
    // Begin never happened: the same invocation, run again, completes.
    await rerun();
    record = await loadInvocation(world.stores.ports, invocationId);
  }
  for (let i = 0; ; i++) {
    const state: JournalState = record.state;
    history.push(state);
    expect(JOURNAL_STATES).toContain(state);
    if (state === 'CUSTODY_RELEASED' || state === 'RETIRED') break;
    expect(i, `no convergence: ${history.join(' → ')}`).toBeLessThan(6);
    const actions = permittedActions(state, record.facts);
    const projection = await inspectInvocation(world.stores.ports, invocationId);
    expect(projection.state).toBe(state);
    expect([...projection.permitted_actions].sort()).toEqual([...actions].sort());
    const action = ACTION_ORDER.find((a) => actions.includes(a));
    if (action) {
      try {
        history.push(`${action} → ${(await LIVE_ACTION_RUNNERS[action](recoveryInput, recoveryDeps)).state}`);
      } catch (error) {
        history.push(`${action} threw ${(error as Error).name}: ${(error as Error).message}`);
      }
    } else {
      // No live action: only the same invocation finishing (EMPTY_STAGING before its stage was recorded).
      expect(['EMPTY_STAGING', 'WRITING_UNKNOWN'], `stuck with no action: ${history.join(' → ')}`).toContain(state);
      await rerun();
    }
    record = await loadInvocation(world.stores.ports, invocationId);
  }

  const trail = history.join(' → ');
  // A window the journal proved complete (VERIFIED_EOF or later) is published in the end,
  // never retired: retiring it would mean a recovery action gave up on a finishable window.
  if (history.some((h) => PROVED_STATES.some((s) => h.endsWith(s))))
    expect(record.state, `proved, then ${trail}`).toBe('CUSTODY_RELEASED');
  const checkpoint = await loadCheckpoint(world.stores.ports, record.targetId, 'daily');
  expect(checkpoint?.version ?? 0, trail).toBeLessThanOrEqual(1);
  if (record.state === 'CUSTODY_RELEASED') {
    expect(await world.targetWindowIds(table, WINDOW), trail).toEqual(c.windowIds);
    expect(await world.receiptsOf(invocationId)).toBe(1);
    expect(checkpoint).toMatchObject({ windowEnd: WINDOW.end, invocationId, version: 1 });
  } else {
    expect(await world.targetWindowIds(table, WINDOW), trail).toEqual([]);
    expect(await world.receiptsOf(invocationId)).toBe(0);
    expect(checkpoint?.version ?? 0).toBe(0);
  }
  expect(await world.stagesLeft(), trail).toBe(0);
  // Recovery never opened ClickHouse.
  expect(refusing.attempts).toHaveLength(0);
}

async function tryLoad(world: DeliveryWorld, invocationId: string): Promise<InvocationRecord | undefined> {
  try {
    return await loadInvocation(world.stores.ports, invocationId);
  } catch (error) {
    if ((error as { code?: string }).code === 'delivery.recovery_journal_unavailable') return undefined;
    throw error;
  }
}
