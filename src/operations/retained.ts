import { deliveryKeys, HELD_PK } from '../delivery/journal/keys.js';
import { inconsistent } from '../delivery/journal/errors.js';
import { read, readInvocation, type InvocationRecord } from '../delivery/journal/records.js';
import { ValidationError } from '../domain/errors.js';
import { holdsCustody, JOURNAL_STATES } from '../domain/delivery/journal-states.js';
import type { Ports } from '../ports/index.js';
import { readCapsule } from '../quality/capsule-store.js';
import { laneKeys, validateLane, type LaneHead, type LaneRef } from '../domain/stream.js';

/**
 * The retained-items gauge (docs/operate.md "Alarms and dashboards"): a scheduled sweep counts, by
 * kind and durable state, the items someone must act on, and the telemetry puts every count
 * as the RetainedItems metric each run (src/telemetry/retained.ts) — zeros included, so an
 * alarm on it stays in ALARM exactly while an item is retained, and a sweep that stopped
 * leaves no data, which alarms too (infra/retained-alarms.ts). Read-only: the held index
 * (`delivery#held`, journal/keys.ts: one item per invocation holding custody, written by
 * begin and deleted by the terminal transition), each held invocation's record (validated
 * as read: a malformed one fails the sweep, which pages as missing data) and its quality
 * capsule — a Query page per 100 held items and two GetItems each, so a run is bounded by
 * what is held (at most one invocation per target), never by history. Stream lanes have no
 * such index: the sweep reads the head of each lane it is given (the stage's
 * `maintenanceLanes`), one GetItem each.
 */

export const RETAINED_KIND = 'cutpoint.retained-items.v1';

/**
 * A delivery custody, a quality capsule's governance (a FAILED or pending capsule, a held
 * reader guard), or a stream lane suspended by an append whose outcome is unknown.
 */
export type RetainedKind = 'custody' | 'governance' | 'lane';

/** Where each kind's runbook pages are (docs/runbook/<subsystem>/). */
export const RETAINED_SUBSYSTEM: Readonly<Record<RetainedKind, 'delivery' | 'quality' | 'stream'>> = {
  custody: 'delivery',
  governance: 'quality',
  lane: 'stream',
};

/** The quality states the gauge counts (their runbook pages: docs/runbook/quality/). */
export const RETAINED_GOVERNANCE_STATES = ['FAILED', 'TARGET_PENDING', 'READER_GUARD_HELD'] as const;

/** Every (kind, state) the gauge reports, in a stable order: one metric, and one alarm, each. */
export const RETAINED_STATES: ReadonlyArray<{ kind: RetainedKind; state: string }> = [
  ...JOURNAL_STATES.filter(holdsCustody).map((state) => ({ kind: 'custody' as const, state })),
  ...RETAINED_GOVERNANCE_STATES.map((state) => ({ kind: 'governance' as const, state })),
  { kind: 'lane', state: 'MAY_HAVE_COMMITTED' },
];

/**
 * States that are never a step of a running flow: retained from the moment they are written.
 * Every other custody state (and a held reader guard) is also where a running delivery or
 * observation stands for a while: retained once it has not moved for `retainedAfterMinutes`.
 */
const AT_ONCE = new Set<string>(['INCIDENT_RETAINED', 'FAILED', 'TARGET_PENDING']);

/** What the schedule passes (infra/retained-sweep.ts): longer than a delivery normally rests in one state. */
export const DEFAULT_RETAINED_AFTER_MINUTES = 60;

export interface RetainedCount {
  kind: RetainedKind;
  state: string;
  count: number;
}

export interface RetainedSweepResult {
  kind: typeof RETAINED_KIND;
  /** The clock port's now: what `retainedAfterMinutes` is measured from. */
  at: string;
  retainedAfterMinutes: number;
  /** One entry per RETAINED_STATES, zeros included. */
  counts: RetainedCount[];
  /** The lanes counted in MAY_HAVE_COMMITTED, by name (lanes have no list command; the sweep's log names them). */
  suspendedLanes: LaneRef[];
}

/** At most this many lanes per sweep (one GetItem each). */
export const MAX_SWEPT_LANES = 100;

function lanesOf(input: unknown): LaneRef[] {
  const given = (input as { lanes?: unknown } | null | undefined)?.lanes;
  if (given === undefined) return [];
  if (!Array.isArray(given) || given.length > MAX_SWEPT_LANES)
    throw new ValidationError(
      'operations.invalid_lanes',
      `lanes must be a list of at most ${MAX_SWEPT_LANES} {stream, partition}`,
    );
  return given.map((lane) => validateLane(lane as LaneRef));
}

function afterMinutesOf(input: unknown): number {
  const given = (input as { retainedAfterMinutes?: unknown } | null | undefined)?.retainedAfterMinutes;
  if (!Number.isInteger(given) || (given as number) < 1 || (given as number) > 7 * 24 * 60)
    throw new ValidationError(
      'operations.invalid_retained_after',
      'retainedAfterMinutes must be a whole number of minutes from 1 to 10080',
    );
  return given as number;
}

/** The gauge of one moment: how many items are retained in each (kind, state). Read-only. */
export async function sweepRetained(input: unknown, ports: Ports): Promise<RetainedSweepResult> {
  const retainedAfterMinutes = afterMinutesOf(input);
  const lanes = lanesOf(input);
  const now = ports.clock.now();
  const since = (at: string): boolean => now.getTime() - Date.parse(at) >= retainedAfterMinutes * 60_000;
  const counts = new Map(RETAINED_STATES.map(({ kind, state }) => [`${kind}/${state}`, 0]));
  const add = (kind: RetainedKind, state: string) =>
    counts.set(`${kind}/${state}`, counts.get(`${kind}/${state}`)! + 1);
  for (const record of await heldInvocations(ports)) {
    if (!holdsCustody(record.state)) continue;
    if (AT_ONCE.has(record.state) || since(record.updatedAt)) add('custody', record.state);
    // A capsule's governance is retained with its custody (FAILED keeps it); a released operation holds none.
    const governance = await governanceOf(ports, record, since);
    if (governance) add('governance', governance);
  }
  const suspendedLanes: LaneRef[] = [];
  for (const lane of lanes) if (await suspended(ports, lane, since)) suspendedLanes.push(lane);
  counts.set('lane/MAY_HAVE_COMMITTED', suspendedLanes.length);
  return {
    kind: RETAINED_KIND,
    at: now.toISOString(),
    retainedAfterMinutes,
    counts: RETAINED_STATES.map(({ kind, state }) => ({ kind, state, count: counts.get(`${kind}/${state}`)! })),
    suspendedLanes,
  };
}

/** Every invocation holding custody now, from the held index (pages of 100). */
async function heldInvocations(ports: Ports): Promise<InvocationRecord[]> {
  const records: InvocationRecord[] = [];
  for (let after: string | undefined, more = true; more;) {
    const page = await read(() =>
      ports.authority.query(HELD_PK, 'inv#', { limit: HELD_PAGE, ...(after ? { startAfterSk: after } : {}) }),
    );
    for (const item of page) {
      const invocationId = item.sk.slice('inv#'.length);
      if (item.sk !== deliveryKeys.held(invocationId).sk || typeof item.targetId !== 'string')
        throw inconsistent('a held-index item is malformed');
      records.push(await readInvocation(ports, { targetId: item.targetId, invocationId }));
    }
    more = page.length === HELD_PAGE;
    after = page.at(-1)?.sk;
  }
  return records;
}

const HELD_PAGE = 100;

/** The operation's retained governance, if any: a held guard (once it has not moved), else a FAILED or TARGET_PENDING capsule. */
async function governanceOf(
  ports: Ports,
  record: InvocationRecord,
  since: (at: string) => boolean,
): Promise<(typeof RETAINED_GOVERNANCE_STATES)[number] | undefined> {
  const capsule = await readCapsule(ports, { targetId: record.targetId, invocationId: record.invocationId });
  if (!capsule || capsule.schema !== 2) return undefined;
  if (capsule.reader) return since(capsule.reader.acquiredAt) ? 'READER_GUARD_HELD' : undefined;
  if (capsule.state === 'FAILED' || capsule.state === 'TARGET_PENDING') return capsule.state;
  return undefined;
}

/**
 * Whether a lane waits for a resolve: suspended by SuspendLane (the attempt's outcome is
 * unknown: at once), or by an attempt's own claim that has not moved for
 * retainedAfterMinutes (its process died between the claim and the head CAS). A lane not
 * created yet holds nothing.
 */
async function suspended(ports: Ports, lane: LaneRef, since: (at: string) => boolean): Promise<boolean> {
  // suspendedAt: when the claim (claim-turn.ts) or SuspendLane set suspendedBy.
  const head = (await read(() => ports.authority.get(laneKeys.head(lane)))) as unknown as
    (LaneHead & { suspendedAt?: string }) | undefined;
  if (!head?.suspendedBy) return false;
  return head.turnClaimed !== true || since(head.suspendedAt ?? new Date(0).toISOString());
}

/** For the alarms' texts: whether a state counts at once (true) or after retainedAfterMinutes. */
export const countsAtOnce = (state: string): boolean => AT_ONCE.has(state);
