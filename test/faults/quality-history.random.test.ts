import { afterAll, beforeAll, describe, it } from 'vitest';
import { begin } from '../../src/delivery/steps/begin.js';
import { FAULT_KINDS } from '../../src/domain/faults.js';
import { PUBLICATION_STEPS } from '../../src/publication/publication-steps.js';
import { QUALITY_CUT_POINTS } from '../../src/domain/quality/cut-points.js';
import { newInvocationId } from '../support/delivery-world.js';
import { flowStep, operatorAction, successorBegin, zombieObserve } from '../support/quality-history-actions.js';
import { checkHistory } from '../support/quality-history-checks.js';
import {
  CUT_POINTS_OF,
  HISTORY_CUT_POINTS,
  History,
  HistoryError,
  inspectOp,
  messageOf,
  openHistoryWorld,
  SELECTOR,
  type HistoryWorld,
  type Op,
  type TableModel,
} from '../support/quality-history.js';

/**
 * A seeded randomized history of ClickHouse publication and quality governance (F3,
 * docs/rules.md#governance-invariants), on the observe world (a ClickHouse host over HTTP: the
 * real reader child runs). Per seed, operations on their target tables over time; each step
 * picks (seeded) one of:
 * - the flow's next step of one operation (PUBLICATION_STEPS, in process; a step that
 *   throws ends the execution, or is retried as a Task Retry would);
 * - an operator action the governance projection permits (reconcile, resume, retire,
 *   observe, replay);
 * - a zombie observer: a second observe of the same operation on the flow's session with
 *   the capsule as first seen PREPARED, late or concurrently with an operator observe —
 *   its writes are refused by version and fence, it never releases another's guard;
 * - a successor's Begin on a table: refused while the last operation's governance is
 *   unfinished, begun after its cleanup and retirement, writing the boundary;
 * - a fault armed at a random cut point with a random kind (FAULT_KINDS), one-shot: it
 *   stays armed until it fires or another replaces it.
 * After every step: I1–I10 (docs/rules.md#governance-invariants) on every operation, never two
 * operations holding custody of one target. At the end faults are off and every operation is
 * driven to its end with permitted actions (or its flow finishing), then everything is checked
 * again: every operation ends final, retained with an incident, or with nothing permitted for a
 * stated reason (a held guard, a FAILED capsule).
 *
 * Replay one seed: QH_SEED=<n> npx vitest run test/faults/quality-history.random.test.ts
 * (QH_STEPS=<n> lengthens the run; QH_TRACE=1 prints every step).
 */

const FILE = 'test/faults/quality-history.random.test.ts';
/**
 * 2 seeds × 16 steps: 15.5 s of file time measured here (seed 15: 9.7 s, seed 2026: 4.7 s),
 * 32 s at a load average of 9 on the 2 cores, about twice that at 15. Both earn their place: 2026 reached the resume-at-VERIFIED_EOF
 * defect (fixed in src/delivery/steps/publish.ts); 15 runs a zombie observer with a stale
 * capsule on the current fence (refused by the capsule version only), and both end with
 * successors after published operations (boundary, I7). Seeds 14 (a successor publishing
 * inside the history) and 101 are good extra ones: QH_SEED=14,15,101,2026.
 */
const DEFAULT_SEEDS = [15, 2026];
const DEFAULT_STEPS = 16;
const STEPS = intEnv('QH_STEPS') ?? DEFAULT_STEPS;
const SEEDS = process.env.QH_SEED ? process.env.QH_SEED.split(',').map((s) => intOf('QH_SEED', s)) : DEFAULT_SEEDS;
const TRACE = process.env.QH_TRACE === '1';
const TIMEOUT_MS = 180_000;

function intOf(name: string, raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}
function intEnv(name: string): number | undefined {
  const raw = process.env[name];
  return raw === undefined || raw.trim() === '' ? undefined : intOf(name, raw);
}

const replayCommand = (seed: number): string =>
  `QH_SEED=${seed}${STEPS === DEFAULT_STEPS ? '' : ` QH_STEPS=${STEPS}`} npx vitest run ${FILE}`;

/** End states with nothing permitted that are retained on purpose (an operator's incident, never a stuck run). */
const RETAINED_DIAGNOSTICS = new Set(['quality.reader_guard_held', 'quality.failed', 'quality.replay_window_closed']);
const FINAL_STATES = new Set(['CUSTODY_RELEASED', 'RETIRED', 'INCIDENT_RETAINED']);
const DRIVE_ORDER = ['reconcile', 'observe', 'resume', 'retire'] as const;

let hw: HistoryWorld;
let tableCount = 0;
beforeAll(async () => {
  hw = await openHistoryWorld();
}, 180_000);
afterAll(async () => {
  await hw?.close();
});

/** A new table and its first operation (begin, rerun as a Task Retry after a fault). */
async function newTable(h: History): Promise<void> {
  const name = `qh_${h.seed}_${++tableCount}`;
  const initialUuid = await hw.createTable(name);
  const { deps, manifestText } = hw.depsOf(name);
  const invocationId = newInvocationId();
  hw.actor.current = 'flow:begin';
  for (let i = 0; i < 4; i++) {
    try {
      const begun = await begin(
        { invocationId, session: `run-${invocationId.slice(4, 14)}`, manifestText, selector: SELECTOR },
        deps,
      );
      const table: TableModel = {
        name,
        targetId: begun.targetId,
        initialUuid,
        uuids: [initialUuid],
        ops: [],
        checkpointVersion: 0,
      };
      h.tables.push(table);
      const op = h.newOp(table, invocationId, begun.fence, begun.targetId);
      h.note(`${name}: ${op.name} begun (${begun.state})`);
      return;
    } catch (error) {
      h.note(`${name}: begin threw ${messageOf(error)}`);
    }
  }
  throw new HistoryError(`[seed ${h.seed}] begin of ${name} never succeeded`);
}

function armFault(h: History): void {
  const kind = h.rng.pick(FAULT_KINDS);
  const suffix = kind === 'delay' ? `=${h.rng.int(5, 60)}` : '';
  if (h.rng.chance(0.1)) {
    h.childFault = `${QUALITY_CUT_POINTS.targetProbe}:${kind}${suffix}`;
    h.note(`armed for the next reader child: ${h.childFault}`);
    return;
  }
  // Mostly where an operation is about to go: its flow's next step, or an operator action.
  const op = h.rng.pick(h.ops());
  const where = h.rng.chance(0.75)
    ? op.next !== undefined
      ? PUBLICATION_STEPS[op.next]![0]
      : h.rng.pick(['reconcile', 'resume', 'observe', 'retire', 'begin'])
    : undefined;
  const spec = `${h.rng.pick(where ? CUT_POINTS_OF[where]! : HISTORY_CUT_POINTS)}:${kind}${suffix}`;
  if (h.armed && !hw.fired() && h.rng.chance(0.6)) return; // the armed one waits for its cut point
  hw.arm(spec);
  h.armed = spec;
  h.note(`armed ${spec}`);
}

type StepKind = 'flow' | 'operator' | 'zombie' | 'successor' | 'fault';

async function runStep(h: History): Promise<void> {
  const ops = h.ops();
  const flowing = ops.filter((o) => o.next !== undefined);
  const published = ops.filter((o) => o.staleCapsule !== undefined);
  const kind = h.rng.weighted<StepKind>({
    flow: flowing.length ? 40 : 0,
    operator: 18,
    zombie: published.length ? 14 : 0,
    successor: 6,
    fault: 14,
  });
  switch (kind) {
    case 'flow':
      return flowStep(h, h.rng.pick(flowing));
    case 'operator':
      await operatorAction(h, h.rng.pick(ops), undefined, true);
      return;
    case 'zombie':
      return zombieObserve(h, h.rng.pick(published));
    case 'successor':
      await successorBegin(h, h.rng.pick(h.tables));
      return;
    case 'fault':
      return armFault(h);
  }
}

/** Faults off; each operation driven to its end with permitted actions (or its own flow finishing). */
async function driveToEnd(h: History, op: Op): Promise<void> {
  for (let round = 0; round < 10; round++) {
    h.step++;
    const seen = await inspectOp(hw.checkPorts, op);
    if (FINAL_STATES.has(seen.state)) return;
    if (seen.actions.some((a) => a !== 'replay')) {
      await operatorAction(h, op, DRIVE_ORDER);
    } else if (op.next !== undefined) {
      await flowStep(h, op);
    } else {
      h.check(
        RETAINED_DIAGNOSTICS.has(seen.diagnostic),
        `${op.name} stuck in ${seen.state} with nothing permitted (${seen.diagnostic}) and no flow`,
      );
      h.note(`${op.name} ends retained: ${seen.state} (${seen.diagnostic})`);
      return;
    }
    await checkHistory(h);
  }
  const seen = await inspectOp(hw.checkPorts, op);
  h.check(
    false,
    `${op.name} did not converge: ${seen.state} (${seen.diagnostic}), permitted [${seen.actions.join(', ')}]`,
  );
}

async function runHistory(h: History): Promise<void> {
  const tables = 1 + (h.seed % 2);
  for (let i = 0; i < tables; i++) await newTable(h);
  for (h.step = 1; h.step <= STEPS; h.step++) {
    const before = hw.fired();
    await runStep(h);
    if (!before && hw.fired()) {
      h.note(`  (fault ${h.armed} fired)`);
      h.firedFaults.push(h.armed!);
    }
    await checkHistory(h);
  }
  hw.disarm();
  h.childFault = undefined;
  h.note('— drive every operation to its end');
  for (const op of h.ops()) await driveToEnd(h, op);
  await checkHistory(h);
  // A table whose last operation ended with custody released takes a successor (I7, the boundary).
  for (const table of h.tables) {
    const last = table.ops.at(-1)!;
    if ((await inspectOp(hw.checkPorts, last)).state === 'CUSTODY_RELEASED') await successorBegin(h, table);
  }
  await checkHistory(h);
}

describe(`randomized publication + governance history (${STEPS} steps per seed; replay one seed with QH_SEED=<n>)`, () => {
  for (const seed of SEEDS) {
    it(
      `seed ${seed} — replay: ${replayCommand(seed)}`,
      async () => {
        const h = new History(seed, hw);
        try {
          await runHistory(h);
          if (TRACE)
            process.stderr.write(
              `seed ${seed}: ${h.ops().length} operations, faults fired: ${h.firedFaults.join(', ') || 'none'}\n  ${h.trace.join('\n  ')}\n`,
            );
        } catch (error) {
          const message =
            error instanceof HistoryError ? error.message : `[seed ${seed}, step ${h.step}] ${messageOf(error)}`;
          throw new Error(
            `${message}\n  replay: ${replayCommand(seed)}\n  last steps:\n    ${h.trace.slice(-40).join('\n    ')}`,
            { cause: error },
          );
        } finally {
          hw.disarm();
          delete process.env.CUTPOINT_FAULTS;
        }
      },
      TIMEOUT_MS,
    );
  }
});
