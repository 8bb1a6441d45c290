import type { FlowEvent } from '../local/flow-runner.js';
import { progress } from './io.js';

/**
 * Progress for a flow event on stderr: states entered, retries, failures, and a
 * Distributed Map's run (its items, each failed item, how it ended) — one line each.
 */
export function flowProgress(e: FlowEvent): void {
  const line = describeFlowEvent(e);
  if (line !== undefined) progress(line);
}

export function describeFlowEvent(e: FlowEvent): string | undefined {
  switch (e.type) {
    case 'StateEntered':
      return `→ ${e.state}`;
    case 'StateFailed':
    case 'StateRetried':
    case 'ExecutionFailed':
      return `  ${[e.type, e.state, e.error].filter(Boolean).join(' ')}`;
    case 'MapRunStarted':
      return `  ${e.state}: map run of ${e.items ?? 0} item${e.items === 1 ? '' : 's'}`;
    case 'MapRunItemFailed':
      return `  ${e.state}: item ${e.item} failed: ${e.error ?? 'unknown error'}`;
    case 'MapRunSucceeded':
    case 'MapRunFailed':
      return `  ${e.state}: map run ${e.type === 'MapRunSucceeded' ? 'succeeded' : `failed${e.error ? ` (${e.error})` : ''}`}`;
    default:
      return undefined;
  }
}
