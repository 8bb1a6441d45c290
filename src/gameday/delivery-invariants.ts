import { loadCheckpoint, type CheckpointRecord } from '../delivery/checkpoint.js';
import { loadCustody, type InvocationRecord } from '../delivery/journal/records.js';
import type { SelectedRoute } from '../domain/delivery/manifest-types.js';
import type { JournalState } from '../domain/delivery/journal-states.js';
import type { Ports } from '../ports/index.js';
import type { TargetObservers } from '../ports/gameday-driver.js';
import type { WindowCensus } from '../ports/window-census.js';
import type { InvariantCheck } from './report.js';

/**
 * The invariants of a delivery drill, checked once recovery ended (docs/testing.md "Game day"):
 * the window's rows exactly once with one receipt and the checkpoint advanced once by this
 * invocation, or nothing of it published — never a row twice, never half a window; a
 * window the journal proved complete is never retired; custody released; no stage left.
 */

/** States in which the journal has proved the window complete (its stage verified against the receipts). */
const PROVED_STATES: readonly JournalState[] = ['VERIFIED_EOF', 'PUBLICATION_UNKNOWN', 'PUBLISHED', 'SUCCEEDED'];

export interface DeliveryBefore {
  census: WindowCensus;
  checkpoint: CheckpointRecord | undefined;
}

export interface DeliveryObserved {
  ports: Ports;
  route: SelectedRoute;
  observers: TargetObservers;
  record: InvocationRecord | undefined;
  /** Every journal state the drill saw, in order. */
  states: readonly string[];
  fired: number | null;
  census: (window: { start: Date; end: Date }) => Promise<WindowCensus>;
}

export async function checkDeliveryDrill(before: DeliveryBefore, o: DeliveryObserved): Promise<InvariantCheck[]> {
  const checks: InvariantCheck[] = [];
  const check = (name: string, held: boolean, detail: string): void => void checks.push({ name, held, detail });
  check(
    'fault-reached',
    o.fired === null || o.fired > 0,
    o.fired === null ? 'not observable from here' : `fired ${o.fired}×`,
  );
  const record = o.record;
  if (!record) {
    check('journal-began', false, 'the invocation has no journal after recovery: it never began');
    return checks;
  }
  const state = record.state;
  const released = state === 'CUSTODY_RELEASED';
  check('converged', released || state === 'RETIRED', `final state ${state}`);
  const proved = o.states.some((s) => (PROVED_STATES as readonly string[]).includes(s));
  check('proved-window-published', !proved || released, proved ? `proved, then ${state}` : 'never proved');

  const window = { start: new Date(record.sealed.window.start), end: new Date(record.sealed.window.end) };
  const after = await o.census(window);
  const published = record.facts.publication?.rows;
  if (released) {
    check(
      'rows-exactly-once',
      published !== undefined && after.rows === published && after.distinctKeys === after.rows,
      `${after.rows} rows, ${after.distinctKeys} distinct keys in the window; the publication proved ${published}`,
    );
  } else {
    check(
      'nothing-published',
      after.rows === before.census.rows && after.distinctKeys === before.census.distinctKeys,
      `${after.rows} rows in the window, ${before.census.rows} before the drill`,
    );
  }
  const receipt = await o.observers.target.probeReceipt(record.invocationId);
  check(
    'one-receipt',
    released ? receipt?.rows === published : receipt === undefined,
    receipt ? `a receipt of ${receipt.rows} rows` : 'no receipt',
  );
  const checkpoint = await loadCheckpoint(o.ports, record.targetId, o.route.name);
  const beforeVersion = before.checkpoint?.version ?? 0;
  // It moves forward only: a window ending where it stands (a drill of the same window again) leaves it.
  const end = record.sealed.window.end;
  const moves = released && (!before.checkpoint || Date.parse(end) > Date.parse(before.checkpoint.windowEnd));
  check(
    'checkpoint-once',
    moves
      ? checkpoint?.invocationId === record.invocationId &&
          checkpoint.windowEnd === end &&
          checkpoint.version === beforeVersion + 1
      : (checkpoint?.version ?? 0) === beforeVersion,
    `checkpoint version ${checkpoint?.version ?? 0} (before ${beforeVersion}; ${moves ? 'this window moves it' : 'this window leaves it'})`,
  );
  const custody = await loadCustody(o.ports, record.targetId);
  check('custody-released', custody?.state !== 'HELD', `custody ${custody?.state ?? 'absent'}`);
  const staging = record.facts.staging;
  if (staging) {
    const stage = await o.observers.target.observeStaging(staging.table, {
      invocationId: record.invocationId,
      owner: staging.owner,
    });
    check('no-stage-left', stage.status !== 'OURS', `the owned stage is ${stage.status}`);
  }
  return checks;
}
