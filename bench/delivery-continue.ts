import { deliverWindow } from '../src/delivery/deliver-in-process.js';
import type { DeliveryDeps } from '../src/delivery/deps.js';
import { loadInvocation } from '../src/delivery/journal/records.js';
import { reconcile } from '../src/delivery/recovery/reconcile.js';
import { resume } from '../src/delivery/recovery/resume.js';
import { readPlan } from '../src/delivery/steps/plan-parts.js';
import { TRANSACTION_MODE } from '../src/delivery/transaction-mode.js';
import { parseManifest, selectRoute } from '../src/domain/delivery/manifest.js';
import { chunkSeqOf } from '../src/domain/delivery/parts.js';
import { EffectFailedError } from '../src/domain/errors.js';
import type { Ports } from '../src/ports/index.js';
import type { SourcePort } from '../src/ports/source.js';
import type { TargetPort } from '../src/ports/target.js';
import { beginInput, newInvocationId, SELECTOR_FILE, type BenchRoute } from './delivery-setup.js';

/**
 * Continue (docs/delivery.md "Delivery recovery: the five commands and the flows behind them"): a window of about 20 parts whose middle part stays
 * down from its 18th chunk on stops mid-parts; reconcile proves PARTIAL_PROVED with the
 * continuation, and `resume` continues only that part. Measured in the same run, on the
 * same route and window: the rows the source yields to the continue against the rows a
 * retire + new complete invocation extracts (a full delivery of the window, its rows
 * counted the same way), and the two wall times. Prints only; asserts nothing but that the
 * continue ended delivered.
 */
export interface ContinueResult {
  rows: number;
  parts: number;
  failedPart: number;
  /** Rows the source yielded to the continue (the failed part's remaining rows). */
  reextractedByContinue: number;
  /** Rows the source yielded to a full delivery of the same window (what retire + a new run extracts). */
  reextractedByRerun: number;
  rowsRatio: number;
  continueMs: number;
  rerunMs: number;
  timeRatio: number;
}

/** The part that stays down: the middle of the route's ~20. */
const FAILED_PART = 10;
/** From its 18th chunk on: its first 16 chunks' receipts are journaled (one batch), so the continue goes on after them. */
const DOWN_FROM_CHUNK = 17;

export interface ContinueEnv {
  ports: Ports;
  source: SourcePort;
  target: TargetPort;
}

export async function oneContinue(
  r: BenchRoute,
  manifestText: string,
  env: ContinueEnv,
  progress: (line: string) => void,
): Promise<ContinueResult> {
  const route = selectRoute(parseManifest(manifestText, SELECTOR_FILE), r.name);
  const invocationId = newInvocationId();
  const deps = (source: SourcePort, target: TargetPort = env.target): DeliveryDeps => ({
    ports: env.ports,
    target,
    mode: TRANSACTION_MODE,
    source,
    route,
  });
  // The middle part of ~20 stays down from its 18th chunk (a persistent fault in ONE part).
  const failedPart = FAILED_PART;
  const down = Object.create(env.target) as TargetPort;
  down.loadChunk = (request) =>
    request.seq >= chunkSeqOf(failedPart, DOWN_FROM_CHUNK) && request.seq < chunkSeqOf(failedPart + 1, 0)
      ? Promise.reject(new EffectFailedError('delivery.target.load-chunk', `bench: part ${failedPart} stays down`))
      : env.target.loadChunk(request);
  const stopped = await deliverWindow(beginInput(invocationId, manifestText, r.name), deps(env.source, down)).then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!stopped) throw new Error('bench: the continue window was delivered without its failing part');
  const record = await loadInvocation(env.ports, invocationId);
  const parts = (await readPlan({ ports: env.ports }, record)).length;
  const input = { invocationId, manifestText, selector: `${SELECTOR_FILE}#${r.name}` };
  const recovery = { ports: env.ports, target: env.target, mode: TRANSACTION_MODE, route };
  const reconciled = await reconcile(input, recovery);
  if (!reconciled.projection.permitted_actions.includes('resume'))
    throw new Error(`bench: reconcile left ${reconciled.state} without resume offered`);

  const again = counting(env.source);
  const t0 = performance.now();
  const resumed = await resume(input, { ...recovery, extract: { source: again } });
  const continueMs = performance.now() - t0;
  if (resumed.state !== 'CUSTODY_RELEASED') throw new Error(`bench: continue ended in ${resumed.state}`);

  const full = counting(env.source);
  const t1 = performance.now();
  await deliverWindow(beginInput(newInvocationId(), manifestText, r.name), deps(full));
  const rerunMs = performance.now() - t1;
  progress(`delivery continue: ${parts} parts, part ${failedPart} down, continued in ${continueMs.toFixed(0)} ms`);
  return {
    rows: r.rows,
    parts,
    failedPart,
    reextractedByContinue: again.rows,
    reextractedByRerun: full.rows,
    rowsRatio: again.rows / full.rows,
    continueMs,
    rerunMs,
    timeRatio: continueMs / rerunMs,
  };
}

/** `source`, counting the rows its streams yield. */
function counting(source: SourcePort): SourcePort & { rows: number } {
  const c = Object.create(source) as SourcePort & { rows: number };
  c.rows = 0;
  c.streamWindow = (request) => ({
    async *[Symbol.asyncIterator]() {
      for await (const chunk of source.streamWindow(request)) {
        c.rows += chunk.rows.length;
        yield chunk;
      }
    },
  });
  return c;
}
