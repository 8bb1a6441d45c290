import { loadCustody, loadInvocation } from '../../../src/delivery/journal/records.js';
import { journalOf } from '../../../src/delivery/journal/keys.js';
import { holdsCustody } from '../../../src/domain/delivery/journal-states.js';
import { candidateUuidOf, exchangeNamesOf } from '../../../src/domain/publication/candidate.js';
import type { ReplayReceipt } from '../../../src/domain/quality/receipt.js';
import type { FlowResult } from '../../../src/local/flow-runner.js';
import { readCapsule } from '../../../src/quality/capsule-store.js';
import { checkGovernanceInvariants, exchangeStatementsOf } from '../../support/governance-invariants.js';
import { windowIds, WINDOW } from '../../support/publication-world.js';
import { InvariantViolation } from '../../support/sched/errors.js';
import type { Scheduler } from '../../support/sched/scheduler.js';
import type { PublicationWorld } from './publication-world.js';
import { capsuleHistoryProblems, custodyHistoryProblems, type OperationWatch } from './publication-watch.js';

/** One schedule's operation and what its actors and the settle phase did. */
export interface PublicationRun {
  table: string;
  ref: { targetId: string; invocationId: string };
  predecessorUuid: string;
  request: { invocationId: string; manifestText: string; selector: string };
  watch: OperationWatch;
  flows: Array<{ label: string; flow: string; result: FlowResult }>;
  /** Settle found nothing permitted before a final state. */
  stuck?: { state: string; diagnostic: string; actions: string[] };
  final?: { state: string; diagnostic: string; actions: string[] };
  replay?: { receipt: ReplayReceipt; statements: string[] };
}

/**
 * End states with nothing permitted that are retained on purpose: the operator's incident
 * (docs/rules.md#quality-state-to-action, N7, N8).
 */
const RETAINED = new Set(['quality.reader_guard_held', 'quality.failed']);
const FINAL = new Set(['CUSTODY_RELEASED', 'RETIRED', 'INCIDENT_RETAINED']);
const STALE_ROW = '99999';

/**
 * The history checker of one publication schedule, after settle:
 * - I1–I10 of the spec (the one checker, test/support/governance-invariants.ts), with the
 *   EXCHANGE statements that reached ClickHouse (at most one, none without the intent);
 * - the window exactly once or not at all: the target is C holding every window row once
 *   (the stale row gone), or P holding only its stale row — never partial, never doubled;
 * - the capsule moved only along its state machine (docs/rules.md#quality-capsule: PREPARED →
 *   TARGET_PENDING / COMPLETE / FAILED), its version never back, a verdict and the completion
 *   version never rewritten;
 * - custody only ever this operation's, released by the session that held it;
 * - after settle, the operation is final (CUSTODY_RELEASED, RETIRED, INCIDENT_RETAINED) or
 *   retained with nothing permitted for a stated reason AND an incident published;
 *   a final release left no owned table (stage, candidate, tombstone) behind;
 * - a replay of a COMPLETE governance names the operation, sends no mutating statement,
 *   and leaves the capsule version and the dispatch count as they were.
 */
export async function checkPublication(world: PublicationWorld, s: Scheduler, run: PublicationRun): Promise<void> {
  const { ref, table } = run;
  const fail = (what: string): never => {
    throw new InvariantViolation(`publication ${ref.invocationId} on pub.${table}: ${what}`);
  };
  const op = { ...ref, route: 'daily', database: 'pub', table };
  const view = { ports: world.checkPorts, ch: world.ch };
  try {
    await checkGovernanceInvariants(view, op, {
      exchangeCount: exchangeStatementsOf(world.rec.statements, op).length,
      predecessorUuid: run.predecessorUuid,
      ...(run.replay ? { readOnlyStatements: run.replay.statements } : {}),
    });
  } catch (error) {
    if ((error as Error).name === 'AssertionError') fail((error as Error).message);
    throw error;
  }

  const C = candidateUuidOf(ref.invocationId);
  const uuid = await world.uuidOf(table);
  const ids = await windowIdsOf(world, table);
  if (uuid === C) {
    if (ids.join(',') !== windowIds.join(','))
      fail(
        `the target is C but holds ${ids.length} window rows (${ids.length - new Set(ids).size} doubled), expected the ${windowIds.length} exactly once`,
      );
  } else if (uuid === run.predecessorUuid) {
    if (ids.join(',') !== STALE_ROW)
      fail(`the target is still P but holds ${ids.length} window rows, not only its stale row`);
  } else fail(`the target holds ${uuid}: neither P nor C`);

  for (const p of capsuleHistoryProblems(run.watch.capsules)) fail(p);
  for (const p of custodyHistoryProblems(run.watch.custody, ref.invocationId)) fail(p);

  const journal = await loadInvocation(world.checkPorts, ref.invocationId).catch(() => undefined);
  const custody = await loadCustody(world.checkPorts, ref.targetId);
  if (journal) {
    if (holdsCustody(journal.state) && !(custody?.state === 'HELD' && custody.invocationId === ref.invocationId))
      fail(`the journal is ${journal.state} but custody is ${custody?.state} by ${custody?.invocationId}`);
    if (!holdsCustody(journal.state) && custody?.state === 'HELD')
      fail(`custody still HELD while the journal is ${journal.state}`);
    if (custody?.state === 'RELEASED') {
      const entries = await journalOf(world.checkPorts.authority, ref.invocationId).read();
      const release = entries.find(
        (e) => e.data.to === 'CUSTODY_RELEASED' || e.data.to === 'RETIRED' || e.data.to === 'INCIDENT_RETAINED',
      );
      const by = release?.data.by as { epoch?: number } | undefined;
      if (by?.epoch !== custody.epoch)
        fail(
          `custody released at epoch ${custody.epoch}, but the releasing transition was written at epoch ${by?.epoch}`,
        );
    }
  } else if (custody) fail('custody was taken but no journal exists');

  const final = run.final ?? fail('settle did not finish');
  if (!FINAL.has(final.state)) {
    if (!run.stuck || !RETAINED.has(final.diagnostic))
      fail(
        `after settle ${final.state} (${final.diagnostic}) with [${final.actions.join(', ')}] permitted and no stated reason to stop`,
      );
    if (!run.flows.some((f) => f.result.notices.length > 0))
      fail(`retained ${final.state} (${final.diagnostic}) without an incident published`);
  }
  if (final.state === 'CUSTODY_RELEASED' || final.state === 'RETIRED') {
    const left = await leftovers(world, ref.invocationId, table);
    if (left.length) fail(`${final.state}, yet owned tables remain: ${left.join(', ')}`);
  }
  if (run.replay) {
    const r = run.replay.receipt;
    const capsule = await readCapsule(world.checkPorts, ref);
    if (r.replayed_from.invocation_id !== ref.invocationId || r.invocation_id !== ref.invocationId)
      fail('the replay receipt names another operation');
    if (r.dispatch_count !== 1 || journal?.facts.dispatch?.count !== 1)
      fail(`replay saw dispatch count ${r.dispatch_count}, the journal ${journal?.facts.dispatch?.count}`);
    if (capsule?.version !== r.authority.observed_version)
      fail(`the capsule moved from v${r.authority.observed_version} to v${capsule?.version} across a replay`);
  }
  s.note(
    `check: ${final.state} (${final.diagnostic}); capsule ${run.watch.capsules.map((c) => c.state).join('→') || 'none'}; ${run.flows.length} flows`,
  );
}

async function windowIdsOf(world: PublicationWorld, table: string): Promise<string[]> {
  const result = await world.ch.client.query({
    query: `SELECT toString(event_id) AS id FROM pub.${table} WHERE event_time >= parseDateTime64BestEffort({s:String}, 3) AND event_time < parseDateTime64BestEffort({e:String}, 3)`,
    query_params: { s: WINDOW.start, e: WINDOW.end },
    format: 'JSONEachRow',
  });
  return (await result.json<{ id: string }>()).map((r) => r.id).sort();
}

async function leftovers(world: PublicationWorld, invocationId: string, table: string): Promise<string[]> {
  const names = exchangeNamesOf(invocationId, { database: 'pub', table });
  const result = await world.ch.client.query({
    query:
      'SELECT name FROM system.tables WHERE database = {db:String} AND name IN ({s:String}, {c:String}, {x:String})',
    query_params: { db: 'pub', s: names.stage, c: names.candidate, x: names.tombstone },
    format: 'JSONEachRow',
  });
  return (await result.json<{ name: string }>()).map((r) => r.name);
}
