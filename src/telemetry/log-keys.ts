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

function fields(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * A flow's first Task passes the step's input nested (`input`) or only the execution input
 * (`executionInput`, src/engine/flow-input.ts): their keys count too, the Task's own first.
 * `execution` is the context object's only (a Task parameter), never an input's.
 */
export function invocationKeysOf(event: unknown): InvocationKeys {
  if (typeof event !== 'object' || event === null) return {};
  const task = event as Record<string, unknown>;
  const e = { ...fields(task.executionInput), ...fields(task.input), ...task };
  const execution =
    typeof task.execution === 'object' && task.execution !== null
      ? (task.execution as { id?: unknown }).id
      : task.execution;
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
