import { CutpointError, IdentityConflictError, OutcomeUnknownError } from '../domain/errors.js';
import {
  generationKeys,
  GenerationSlotTakenError,
  GenerationTaskClosedError,
  metadataMatches,
  validateRef,
} from '../domain/generation.js';
import { readVerified } from '../objects/exact-object.js';
import type { TransactionLeg } from '../ports/authority.js';
import type { Ports } from '../ports/index.js';
import { GENERATION_CUT_POINTS } from './cut-points.js';
import { loadResolution, type LoadedResolution } from './load.js';
import { committedOutcome, type GenerationOutcome } from './outcome.js';

const MAX_ROUNDS = 3;

/**
 * Commits the task's PREPARED generation: one transaction moves the record to COMMITTED,
 * points the root head at it and closes the task. The output bytes are verified first,
 * so a COMMITTED generation always has readable bytes. A lost response leaves as
 * `Cutpoint.OutcomeUnknown` for the flow's ResolveCommit probe; a crash before or after
 * is retried, and the retry reloads the exact winner.
 *
 * Verified before COMMITTED: the full SHA-256 of the output object against the record's,
 * and its metadata against the task's identity (a copied output was never read by the
 * worker that wrote it). `loaded` is what the PREPARED step's own transaction proved (the
 * in-process mechanism): the first round acts on it instead of reloading — the commit
 * transaction checks the record's, head's and task's versions, so stale state is a
 * CONFLICT and a reload, never a wrong commit.
 */
export async function commitGeneration(
  input: unknown,
  ports: Ports,
  loaded?: LoadedResolution,
): Promise<GenerationOutcome> {
  const ref = validateRef(input);
  const { root, taskId } = ref;
  const cut = GENERATION_CUT_POINTS.commitCas;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const { task, record, head, resolution } = round === 0 && loaded ? loaded : await loadResolution(ports, ref);
    switch (resolution.state) {
      case 'COMMITTED':
        return committedOutcome(resolution.record, round === 0 ? 'exact-winner-reload' : 'applied');
      case 'ABORTED':
        throw new GenerationTaskClosedError(`task ${taskId} under ${root} is aborted`);
      case 'SUPERSEDED':
        throw new GenerationSlotTakenError(`generation ${task.generation} of ${root}: ${resolution.reason}`);
      case 'NOT_PREPARED':
        throw new CutpointError(
          'Generation.NotPrepared',
          'generation.not_prepared',
          `task ${taskId} has no PREPARED record`,
        );
      case 'PREPARED': {
        const stored = await readVerified(ports.objects, resolution.record.objectKey, resolution.record.sha256);
        if (!metadataMatches(stored.metadata, task, resolution.record.sha256)) {
          throw new IdentityConflictError(
            'generation.object_identity_conflict',
            `object ${resolution.record.objectKey} is not this task's exact output`,
          );
        }
        const now = ports.clock.now().toISOString();
        const headKey = generationKeys.head(root);
        const headFields = {
          root,
          generation: task.generation,
          taskId,
          objectKey: resolution.record.objectKey,
          sha256: resolution.record.sha256,
          size: resolution.record.size,
          committedAt: now,
        };
        const legs: TransactionLeg[] = [
          {
            kind: 'update',
            key: generationKeys.record(root, task.generation),
            expect: { version: record!.version },
            set: { state: 'COMMITTED', committedAt: now },
          },
          head
            ? { kind: 'update', key: headKey, expect: { version: head.version }, set: headFields }
            : { kind: 'put', item: { ...headKey, ...headFields }, expect: 'absent' },
          {
            kind: 'update',
            key: generationKeys.task(root, taskId),
            expect: { version: task.version },
            set: { state: 'COMMITTED' },
          },
        ];
        const outcome = await ports.authority.transact(cut, legs);
        if (outcome.status === 'APPLIED')
          return committedOutcome({ ...resolution.record, state: 'COMMITTED' }, 'applied');
        if (outcome.status === 'UNKNOWN')
          throw new OutcomeUnknownError(cut, `${cut}: commit of ${root}@${task.generation} is unknown`);
        continue; // CONFLICT: something moved; reload and decide again.
      }
    }
  }
  throw new OutcomeUnknownError(cut, `${cut}: commit of task ${taskId} did not settle`);
}
