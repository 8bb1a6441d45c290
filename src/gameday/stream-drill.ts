import { randomBytes, randomUUID } from 'node:crypto';
import { CutpointError } from '../domain/errors.js';
import type { Fence } from '../domain/fence.js';
import type { Drill } from '../domain/gameday/drill-plan.js';
import type { AppendOutcome, LaneRef } from '../domain/stream.js';
import type { DrillRun, GamedayDriver } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';
import { createStream } from '../stream/create-stream.js';
import { STREAM_CUT_POINTS } from '../stream/cut-points.js';
import { loadHead } from '../stream/lane-store.js';
import type { TakeoverResult } from '../stream/takeover.js';
import type { DrillWorld } from './drill-world.js';
import type { DrillReport } from './report.js';
import { answerOf, checkStream, DRILLED_ATTEMPT, unsettledAttempts } from './stream-invariants.js';

/**
 * One stream-append drill: a lane of the drill's own (created as `stream create` does, taken
 * over through stream-takeover with a session minted here) and one batch appended through
 * stream-append with the drill's fault armed. For the retire's cut point the lane is first
 * suspended by another attempt (its head CAS outcome lost): only an attempt refused for good
 * is spent. Then, faults off, what the CLI tells an operator: the attempt that holds the
 * lane resolved (stream-resolve-append); an attempt whose outcome is unknown (a failed
 * execution, MAY_HAVE_COMMITTED) resolved by its own id; a batch proven not committed
 * appended again under a new attempt (the resolved one is spent for good); until the batch
 * is acknowledged. Then the drilled attempt is re-run as it was (an append is repeat-safe by
 * its attempt id) and the invariants are checked (stream-invariants.ts).
 */

const OWNER = 'gameday';
const BATCH_SIZE = 3;
/** Recovery steps (each a flow run) before a drill gives up on converging. */
const MAX_RECOVERY_STEPS = 6;

export async function runStreamDrill(c: DrillWorld, drill: Drill): Promise<DrillReport> {
  const { driver, ports } = c;
  const id = randomBytes(6).toString('hex');
  const lane: LaneRef = { stream: `gameday-${id}`, partition: 0 };
  const fence = await ownedLane(driver, ports, lane, id);
  const batch = Array.from({ length: BATCH_SIZE }, (_, i) => `game day ${id} record ${i}`);
  const trail: string[] = [];
  const attempts: string[] = [];
  let runs = 0;
  const run = async (what: string, flow: string, input: unknown): Promise<DrillRun> => {
    const result = await driver.runFlow(flow, `${what.split(' ')[0]}-${id}-${runs++}`, input);
    trail.push(`${what} ${result.status}${result.error ? ` ${result.error}` : ''} → ${answerOf(result)}`);
    c.progress(`  ${trail.at(-1)}`);
    return result;
  };
  const append = (attemptId: string, records = batch): Promise<DrillRun> => {
    if (!attempts.includes(attemptId)) attempts.push(attemptId);
    const encoded = records.map((r) => Buffer.from(r).toString('base64'));
    return run(`append ${attemptId}`, 'stream-append', { ...lane, attemptId, session: fence, records: encoded });
  };
  const resolve = (attemptId: string): Promise<DrillRun> =>
    run(`resolve ${attemptId}`, 'stream-resolve-append', { ...lane, attemptId });

  c.progress(`drill ${drill.spec} (lane ${lane.stream}/${lane.partition})`);
  // The retire is crossed only by an attempt refused for good: the lane is suspended by another first.
  if (drill.cutPoint === STREAM_CUT_POINTS.retire) {
    const blocking = await driver.arm(`${STREAM_CUT_POINTS.headCas}:lose-request*`);
    try {
      await append('blocker', [`game day ${id} blocker`]);
    } finally {
      await blocking.disarm();
    }
  }
  const armed = await driver.arm(drill.spec);
  let fired: number | undefined;
  let answer: DrillRun;
  try {
    answer = await append(DRILLED_ATTEMPT);
  } finally {
    fired = await armed.disarm();
  }

  let attempt = DRILLED_ATTEMPT;
  for (let step = 0; step < MAX_RECOVERY_STEPS && answerOf(answer) !== 'KNOWN_COMMITTED'; step++) {
    // What holds the lane (`stream describe` names it) is resolved first: nothing appends before.
    const holder = (await loadHead(ports, lane)).suspendedBy;
    if (holder !== undefined && holder !== attempt) {
      await resolve(holder);
      continue;
    }
    if (answerOf(answer) === 'KNOWN_NOT_COMMITTED') {
      // Proven not committed, the attempt spent: its batch goes again under a new attempt.
      attempt = `a${attempts.filter((a) => a !== 'blocker').length}`;
      answer = await append(attempt);
    } else {
      // Unknown (a failed execution, MAY_HAVE_COMMITTED): only this attempt's own id settles it.
      answer = await resolve(attempt);
    }
  }
  const acknowledged = answerOf(answer) === 'KNOWN_COMMITTED' ? (answer.output as AppendOutcome) : undefined;
  // Read before the replay below, which would settle a drilled attempt recovery left open.
  const unsettled = await unsettledAttempts(ports, lane, attempts);
  // The drilled attempt re-run as it was: it answers what it was settled to, appending nothing again.
  const replay = answerOf(await append(DRILLED_ATTEMPT));
  const invariants = await checkStream({
    ports,
    lane,
    batch,
    attempts,
    unsettled,
    acknowledged,
    replay,
    fired: fired ?? null,
    appendNext: () => append('next', [`game day ${id} next 0`, `game day ${id} next 1`]),
  });
  return {
    ...drill,
    fired: fired ?? null,
    trail,
    finalState: acknowledged ? acknowledged.status : answerOf(answer),
    invariants,
    held: invariants.every((x) => x.held),
  };
}

/** A fresh lane with its owner session: created as `stream create` does (no flow), taken over through stream-takeover. */
export async function ownedLane(driver: GamedayDriver, ports: Ports, lane: LaneRef, id: string): Promise<Fence> {
  await createStream({ stream: lane.stream, partitions: 1 }, ports);
  // Minted here and kept, as `stream takeover` keeps it: a flow's output never carries the session id.
  const session = randomUUID();
  const run = await driver.runFlow('stream-takeover', `takeover-${id}`, { ...lane, owner: OWNER, session });
  const result = run.output as Partial<TakeoverResult> | undefined;
  if (run.status !== 'SUCCEEDED' || result?.owner !== OWNER || !Number.isSafeInteger(result.epoch))
    throw new CutpointError(
      'Gameday.SetupFailed',
      'gameday.setup_failed',
      `the takeover of the drill's lane ${lane.stream} ended ${run.status}${run.error ? ` ${run.error}` : ''}`,
    );
  return { owner: OWNER, session, epoch: result.epoch as number };
}
