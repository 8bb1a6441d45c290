import { escapeControlCharacters } from '../domain/errors.js';

/**
 * The log keys an invocation carries, taken from the Task input by an allowlist (the
 * event is never dumped: it holds the manifest text and fences). Follow one delivery by
 * `invocationId`, one stream lane by `lane`, one generation task by `taskId`, one
 * execution by `execution` where the flow passes `$$.Execution.Id` (and by the X-Ray
 * trace id every line carries when the state machine traces).
 */
export interface InvocationKeys {
  invocationId?: string;
  execution?: string;
  recoveryOf?: string;
  /** `<stream>/<partition>`. */
  lane?: string;
  attemptId?: string;
  taskId?: string;
  generation?: string | number;
  part?: number;
  retry?: number;
}

const MAX_TEXT = 256;

function text(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length === 0) return undefined;
  return escapeControlCharacters(v.length > MAX_TEXT ? `${v.slice(0, MAX_TEXT)}…` : v);
}

function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

export function invocationKeysOf(event: unknown): InvocationKeys {
  if (typeof event !== 'object' || event === null) return {};
  const e = event as Record<string, unknown>;
  const execution = typeof e.execution === 'object' && e.execution !== null ? (e.execution as { id?: unknown }).id : e.execution;
  const partition = count(e.partition) ?? text(e.partition);
  const stream = text(e.stream);
  const part = typeof e.part === 'object' && e.part !== null ? (e.part as { part?: unknown }).part : e.part;
  const keys: InvocationKeys = {
    invocationId: text(e.invocationId),
    execution: text(execution),
    recoveryOf: text(e.recoveryOf),
    lane: stream !== undefined && partition !== undefined ? `${stream}/${partition}` : undefined,
    attemptId: text(e.attemptId),
    taskId: text(e.taskId),
    generation: count(e.generation) ?? text(e.generation),
    part: count(part),
    retry: count(e.retry),
  };
  return Object.fromEntries(Object.entries(keys).filter(([, v]) => v !== undefined)) as InvocationKeys;
}
