import { CutpointError, OutcomeUnknownError } from '../domain/errors.js';
import type { GenerationTaskSpec } from '../domain/generation.js';
import type { Ports } from '../ports/index.js';
import { rerunTransient } from '../engine/rerun.js';
import { abortGeneration } from './abort.js';
import { commitGeneration } from './commit.js';
import { probeGeneration } from './probe.js';
import type { LoadedResolution } from './load.js';
import { prepareGeneration } from './record-prepared.js';
import { registerTask } from './register-task.js';
import { writeGenerationObject } from './write-object.js';
import type { GenerationOutcome } from './outcome.js';

const ATTEMPTS = 3;
/** Errors that end the task in a proven abort (the flow's Catch → Abort). */
const ABORTING = new Set([
  'Generation.TaskClosed',
  'Generation.SlotTaken',
  'Cutpoint.IdentityConflict',
  'Cutpoint.ChecksumMismatch',
  'Cutpoint.ObjectMissing',
]);

/**
 * The generation-commit mechanism as a library call, for flows that materialize a
 * generation inside one of their own steps (the stream's generation 0). Same use cases
 * and the same recovery as statemachines/commit-generation.asl.json: transient errors
 * rerun the step, an UNKNOWN commit is resolved by the exact-winner probe, and the
 * aborting errors prove an abort. Each step hands the next what its own write proved
 * (the registered task, the PREPARED record): the next step acts on it without reloading,
 * and the versions its transaction checks turn stale state into a reload.
 */
export async function commitGenerationInProcess(spec: GenerationTaskSpec, ports: Ports): Promise<GenerationOutcome> {
  const ref = { root: spec.root, taskId: spec.taskId };
  try {
    const task = await rerunTransient(() => registerTask(spec, ports));
    const object = await rerunTransient(() => writeGenerationObject(ref, ports, task));
    let { loaded } = await rerunTransient(() => prepareGeneration({ ...ref, ...object }, ports, task));
    for (let round = 0; round < ATTEMPTS; round++) {
      try {
        return await rerunTransient(() => {
          const known: LoadedResolution | undefined = loaded;
          loaded = undefined; // only the first try acts on it; a retry reloads
          return commitGeneration(ref, ports, known);
        }, ['Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed']);
      } catch (error) {
        if (!(error instanceof OutcomeUnknownError)) throw error;
        const probe = await rerunTransient(() => probeGeneration(ref, ports));
        if (probe.state === 'COMMITTED') return probe;
        if (probe.state !== 'PREPARED')
          return rerunTransient(() => abortGeneration({ ...ref, reason: probe.state }, ports));
      }
    }
    throw new OutcomeUnknownError('generation.commit.cas', `commit of ${spec.root}@${spec.generation} stayed unknown`);
  } catch (error) {
    if (error instanceof CutpointError && ABORTING.has(error.name)) {
      return rerunTransient(() => abortGeneration({ ...ref, reason: error.name }, ports));
    }
    throw error;
  }
}
