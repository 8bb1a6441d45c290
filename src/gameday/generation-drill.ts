import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../domain/digest.js';
import type { Drill } from '../domain/gameday/drill-plan.js';
import { GENERATION_CUT_POINTS } from '../generation/cut-points.js';
import { loadRecord, loadRootHead } from '../generation/load.js';
import { materialize } from '../generation/materialize.js';
import type { GenerationOutcome } from '../generation/outcome.js';
import { readVerified } from '../objects/exact-object.js';
import type { DrillRun } from '../ports/gameday-driver.js';
import type { Ports } from '../ports/index.js';
import type { DrillWorld } from './drill-world.js';
import type { DrillReport, InvariantCheck } from './report.js';

/**
 * One generation-commit drill: source objects under a root of the drill's own (one source
 * when the drill is the single-source copy's cut point, two otherwise), the flow run with
 * the drill's fault armed — for the abort's cut point, after another task won the slot; then, faults off, its recovery — the same input
 * run again, as the registry declares (a failed commit-generation is re-run, never
 * repaired by hand) — and the invariants: one outcome, COMMITTED or ABORTED, that the
 * record, the head and the flow's answer agree on, and a committed object whose bytes are
 * exactly its sources'.
 */

const SOURCE_TEXTS = ['game day source 1\n', 'game day source 2\n'];
/** Re-runs before a drill gives up on converging. */
const MAX_RERUNS = 4;

export async function runGenerationDrill(c: DrillWorld, drill: Drill): Promise<DrillReport> {
  const { driver, ports } = c;
  const id = randomBytes(6).toString('hex');
  const root = `gameday/generation-${id}`;
  const texts = drill.cutPoint === GENERATION_CUT_POINTS.objectCopy ? SOURCE_TEXTS.slice(0, 1) : SOURCE_TEXTS;
  const sources = [];
  for (const [i, text] of texts.entries()) {
    const bytes = new TextEncoder().encode(text);
    const key = `${root}-sources/${i}`;
    await ports.objects.put('gameday.source.put', key, bytes, { sha256: sha256Hex(bytes) });
    sources.push({ key, sha256: sha256Hex(bytes), size: bytes.byteLength });
  }
  const input = { root, generation: 0, taskId: `gameday-${id}`, sources };
  // The abort is crossed only by a task whose slot another task won: that one commits first, faults off.
  const winner = drill.cutPoint === GENERATION_CUT_POINTS.abortCas ? `winner-${id}` : undefined;
  if (winner) await driver.runFlow(drill.flow, `winner-${id}`, { ...input, taskId: winner });
  const trail: string[] = [];
  let last: DrillRun = { status: 'NOT_RUN' };
  const run = async (what: string, name: string): Promise<void> => {
    last = await driver.runFlow(drill.flow, name, input);
    const outcome = (last.output as GenerationOutcome | undefined)?.outcome;
    trail.push(`${what} ${last.status}${last.error ? ` ${last.error}` : ''}${outcome ? ` → ${outcome}` : ''}`);
    c.progress(`  ${trail.at(-1)}`);
  };

  c.progress(`drill ${drill.spec} (root ${root})`);
  const armed = await driver.arm(drill.spec);
  let fired: number | undefined;
  try {
    await run(drill.flow, `gameday-${id}`);
  } finally {
    fired = await armed.disarm();
  }
  for (let i = 0; i < MAX_RERUNS && last.status !== 'SUCCEEDED'; i++)
    await run(`${drill.flow} again`, `again-${id}-${i}`);

  const answer = last.status === 'SUCCEEDED' ? (last.output as GenerationOutcome) : undefined;
  const invariants = await checkGeneration(ports, { root, texts, winner }, answer, fired ?? null);
  return {
    ...drill,
    fired: fired ?? null,
    trail,
    finalState: answer?.outcome ?? last.status,
    invariants,
    held: invariants.every((x) => x.held),
  };
}

async function checkGeneration(
  ports: Ports,
  { root, texts, winner }: { root: string; texts: readonly string[]; winner: string | undefined },
  answer: GenerationOutcome | undefined,
  fired: number | null,
): Promise<InvariantCheck[]> {
  const checks: InvariantCheck[] = [];
  const check = (name: string, held: boolean, detail: string): void => void checks.push({ name, held, detail });
  check('fault-reached', fired === null || fired > 0, fired === null ? 'not observable from here' : `fired ${fired}×`);
  check('converged', answer !== undefined, answer ? `the flow answered ${answer.outcome}` : 'no run succeeded');
  const [record, head] = await Promise.all([loadRecord(ports, root, 0), loadRootHead(ports, root)]);
  const committed = record?.state === 'COMMITTED';
  // With a winner, the slot is the winner's: the drilled task proves its abort, the winner untouched.
  check(
    'one-outcome',
    winner
      ? answer?.outcome === 'ABORTED' && committed && record.taskId === winner
      : answer !== undefined && record?.state === answer.outcome,
    `the record is ${record?.state ?? 'absent'}${record ? ` by ${record.taskId === winner ? 'the winner' : 'the drilled task'}` : ''}, the flow answered ${answer?.outcome ?? 'nothing'}`,
  );
  check(
    'head-at-winner',
    committed ? head?.generation === 0 && head.objectKey === record.objectKey : head === undefined,
    head ? `the head is at generation ${head.generation}` : 'no head',
  );
  if (committed) {
    const expected = materialize(texts.map((t) => new TextEncoder().encode(t)));
    // An object that does not verify (missing, other bytes) is the finding, named by its error.
    const read = await readVerified(ports.objects, record.objectKey, record.sha256).then(
      (object) => (Buffer.from(object.bytes).equals(Buffer.from(expected)) ? 'exact' : 'other bytes'),
      (error: Error) => error.name,
    );
    check(
      'bytes-exact',
      read === 'exact',
      read === 'exact' ? `${record.size} bytes, SHA-256 verified` : `the committed object: ${read}`,
    );
  }
  return checks;
}
