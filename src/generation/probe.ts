import { validateRef } from '../domain/generation.js';
import type { Ports } from '../ports/index.js';
import { loadResolution } from './load.js';
import { abortedOutcome, committedOutcome, type GenerationOutcome } from './outcome.js';

export type GenerationProbeResult =
  | ({ state: 'COMMITTED' } & GenerationOutcome)
  | { state: 'PREPARED' | 'NOT_PREPARED' | 'ABORTED' | 'SUPERSEDED'; reason?: string };

/**
 * The ResolveCommit probe: after an UNKNOWN commit, reload the exact record, head and
 * task and say what they prove. COMMITTED by this task is success (the exact winner);
 * still PREPARED means the commit did not happen and may be tried again; anything else
 * leads to a proven abort.
 */
export async function probeGeneration(input: unknown, ports: Ports): Promise<GenerationProbeResult> {
  const { task, resolution } = await loadResolution(ports, validateRef(input));
  switch (resolution.state) {
    case 'COMMITTED':
      return { state: 'COMMITTED', ...committedOutcome(resolution.record, 'exact-winner-reload') };
    case 'ABORTED':
      return { state: 'ABORTED', ...abortedOutcome(task, resolution.reason, 'exact-abort-reload') };
    case 'SUPERSEDED':
      return { state: 'SUPERSEDED', reason: resolution.reason };
    case 'PREPARED':
    case 'NOT_PREPARED':
      return { state: resolution.state };
  }
}
