import type { AppendOutcome } from '../domain/stream.js';
import type { DrillRun } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';
import { loadHead } from '../stream/lane-store.js';
import { readStream } from '../stream/read.js';
import type { DrillLane } from './drill-lane.js';
import { checkCollected } from './gc-invariants.js';
import { checkCompactions, checkGen0, checkTasksCleaned, laneCopies, recordsAt } from './lane-copies.js';
import type { MaintenanceFlow } from './maintenance-drill.js';
import type { InvariantCheck } from './report.js';
import { answerOf } from './stream-invariants.js';

/**
 * What a maintenance drill must leave, whatever its fault did, judged on what recovery left.
 * Every flow: the fault reached; each drilled input converged (a run succeeded; GC done,
 * every maintained lane MAINTAINED); a reader from the trim offset sees every acknowledged
 * record at or above it exactly once, in order, at its offset, and one below it is refused
 * (Stream.OffsetTrimmed); per flow, what it makes: the trim (monotonic, at its target, never
 * past the committed end, a lower target refused), generation 0 and compactions
 * (lane-copies.ts), GC's collection (gc-invariants.ts). Only then the same input once more,
 * which must find nothing left to do (`repeat-safe`), and the lane neither suspended nor held
 * (`lane-free`; after a trim `lane-usable`, taking the next batch: last, it moves the lane on).
 */

export interface MaintenanceFacts {
  flow: MaintenanceFlow;
  ports: Ports;
  lane: DrillLane;
  fired: number | null;
  /** Each drilled input's last recovery run. */
  converged: DrillRun[];
  /** Runs the first input once more (after the state is checked: it may finish what recovery did not). */
  runOnceMore: () => Promise<DrillRun>;
  /** The trim offset before the drilled run. */
  trimBefore: number;
  /** stream-trim's target. */
  trimTo?: number;
}

/** Pages read before a drill's lane (a few records) counts as unreadable. */
const MAX_PAGES = 8;

type Output = Record<string, unknown>;

export async function checkMaintenance(f: MaintenanceFacts): Promise<InvariantCheck[]> {
  const checks: InvariantCheck[] = [];
  const check = (name: string, held: boolean, detail: string): void => void checks.push({ name, held, detail });
  const { ports, lane, flow } = f;
  check(
    'fault-reached',
    f.fired === null || f.fired > 0,
    f.fired === null ? 'not observable from here' : `fired ${f.fired}×`,
  );
  const ended = f.converged.map((r) =>
    r.status === 'SUCCEEDED' ? doneOf(flow, r.output) : `${r.status} ${r.error ?? ''}`,
  );
  check(
    'converged',
    ended.every((e) => e === 'done'),
    ended.join('; '),
  );
  const copies = await laneCopies(ports, lane.ref);
  if (flow === 'stream-trim') await checkTrim(f, copies.head, check);
  if (flow === 'stream-materialize' || flow === 'stream-maintain') await checkGen0(ports, lane.ref, copies, check);
  if (flow === 'stream-compact' || flow === 'stream-maintain') await checkCompactions(ports, copies, lane.acked, check);
  if (flow === 'stream-materialize' || flow === 'stream-compact' || flow === 'stream-maintain')
    await checkTasksCleaned(ports, lane.ref, copies, check);
  if (flow === 'stream-gc' || flow === 'stream-maintain')
    await checkCollected(ports, lane.ref, copies, flow === 'stream-gc', check);

  await checkReads(f, copies.head.trimOffset, check);
  // Judged on what recovery left: only then the input once more, which may finish what recovery did not.
  const repeat = await f.runOnceMore();
  const idle = repeat.status === 'SUCCEEDED' ? idleOf(flow, repeat.output as Output, f.trimTo) : repeat.status;
  check('repeat-safe', idle === 'nothing to do', `run once more: ${idle}`);
  await checkUsable(lane, flow === 'stream-trim', check);
  return checks;
}

/** How a converged run's output says the flow finished: `done`, or what is left. */
function doneOf(flow: MaintenanceFlow, output: unknown): string {
  if (flow === 'stream-gc') return (output as Output | undefined)?.done === true ? 'done' : 'GC not done';
  if (flow !== 'stream-maintain') return 'done';
  const lanes = Array.isArray(output) ? (output as Output[]) : [];
  return lanes.length && lanes.every((l) => l.status === 'MAINTAINED')
    ? 'done'
    : `lanes ${JSON.stringify(lanes.map((l) => l.status))}`;
}

/** What a run after convergence did: `nothing to do`, or what it still found. */
function idleOf(flow: MaintenanceFlow, o: Output, trimTo: number | undefined): string {
  const totals = (g: unknown) => ((g ?? {}) as { totals?: Output }).totals ?? {};
  switch (flow) {
    case 'stream-trim':
      return o.trimOffset === trimTo && o.previousTrimOffset === trimTo
        ? 'nothing to do'
        : `trim moved ${String(o.previousTrimOffset)} → ${String(o.trimOffset)}`;
    case 'stream-materialize':
      return (o.materialized as unknown[]).length === 0
        ? 'nothing to do'
        : `${(o.materialized as unknown[]).length} range(s) materialized`;
    case 'stream-compact':
      return o.compacted === undefined ? 'nothing to do' : 'compacted again';
    case 'stream-gc': {
      const t = totals(o);
      return t.marked === 0 && t.deleted === 0
        ? 'nothing to do'
        : `marked ${String(t.marked)}, deleted ${String(t.deleted)}`;
    }
    case 'stream-maintain': {
      const lanes = (Array.isArray(o) ? o : []) as Output[];
      const busy = lanes.filter(
        (l) => l.status !== 'MAINTAINED' || totals(l.gc).marked !== 0 || totals(l.gc).deleted !== 0,
      );
      return lanes.length && busy.length === 0 ? 'nothing to do' : `lanes ${JSON.stringify(busy)}`;
    }
  }
}

/** `trim-monotonic`: at its target after recovery, never moved back, never past the committed end; a lower target refused, the trim unchanged. */
async function checkTrim(
  f: MaintenanceFacts,
  head: { trimOffset: number; committedEnd: number },
  check: (name: string, held: boolean, detail: string) => void,
): Promise<void> {
  const lower = await f.lane.run(`stream-trim back to ${f.trimBefore}`, 'stream-trim', {
    ...f.lane.ref,
    to: f.trimBefore,
  });
  const after = (await loadHead(f.ports, f.lane.ref)).trimOffset;
  check(
    'trim-monotonic',
    head.trimOffset === f.trimTo &&
      f.trimBefore <= head.trimOffset &&
      head.trimOffset <= head.committedEnd &&
      lower.status === 'FAILED' &&
      after === head.trimOffset,
    `trim ${f.trimBefore} → ${head.trimOffset} (target ${String(f.trimTo)}, committed end ${head.committedEnd}); back to ${f.trimBefore}: ${lower.status}${lower.error ? ` ${lower.error}` : ''}, the trim then ${after}`,
  );
}

/** `exactly-once` from the trim offset, through the read path `stream read` uses; `below-trim-refused`. */
async function checkReads(
  f: MaintenanceFacts,
  trim: number,
  check: (name: string, held: boolean, detail: string) => void,
) {
  const { ports, lane } = f;
  const end = lane.acked.at(-1)!.end;
  const expected = recordsAt(lane.acked, trim, end);
  const read = await readFrom(ports, lane, trim).catch((error: Error) => error.name);
  if (typeof read === 'string') check('exactly-once', false, `the read from ${trim} failed: ${read}`);
  else {
    const texts = read.records.map((r) => Buffer.from(r.data, 'base64').toString('utf8'));
    check(
      'exactly-once',
      read.committedEnd === end &&
        JSON.stringify(texts) === JSON.stringify(expected) &&
        read.records.every((r, i) => r.offset === trim + i),
      `${read.records.length} record(s) from ${trim} of ${read.committedEnd} committed; ${JSON.stringify(texts) === JSON.stringify(expected) ? 'the acknowledged ones, in order' : 'not the acknowledged ones'}`,
    );
  }
  if (trim > 0) {
    const below = await readStream({ ...lane.ref, from: trim - 1 }, ports).then(
      () => 'records',
      (error: Error) => error.name,
    );
    check('below-trim-refused', below === 'Stream.OffsetTrimmed', `a read from ${trim - 1}: ${below}`);
  }
}

async function readFrom(ports: Ports, lane: DrillLane, from: number) {
  const records: Array<{ offset: number; data: string }> = [];
  let page = await readStream({ ...lane.ref, from }, ports);
  records.push(...page.records);
  for (let i = 1; i < MAX_PAGES && page.next < page.committedEnd && page.next > page.from; i++) {
    page = await readStream({ ...lane.ref, from: page.next }, ports);
    records.push(...page.records);
  }
  return { committedEnd: page.committedEnd, records };
}

/**
 * stream-trim moves the head, whose version every append's CAS names: `lane-usable` — nothing
 * holds the lane and the next batch is acknowledged at its committed end. The other flows
 * never write the head: `lane-free` — no suspension, no writer slot left on it.
 */
async function checkUsable(
  lane: DrillLane,
  appendNext: boolean,
  check: (name: string, held: boolean, detail: string) => void,
) {
  const head = await loadHead(lane.world.ports, lane.ref);
  const held = head.suspendedBy ?? head.writer?.id;
  if (!appendNext) {
    check(
      'lane-free',
      held === undefined,
      held === undefined ? 'nothing holds the lane' : `the lane is held by ${held}`,
    );
    return;
  }
  const end = head.committedEnd;
  const next =
    held === undefined
      ? await lane.append('next', [`game day ${lane.id} next 0`, `game day ${lane.id} next 1`])
      : undefined;
  const outcome = next?.status === 'SUCCEEDED' ? (next.output as AppendOutcome) : undefined;
  check(
    'lane-usable',
    held === undefined && outcome?.status === 'KNOWN_COMMITTED' && outcome.start === end && outcome.end === end + 2,
    held !== undefined
      ? `the lane is still held by ${held}`
      : `the next batch: ${next ? answerOf(next) : 'not run'}${outcome?.start !== undefined ? ` at [${outcome.start}, ${outcome.end})` : ''}`,
  );
}
