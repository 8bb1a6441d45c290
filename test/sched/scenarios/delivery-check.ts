import { loadCheckpoint } from '../../../src/delivery/checkpoint.js';
import { inspectInvocation } from '../../../src/delivery/journal/listing.js';
import { journalOf } from '../../../src/delivery/journal/keys.js';
import {
  loadCustody,
  loadInvocation,
  recordProblems,
  type InvocationRecord,
} from '../../../src/delivery/journal/records.js';
import { routeTargetId } from '../../../src/delivery/steps/common.js';
import { stagingTableOf } from '../../../src/domain/delivery/identifiers.js';
import {
  canTransition,
  isJournalState,
  isTerminal,
  JournalUnavailableError,
} from '../../../src/domain/delivery/journal-states.js';
import { checkExactlyOnce } from '../../support/delivery-history/exactly-once.js';
import { InvariantViolation } from '../../support/sched/errors.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import type { History } from './delivery-actors.js';
import { WINDOW, type DeliveryWorld, type ScheduleRoute } from './delivery-world.js';

/**
 * The delivery scenario's history checker, after every actor ended and the operator
 * finished with faults off:
 * - the clients' history first: every acknowledgement they were given holds in the target
 *   (test/support/delivery-history/exactly-once.ts) — delivered means the window's rows
 *   exactly once with one receipt, RETIRED means none, and no two contradict each other;
 * - rows: the target holds the window's rows exactly once, or none of them (never a part,
 *   never a row twice), with exactly one publication receipt iff they are there;
 * - checkpoint: advanced at most once (version ≤ 1, one checkpoint journal entry), and
 *   only by this invocation with its rows published;
 * - dispatch: at most one recovery execution started per failed execution;
 * - custody: every journal entry was written by the session holding custody at that
 *   point of the journal (begin, then each takeover raising the epoch by one) — never by a
 *   fenced session; every transition is an edge of the journal's graph; the custody item
 *   agrees with the journal (released with the last epoch once terminal, else held by it);
 * - final state: CUSTODY_RELEASED (rows, receipt, checkpoint), RETIRED (none of them), or an
 *   INCIDENT_RETAINED that keeps custody; never a state that still offers a command the
 *   operator's finishing could not run;
 * - no orphan stage: once terminal, no owned stage is left in the target — not even the
 *   empty one a fenced CreateStaging re-created after retire dropped it (issue #13; the
 *   creator drops it after its CREATE, retire looks again once RETIRED: steps/orphan-stage.ts).
 */

export async function checkDelivery(world: DeliveryWorld, s: Scheduler, r: ScheduleRoute, h: History): Promise<void> {
  const ports = world.stores.ports;
  const trail = () =>
    [...h.runs.map((run) => `${run.label} ${run.status}${run.error ? ` ${run.error}` : ''}`), ...h.actions].join('; ');
  const fail = (invariant: string, what: string): never => {
    throw new InvariantViolation(
      `delivery ${r.table} (${r.invocationId}) [${invariant}]: ${what} — history: ${trail()}`,
    );
  };
  const targetId = routeTargetId({ route: r.route });

  const rows = await world.warehouse.admin.query<{ id: string }>(`SELECT event_id::text AS id FROM dwh.${r.table}`);
  const ids = rows.rows.map((row) => row.id).sort();
  const receipts = await world.warehouse.receiptsOf(r.invocationId);
  // The history: what the clients were told, against what the target holds.
  const told = checkExactlyOnce(h.ops, { rows: ids, windowIds: r.windowIds, receipts });
  if (told.length > 0)
    fail(
      'history-exactly-once',
      `${told[0]}${told.length > 1 ? ` (and ${told.length - 1} more: ${told.slice(1).join('; ')})` : ''}`,
    );

  // rows: all or nothing, once
  const windowIds = await world.warehouse.targetWindowIds(r.table, WINDOW);
  const published = ids.length > 0;
  if (published && (ids.join() !== r.windowIds.join() || windowIds.length !== ids.length))
    fail(
      'rows-exactly-once',
      `the target holds ${ids.length} rows [${ids.join(',')}], the window has ${r.windowIds.length}`,
    );
  if (receipts !== (published ? 1 : 0))
    fail('rows-exactly-once', `${receipts} publication receipt(s) with ${ids.length} rows published`);

  // dispatch: one recovery per failed execution
  const started = h.dispatches.filter((d) => d.recovery.action === 'started').length;
  const recoveries = h.recoveries.executions.size;
  if (started > 1 || recoveries > 1)
    fail('dispatch-once', `${started} dispatches started a recovery, ${recoveries} recovery executions exist`);

  // checkpoint: at most once, only with the rows
  const checkpoint = await loadCheckpoint(ports, targetId, r.route.name);
  if (
    checkpoint &&
    (checkpoint.version !== 1 || checkpoint.invocationId !== r.invocationId || checkpoint.windowEnd !== WINDOW.end)
  ) {
    fail('checkpoint-once', `the checkpoint is ${JSON.stringify(checkpoint)}`);
  }
  if (checkpoint && !published)
    fail('checkpoint-with-rows', 'the checkpoint advanced, yet the window is not in the target');

  let record: InvocationRecord;
  try {
    record = await loadInvocation(ports, r.invocationId);
  } catch (error) {
    if (!(error instanceof JournalUnavailableError && error.missing)) throw error;
    // Never began: nothing may be durable.
    const custody = await loadCustody(ports, targetId);
    if (published || checkpoint || custody?.state === 'HELD')
      fail(
        'no-state-without-journal',
        `no journal, yet rows ${published}, checkpoint ${!!checkpoint}, custody ${custody?.state}`,
      );
    s.count('never-began', 'check: the invocation never began; nothing durable');
    return;
  }

  // custody: the journal's history, entry by entry
  const entries = await journalOf(ports.authority, r.invocationId).read();
  let holder: { session: string; epoch: number } | undefined;
  let checkpoints = 0;
  for (const e of entries) {
    const by = e.data.by as { session?: string; epoch?: number } | undefined;
    const { from, to } = e.data as { from?: unknown; to?: unknown };
    const where = `journal #${e.seq} ${e.type}${to ? ` ${String(from)}>${String(to)}` : ''}`;
    if (to !== undefined && !(isJournalState(from) && isJournalState(to) && canTransition(from, to)))
      fail('journal-edges', `${where} is not an edge of the journal's graph (src/domain/delivery/journal-states.ts)`);
    if (e.type === 'checkpoint') checkpoints++;
    if (e.type === 'begin') {
      if (holder) fail('custody-owner', `${where}: a second begin`);
      holder = { session: by!.session!, epoch: by!.epoch! };
      continue;
    }
    if (!holder) fail('custody-owner', `${where} comes before begin`);
    if (e.type === 'custody') {
      if (e.data.previousEpoch !== holder!.epoch || by?.epoch !== holder!.epoch + 1)
        fail(
          'custody-owner',
          `${where}: took epoch ${by?.epoch} over ${String(e.data.previousEpoch)} while epoch ${holder!.epoch} held custody`,
        );
      holder = { session: by!.session!, epoch: by!.epoch! };
      continue;
    }
    if (by && (by.session !== holder!.session || by.epoch !== holder!.epoch)) {
      fail(
        'custody-owner',
        `${where} was written by session ${by.session} epoch ${by.epoch}, a fenced session: ${holder!.session} epoch ${holder!.epoch} held custody`,
      );
    }
  }
  if (checkpoints > 1) fail('checkpoint-once', `${checkpoints} checkpoint entries in the journal`);
  const custody = await loadCustody(ports, targetId);
  const terminal = isTerminal(record.state);
  if (terminal && (custody?.state !== 'RELEASED' || custody.epoch !== holder!.epoch))
    fail(
      'custody-owner',
      `${record.state}, yet custody is ${custody?.state} at epoch ${custody?.epoch} (last holder epoch ${holder!.epoch})`,
    );
  if (
    !terminal &&
    (custody?.state !== 'HELD' || custody.fence?.session !== holder!.session || custody.fence.epoch !== holder!.epoch)
  ) {
    fail(
      'custody-owner',
      `${record.state} retains custody, yet the custody item is ${custody?.state} by ${custody?.fence?.session} epoch ${custody?.fence?.epoch}`,
    );
  }
  const problems = await recordProblems(ports, record, custody);
  if (problems.length) fail('journal-consistent', problems.join('; '));

  // final state
  const projection = await inspectInvocation(ports, r.invocationId);
  if (record.state === 'CUSTODY_RELEASED') {
    if (!published || !checkpoint)
      fail('final-state', `CUSTODY_RELEASED, yet rows published ${published}, checkpoint ${!!checkpoint}`);
  } else if (record.state === 'RETIRED') {
    if (published || checkpoint)
      fail('final-state', `RETIRED, yet rows published ${published}, checkpoint ${!!checkpoint}`);
  } else if (record.state === 'INCIDENT_RETAINED') {
    if (checkpoint) fail('final-state', 'an incident after the checkpoint advanced');
    s.count('incident', `check: INCIDENT_RETAINED ${projection.diagnostic_code}`);
  } else {
    fail(
      'final-state',
      `${record.state} after the operator finished; inspect offers [${projection.permitted_actions.join(', ')}] (${projection.diagnostic_code})`,
    );
  }
  // A fenced CreateStaging (zombie, duplicate invocation, stale carried state) re-creating the
  // stage after retire dropped it (seeds 13 and 34) must drop it again.
  if (terminal && (await stageExists(world, r)))
    fail('no-orphan-stage', `${record.state}, yet an owned stage was left in the target`);
  s.count(
    `final-${record.state}`,
    `check: ${record.state}, ${ids.length} rows, ${entries.length} journal entries, custody epoch ${holder!.epoch}`,
  );
}

async function stageExists(world: DeliveryWorld, r: ScheduleRoute): Promise<boolean> {
  const stage = stagingTableOf(r.invocationId, r.route.route.target.table);
  const found = await world.warehouse.admin.query(
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [stage.schema, stage.name],
  );
  return (found.rowCount ?? 0) > 0;
}
