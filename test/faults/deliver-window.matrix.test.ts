import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../src/delivery/checkpoint.js';
import { DELIVERY_CUT_POINTS, TARGET_CUT_POINTS } from '../../src/delivery/cut-points.js';
import { deliverWindow } from '../../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../../src/delivery/deps.js';
import { inspectInvocation } from '../../src/delivery/journal/listing.js';
import { loadInvocation, type InvocationRecord } from '../../src/delivery/journal/records.js';
import { RECOVERY_ACTIONS } from '../../src/delivery/recovery/actions.js';
import type { RecoveryDeps, RecoveryInput } from '../../src/delivery/recovery/recovery-session.js';
import type { BeginInput } from '../../src/delivery/steps/begin.js';
import { JOURNAL_STATES, permittedActions, type JournalState, type LiveAction } from '../../src/domain/delivery/journal-states.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import type { SelectedRoute } from '../../src/domain/delivery/manifest-types.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { guardedSource } from '../../src/delivery/source-guard.js';
import { eventsTableDdl, fixedWindowManifest, generateEvents, newInvocationId, openDeliveryWorld, windowIdsOf, type DeliveryWorld } from '../support/delivery-world.js';

/**
 * The deliver-window fault matrix (issue 4): every cut point the forward path hits × every
 * fault kind, armed persistently so the in-process reruns cannot absorb it. After the
 * faulted run, the journal state must be one of the seed's, inspect must offer exactly the
 * seed's permitted actions, and applying them (with a source armed to refuse: recovery
 * never opens ClickHouse) must end in CUSTODY_RELEASED (every window row exactly once, one
 * receipt, the checkpoint advanced once) or RETIRED (nothing published, no receipt, the
 * checkpoint not moved). Each case delivers to its own target table, so custody and
 * checkpoints are per case. Real components: DynamoDB Local and the S3 emulator, embedded
 * ClickHouse (chdb, one engine per file) as the source, embedded PostgreSQL as the target
 * (test/support/delivery-world.ts).
 */

const STEP_MS = 864_000; // 100 rows a day
const GENERATED = 500; // five days
const WINDOW = { start: '2026-11-02T00:00:00.000Z', end: '2026-11-04T00:00:00.000Z' };

// 200 window rows in parts of ~100 rows and chunks of 30: 2+ parts, each with a partial last chunk.
const manifestTextFor = (table: string) => fixedWindowManifest({ daily: { table, chunkRows: 30, partRows: 100, maxConcurrency: 2 } });
const selector = '/config/route.yaml#daily';

const sourceRows = generateEvents(GENERATED, STEP_MS);
const windowIds = windowIdsOf(sourceRows, WINDOW);

/** The forward path's effects (the seal is not a separate effect of the in-process run). */
const FORWARD_CUT_POINTS = [
  DELIVERY_CUT_POINTS.custodyAcquire,
  DELIVERY_CUT_POINTS.stagingRecord,
  DELIVERY_CUT_POINTS.planPut,
  DELIVERY_CUT_POINTS.chunkPut,
  DELIVERY_CUT_POINTS.partReceipt,
  DELIVERY_CUT_POINTS.journalTransition,
  DELIVERY_CUT_POINTS.checkpointAdvance,
  DELIVERY_CUT_POINTS.evidencePut,
  DELIVERY_CUT_POINTS.custodyRelease,
  TARGET_CUT_POINTS.createStaging,
  TARGET_CUT_POINTS.loadChunk,
  TARGET_CUT_POINTS.publishCommit,
  TARGET_CUT_POINTS.dropStaging,
];
const TARGET_POINTS = new Set<string>(Object.values(TARGET_CUT_POINTS));
const cases = FORWARD_CUT_POINTS.flatMap((cutPoint) => FAULT_KINDS.map((kind) => [cutPoint, kind] as const));
const ACTION_ORDER: readonly LiveAction[] = ['reconcile', 'resume', 'retire'];

let world: DeliveryWorld;
let tableSeq = 0;

beforeAll(async () => {
  world = await openDeliveryWorld({ rows: sourceRows });
}, 120_000);

afterAll(() => world?.close());

async function tryLoad(invocationId: string): Promise<InvocationRecord | undefined> {
  try {
    return await loadInvocation(world.stores.ports, invocationId);
  } catch (error) {
    if ((error as { code?: string }).code === 'delivery.recovery_journal_unavailable') return undefined;
    throw error;
  }
}

describe('deliver-window: a persistent fault at each cut point, then the permitted recovery actions', () => {
  it.each(cases)(
    '%s × %s* → CUSTODY_RELEASED (rows exactly once) or RETIRED (nothing published), recovery source-free',
    async (cutPoint, kind) => {
      const table = `ev_${++tableSeq}`;
      await world.admin.query(eventsTableDdl(table));
      const manifestText = manifestTextFor(table);
      const route: SelectedRoute = selectRoute(parseManifest(manifestText, '/config/route.yaml'), 'daily');
      const deps: DeliveryDeps = world.deps(route);
      const refusing = guardedSource(world.source, () => true);
      const recoveryDeps: RecoveryDeps = world.recoveryDeps(route, refusing);
      const invocationId = newInvocationId();
      const beginInput: BeginInput = { invocationId, session: `run-${invocationId.slice(4, 14)}`, manifestText, selector };
      const recoveryInput: RecoveryInput = { invocationId, manifestText, selector };

      const switchboard = TARGET_POINTS.has(cutPoint) ? world.targetFaults : world.stores.faults;
      const injector = switchboard.arm(`${cutPoint}:${kind}${kind === 'delay' ? '=5' : ''}*`);
      let firstOutcome: string;
      try {
        const run = await deliverWindow(beginInput, deps);
        firstOutcome = `returned ${run.state}`;
      } catch (error) {
        firstOutcome = `threw ${(error as Error).name}`;
      } finally {
        switchboard.disarm();
      }
      // The forward path reached the cut point.
      expect(injector.fired.length, `${cutPoint} was not hit (${firstOutcome})`).toBeGreaterThan(0);

      const history: string[] = [firstOutcome];
      let record = await tryLoad(invocationId);
      if (!record) {
        // Begin never happened: the same invocation, run again, completes.
        const again = await deliverWindow(beginInput, deps);
        expect(again.state).toBe('CUSTODY_RELEASED');
        history.push('rerun begin');
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
            const result = await RECOVERY_ACTIONS[action](recoveryInput, recoveryDeps);
            history.push(`${action} → ${result.state}`);
          } catch (error) {
            history.push(`${action} threw ${(error as Error).name}: ${(error as Error).message}`);
          }
        } else {
          // No live action: only the same invocation finishing (EMPTY_STAGING before its stage was recorded).
          expect(['EMPTY_STAGING', 'WRITING_UNKNOWN'], `stuck with no action: ${history.join(' → ')}`).toContain(state);
          try {
            const run = await deliverWindow(beginInput, deps);
            history.push(`same invocation → ${run.state}`);
          } catch (error) {
            history.push(`same invocation threw ${(error as Error).name}: ${(error as Error).message}`);
          }
        }
        record = await loadInvocation(world.stores.ports, invocationId);
      }

      const checkpoint = await loadCheckpoint(world.stores.ports, record.targetId, 'daily');
      expect(checkpoint?.version ?? 0, history.join(' → ')).toBeLessThanOrEqual(1);
      if (record.state === 'CUSTODY_RELEASED') {
        expect(await world.targetWindowIds(table, WINDOW), history.join(' → ')).toEqual(windowIds);
        expect(await world.receiptsOf(invocationId)).toBe(1);
        expect(checkpoint).toMatchObject({ windowEnd: WINDOW.end, invocationId, version: 1 });
      } else {
        expect(await world.targetWindowIds(table, WINDOW), history.join(' → ')).toEqual([]);
        expect(await world.receiptsOf(invocationId)).toBe(0);
        expect(checkpoint?.version ?? 0).toBe(0);
      }
      expect(await world.stagesLeft(), history.join(' → ')).toBe(0);
      // Recovery never opened ClickHouse.
      expect(refusing.attempts).toHaveLength(0);
    },
    60_000,
  );
});
