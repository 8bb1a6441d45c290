import { OutcomeUnknownError } from '../domain/errors.js';
import { generationKeys, validateRef } from '../domain/generation.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { loadResolution } from './load.js';
import { abortedOutcome, committedOutcome, type GenerationOutcome } from './outcome.js';

const MAX_ROUNDS = 3;

/**
 * Proves an abort: closes the task (and its PREPARED record, if it has one) by CAS. A
 * committed generation is never aborted — if the commit won, the outcome is COMMITTED.
 * The output object, if one was written, is left in place with an orphan timestamp: it
 * is unreferenced and enters orphan grace until GC.
 */
export async function abortGeneration(input: unknown, ports: Ports): Promise<GenerationOutcome> {
  const ref = validateRef(input);
  const { root, taskId } = ref;
  const reason =
    typeof (input as { reason?: unknown }).reason === 'string'
      ? (input as { reason: string }).reason.slice(0, 200)
      : 'aborted';
  const cut = GENERATION_CUT_POINTS.abortCas;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { task, record, resolution } = await loadResolution(ports, ref);
    if (resolution.state === 'COMMITTED') return committedOutcome(resolution.record, 'exact-winner-reload');
    if (task.state === 'ABORTED')
      return abortedOutcome(task, (task as { abortReason?: string }).abortReason ?? reason, 'exact-abort-reload');
    const now = ports.clock.now().toISOString();
    const legs: TransactionLeg[] = [
      {
        kind: 'update',
        key: generationKeys.task(root, taskId),
        expect: { version: task.version },
        set: { state: 'ABORTED', abortReason: reason, abortedAt: now, orphanKey: task.objectKey, orphanSince: now },
      },
    ];
    if (resolution.state === 'PREPARED' && record) {
      legs.push({
        kind: 'update',
        key: generationKeys.record(root, task.generation),
        expect: { version: record.version },
        set: { state: 'ABORTED', abortedAt: now },
      });
    }
    const outcome = await ports.authority.transact(cut, legs);
    if (outcome.status === 'APPLIED') return abortedOutcome(task, reason, 'applied');
    // UNKNOWN or CONFLICT: the next round reloads the exact task and record.
  }
  throw new OutcomeUnknownError(cut, `${cut}: abort of task ${taskId} did not settle`);
}
