import { sha256Hex } from '../../../domain/digest.js';
import { CutpointError } from '../../../domain/errors.js';
import { validateOwner, type LaneRef } from '../../../domain/stream.js';
import { loadHead } from '../../../stream/lane-store.js';
import type { TakeoverResult } from '../../../stream/takeover.js';
import { abandonTakeover, beginTakeover, completeTakeover } from '../../session-store.js';
import { executionName } from './execution-name.js';
import { defaultOwner, type Values } from './options.js';
import { failedFlowError } from './outcomes.js';
import type { Runtime } from './runtime.js';

/**
 * `cutpoint stream takeover`: a new owner session for the lane, stored (0600) before the
 * flow starts so a re-run of an interrupted takeover reuses it; a refused takeover leaves
 * no file (src/cli/session-store.ts).
 */
export async function takeover(runtime: Runtime, lane: LaneRef, values: Values): Promise<unknown> {
  // Everything that can refuse runs before the session is stored: a refused takeover
  // (bad owner, missing lane, runtime down) leaves no local state.
  const owner = validateOwner(typeof values.owner === 'string' ? values.owner : defaultOwner());
  if (runtime.kind === 'local') await loadHead(await runtime.ports(), lane);
  // On AWS: the region and the state machine, resolved before anything is stored.
  await runtime.prepare('stream-takeover');
  // Stored before anything starts: a re-run of an interrupted takeover reuses this id.
  const session = await beginTakeover(lane, runtime.kind, owner);
  // Named by a digest of the session, never the session id itself (a fencing secret; execution names are printed and listed).
  const name = executionName('takeover', lane.stream, lane.partition, sha256Hex(session).slice(0, 16));
  const run = await runtime.run('stream-takeover', name, { ...lane, owner, session }).catch(async (error: unknown) => {
    // A start that provably never happened (no credentials, no connection, a 4xx) leaves nothing to resume.
    if (await runtime.notStarted(error)) await abandonTakeover(lane, runtime.kind, session);
    throw error;
  });
  if (run.status !== 'SUCCEEDED') {
    await abandonTakeover(lane, runtime.kind, session);
    throw failedFlowError(run);
  }
  // The flow reports owner and epoch only: the session id never leaves this process.
  const result = run.output as Partial<TakeoverResult>;
  if (result.owner !== owner || !Number.isSafeInteger(result.epoch)) {
    throw new CutpointError(
      'Stream.TakeoverMismatch',
      'stream.takeover_mismatch',
      `takeover of ${lane.stream}/${lane.partition} returned another owner`,
    );
  }
  await completeTakeover(lane, runtime.kind, { owner, session, epoch: result.epoch as number });
  return {
    stream: lane.stream,
    partition: lane.partition,
    owner,
    epoch: result.epoch,
    committedEnd: result.committedEnd,
    ...(result.suspendedBy ? { suspendedBy: result.suspendedBy } : {}),
  };
}
