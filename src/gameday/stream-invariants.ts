import type { AppendOutcome, LaneRef } from '../domain/stream.js';
import type { DrillRun } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';
import { committedWal, spentMarker, walsOf } from '../stream/append/attempt-evidence.js';
import { loadHead } from '../stream/lane-store.js';
import { readStream } from '../stream/read.js';
import type { InvariantCheck } from './report.js';

/**
 * What a stream-append drill must leave, whatever its fault did: the batch acknowledged;
 * the drilled attempt, re-run, answering what it was settled to; a reader of the lane from
 * offset 0 seeing the batch's records once each, in order, at consecutive offsets, and
 * nothing else; every attempt the drill made settled by its recovery — committed or spent,
 * never both, never neither (no MAY_HAVE_COMMITTED left behind); and the lane free for the
 * next batch, acknowledged right after this one.
 */

export interface StreamDrillFacts {
  ports: Ports;
  lane: LaneRef;
  /** The batch's records, as appended. */
  batch: readonly string[];
  /** Every attempt id the drill appended under, in order. */
  attempts: readonly string[];
  /** Those recovery left neither committed nor spent (or both): `unsettledAttempts`. */
  unsettled: readonly string[];
  /** The answer that acknowledged the batch, if one did. */
  acknowledged: AppendOutcome | undefined;
  /** What re-running the drilled attempt answered. */
  replay: string;
  fired: number | null;
  /** Appends another batch under a fresh attempt (run last: it moves the lane on). */
  appendNext: () => Promise<DrillRun>;
}

/** The drilled attempt: the one whose outcome the fault decides. */
export const DRILLED_ATTEMPT = 'a0';

/** An append or resolve run as one answer: the outcome's status, or how the execution ended. */
export const answerOf = (run: DrillRun): string =>
  run.status === 'SUCCEEDED' ? ((run.output as AppendOutcome | undefined)?.status ?? 'NO_OUTCOME') : run.status;

/** Pages read before a drill's lane (a few records) counts as unreadable. */
const MAX_PAGES = 8;

export async function checkStream(f: StreamDrillFacts): Promise<InvariantCheck[]> {
  const checks: InvariantCheck[] = [];
  const check = (name: string, held: boolean, detail: string): void => void checks.push({ name, held, detail });
  const { ports, lane, batch, acknowledged } = f;
  check(
    'fault-reached',
    f.fired === null || f.fired > 0,
    f.fired === null ? 'not observable from here' : `fired ${f.fired}×`,
  );
  check(
    'converged',
    acknowledged !== undefined,
    acknowledged
      ? `attempt ${acknowledged.attemptId} acknowledged at [${acknowledged.start}, ${acknowledged.end})`
      : 'no append or resolve acknowledged the batch',
  );
  const expected = acknowledged?.attemptId === DRILLED_ATTEMPT ? 'KNOWN_COMMITTED' : 'KNOWN_NOT_COMMITTED';
  check(
    'repeat-safe',
    f.replay === expected,
    `attempt ${DRILLED_ATTEMPT} re-run answered ${f.replay}, settled ${expected}`,
  );

  const read = await readLane(ports, lane).catch((error: Error) => error.name);
  const seen = typeof read === 'string' ? undefined : read;
  const texts = seen?.records.map((r) => Buffer.from(r.data, 'base64').toString('utf8'));
  check(
    'exactly-once',
    !!seen &&
      seen.committedEnd === batch.length &&
      JSON.stringify(texts) === JSON.stringify(batch) &&
      seen.records.every((r, i) => r.offset === i),
    seen
      ? `${seen.records.length} record(s) at offsets ${seen.records.map((r) => r.offset).join(',') || 'none'} of ${seen.committedEnd} committed; ${JSON.stringify(texts) === JSON.stringify(batch) ? 'the batch, in order' : 'not the batch'}`
      : `the read failed: ${read as string}`,
  );

  check(
    'attempts-settled',
    f.unsettled.length === 0,
    f.unsettled.length
      ? `after recovery: ${f.unsettled.join(', ')}`
      : `${f.attempts.join(', ')}: each committed or spent`,
  );

  const head = await loadHead(ports, lane);
  const held = head.suspendedBy ?? head.writer?.id;
  const next = held === undefined ? await f.appendNext() : undefined;
  const outcome = next?.status === 'SUCCEEDED' ? (next.output as AppendOutcome) : undefined;
  check(
    'lane-usable',
    held === undefined &&
      outcome?.status === 'KNOWN_COMMITTED' &&
      outcome.start === batch.length &&
      outcome.end === batch.length + 2,
    held !== undefined
      ? `the lane is still held by ${held}`
      : `the next batch: ${next ? answerOf(next) : 'not run'}${outcome?.start !== undefined ? ` at [${outcome.start}, ${outcome.end})` : ''}`,
  );
  return checks;
}

/**
 * The attempts whose evidence settles neither way: no commit record names them and no spent
 * marker does (MAY_HAVE_COMMITTED for anyone who asks: a re-run could still commit), or both
 * do (the evidence contradicts itself). Each as `<attempt> neither|committed and spent`.
 */
export async function unsettledAttempts(ports: Ports, lane: LaneRef, attempts: readonly string[]): Promise<string[]> {
  const unsettled: string[] = [];
  for (const attemptId of attempts) {
    const [commit, marker] = await Promise.all([
      walsOf(ports, lane, attemptId).then((wals) => committedWal(ports, lane, attemptId, wals)),
      spentMarker(ports, lane, attemptId),
    ]);
    if (!commit === !marker) unsettled.push(`${attemptId} ${commit ? 'committed and spent' : 'neither'}`);
  }
  return unsettled;
}

/** The lane from offset 0 through the read path `stream read` uses, page by page to its committed end. */
async function readLane(ports: Ports, lane: LaneRef) {
  const records: Array<{ offset: number; data: string }> = [];
  let page = await readStream({ ...lane, from: 0 }, ports);
  records.push(...page.records);
  for (let i = 1; i < MAX_PAGES && page.next < page.committedEnd && page.next > page.from; i++) {
    page = await readStream({ ...lane, from: page.next }, ports);
    records.push(...page.records);
  }
  return { committedEnd: page.committedEnd, records };
}
