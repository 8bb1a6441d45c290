import type { JournalState } from '../../../src/domain/delivery/journal-states.js';
import type { Op, OpHistory } from '../sched/op-history.js';

/**
 * The delivery history checker: a schedule's client operations (op-history.ts) — each
 * deliver-window execution, each recovery execution the dispatcher started, each live
 * action an operator or the finishing operator ran — against what the target holds once
 * they all ended. Every completion is what its client was told; an `ok` is an
 * acknowledgement, and an acknowledgement is a promise about the target:
 * - the window delivered (a deliver-window execution SUCCEEDED, or a recovery execution or
 *   action that left the journal PUBLISHED, SUCCEEDED or CUSTODY_RELEASED) ⇒ the target
 *   holds every row of the window exactly once, and exactly one publication receipt;
 * - the window RETIRED ⇒ the target holds none of the window's rows and no receipt;
 * - no two acknowledgements contradict each other: a window told delivered is never told
 *   RETIRED, before or after;
 * - whatever the acknowledgements, the target never holds the window two or more times
 *   over (a publication replayed as a second copy, not as the same publication).
 * `info` and `fail` promise nothing: an execution that FAILED may have delivered (its
 * outcome is unknown until recovery), a refusal did not move the journal.
 * Returns what is broken, one line each (empty: every acknowledgement holds).
 */

/** deliver-window's executions; recovery executions are named by their flow, actions by theirs. */
export const DELIVER = 'deliver-window';

/** Every completion's value: what the client was told. */
export interface OutcomeValue {
  /** An execution's status. */
  status?: 'SUCCEEDED' | 'FAILED';
  /** The journal state the execution's output or the action reported. */
  state?: JournalState;
  /** The error an execution failed with, or an action threw. */
  error?: string;
  /** The diagnostic code of an action that ended short of its goal with custody retained. */
  retained?: string;
}

/** What the target holds once every actor ended: observed, not reported. */
export interface TargetFacts {
  /** The event ids of the rows in the window's target table, one per row (duplicates kept). */
  rows: readonly string[];
  /** The event ids the window holds at its source. */
  windowIds: readonly string[];
  /** Publication receipts of the invocation. */
  receipts: number;
}

/** Journal states only a publication reaches: the rows are in the target from then on. */
const DELIVERED_STATES: ReadonlySet<string> = new Set<JournalState>(['PUBLISHED', 'SUCCEEDED', 'CUSTODY_RELEASED']);

type Verdict = 'delivered' | 'retired';

interface Ack {
  verdict: Verdict;
  /** The completion's index: when the client was told. */
  at: number;
  /** The acknowledgement, named as a message quotes it. */
  said: string;
}

/** What an `ok` told its client about the window, if anything. */
function verdictOf(invoke: Op, completion: Op): Verdict | undefined {
  const told = completion.value as OutcomeValue;
  if (invoke.f === DELIVER || (told.state !== undefined && DELIVERED_STATES.has(told.state))) return 'delivered';
  return told.state === 'RETIRED' ? 'retired' : undefined;
}

function describeAck(invoke: Op, completion: Op, verdict: Verdict): string {
  const told = completion.value as OutcomeValue;
  const answer = invoke.f === DELIVER ? (told.status ?? 'ok') : (told.state ?? 'ok');
  return `${invoke.f} by ${invoke.process} (op ${completion.index}) acknowledged the window ${verdict} (${answer})`;
}

/** How the target's rows differ from the window held exactly once; undefined when they do not. */
function rowsDiffer(target: TargetFacts): string | undefined {
  const held = new Map<string, number>();
  for (const id of target.rows) held.set(id, (held.get(id) ?? 0) + 1);
  const missing = target.windowIds.filter((id) => !held.has(id));
  const twice = [...held].filter(([, n]) => n > 1).map(([id]) => id);
  const window = new Set(target.windowIds);
  const foreign = [...held.keys()].filter((id) => !window.has(id));
  const parts = [
    missing.length ? `${missing.length} of the window's rows missing [${missing.join(',')}]` : '',
    twice.length ? `rows held more than once [${twice.join(',')}]` : '',
    foreign.length ? `rows not of the window [${foreign.join(',')}]` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : undefined;
}

function rowsOfWindow(target: TargetFacts): number {
  const window = new Set(target.windowIds);
  return target.rows.filter((id) => window.has(id)).length;
}

export function checkExactlyOnce(history: OpHistory, target: TargetFacts): string[] {
  const broken: string[] = [];
  const acks: Ack[] = [];
  for (const { invoke, completion } of history.pairs()) {
    if (completion?.type !== 'ok') continue;
    const verdict = verdictOf(invoke, completion);
    if (verdict) acks.push({ verdict, at: completion.index, said: describeAck(invoke, completion, verdict) });
  }
  // In the order the clients were told, not the order they asked.
  acks.sort((a, b) => a.at - b.at);
  const held = `the target holds ${target.rows.length} rows (the window has ${target.windowIds.length}) and ${target.receipts} receipt(s)`;

  // Each acknowledgement against the target (the first of each kind: the rest say the same).
  const delivered = acks.find((a) => a.verdict === 'delivered');
  if (delivered) {
    const differ = rowsDiffer(target);
    if (differ || target.receipts !== 1) broken.push(`${delivered.said}, yet ${held}${differ ? `: ${differ}` : ''}`);
  }
  const retired = acks.find((a) => a.verdict === 'retired');
  if (retired && (rowsOfWindow(target) > 0 || target.receipts > 0))
    broken.push(
      `${retired.said}, yet the target holds ${rowsOfWindow(target)} of the window's rows and ${target.receipts} receipt(s)`,
    );

  // Acknowledgements against each other, in the order they were given.
  const first = acks[0];
  const contrary = first && acks.find((a) => a.verdict !== first.verdict);
  if (first && contrary) broken.push(`${contrary.said} after ${first.said}`);

  // A window held k ≥ 2 times over is a replay that copied, acknowledged or not.
  const n = target.windowIds.length;
  if (n > 0 && target.rows.length >= 2 * n && target.rows.length % n === 0)
    broken.push(`the target holds ${target.rows.length} rows, ${target.rows.length / n} times the window's ${n}`);
  return broken;
}
