import type { Retrier } from './retry.js';

/** An ASL state as the spec writes it (PascalCase ASL fields), and as the generator prints it. */
export type AslState = { Type: string } & Record<string, unknown>;

export interface Catcher {
  ErrorEquals: string[];
  ResultPath: string;
  Next: string;
}

/** Errors caught to `next`, the error object kept at `resultPath` ($.failure by default). */
export function onError(next: string, errors: readonly string[], resultPath = '$.failure'): Catcher {
  return { ErrorEquals: [...errors], ResultPath: resultPath, Next: next };
}

export interface TaskSpec {
  comment: string;
  /** A registry step's Lambda (`${<name>FunctionArn}`), or a service integration's ARN. */
  lambda?: string;
  resource?: string;
  parameters?: Record<string, unknown>;
  resultSelector?: Record<string, unknown>;
  resultPath?: string | null;
  outputPath?: string;
  timeoutSeconds?: number;
  retry: Retrier[];
  catch: Catcher[];
  /** The next state; absent: the Task ends the flow (or its Map item). */
  next?: string;
}

/** A Task state, its fields in one order in every flow. */
export function task(spec: TaskSpec): AslState {
  const resource = spec.lambda !== undefined ? `\${${spec.lambda}FunctionArn}` : spec.resource;
  if (resource === undefined) throw new Error('a Task needs a lambda or a resource');
  return {
    Type: 'Task',
    Comment: spec.comment,
    Resource: resource,
    Parameters: spec.parameters,
    ResultSelector: spec.resultSelector,
    ResultPath: spec.resultPath,
    OutputPath: spec.outputPath,
    TimeoutSeconds: spec.timeoutSeconds,
    Retry: spec.retry,
    Catch: spec.catch,
    ...(spec.next === undefined ? { End: true } : { Next: spec.next }),
  };
}
