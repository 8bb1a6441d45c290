import { CUT_POINT_NAMES } from '../../src/cut-points.js';
import { stepByHandler, type StepEntry } from '../../src/registry/index.js';
import { everyCutPoint } from '../../src/registry/step-entry.js';
import { stepRetry, type Retrier } from './retry.js';

/**
 * An ASL state as the spec writes it (PascalCase ASL fields), as the generator prints it and
 * as the local runner (src/local/asl.ts) reads it back.
 */
export interface AslState {
  Type: string;
  Resource?: string;
  Retry?: Array<Partial<Retrier> & { ErrorEquals: string[] }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string; ResultPath?: string | null }>;
  [field: string]: unknown;
}

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
  /**
   * A registry step's Lambda, by its handler's path under functions/ (`delivery/quality`):
   * the Resource is its placeholder (`${DeliveryQualityFunctionArn}`). An unknown handler
   * fails the generation. Or `resource`: a service integration's ARN.
   */
  lambda?: string;
  resource?: string;
  parameters?: Record<string, unknown>;
  resultSelector?: Record<string, unknown>;
  resultPath?: string | null;
  outputPath?: string;
  timeoutSeconds?: number;
  /** Default: the one step policy, stepRetry(). */
  retry?: Retrier[];
  /** Errors routed on purpose, in order (a stop, a probe, an abort). */
  catch?: Catcher[];
  /**
   * Where every other error the step declares in the registry goes (its `errors`, less what
   * the retry takes and what `catch` routes): so adding an error to a step is one line, in
   * the registry. The error object is kept at $.failure.
   */
  otherwise?: string;
  /**
   * The flow whose execution input this Task checks (the flow's first Task, and a recovery
   * flow's action Task for an operator's start): `flow` and `executionInput.$` are passed
   * before the parameters, and the comment says so (docs/deploy.md 'Flow inputs').
   */
  checksInput?: string;
  /** The next state; absent: the Task ends the flow (or its Map item). */
  next?: string;
}

/** What a Task that checks its flow's execution input adds to its comment. */
export const CHECKS_INPUT =
  "First Task: the execution input ($$.Execution.Input) is checked against the flow's fields first (docs/deploy.md 'Flow inputs'); an unknown field, an input that is not an object or one over the cap is refused (Cutpoint.ValidationError) before anything is written.";

/** A Task state, its fields in one order in every flow. */
export function task(spec: TaskSpec): AslState {
  const step = spec.lambda !== undefined ? stepByHandler(spec.lambda) : undefined;
  const resource = step ? `\${${step.placeholder}}` : spec.resource;
  if (resource === undefined) throw new Error('a Task needs a lambda or a resource');
  if (step) crossesWhatItNames(spec.comment, step);
  const retry = spec.retry ?? stepRetry();
  const checks = spec.checksInput;
  return {
    Type: 'Task',
    Comment: checks === undefined ? spec.comment : `${spec.comment} ${CHECKS_INPUT}`,
    Resource: resource,
    Parameters:
      checks === undefined
        ? spec.parameters
        : { flow: checks, 'executionInput.$': '$$.Execution.Input', ...spec.parameters },
    ResultSelector: spec.resultSelector,
    ResultPath: spec.resultPath,
    OutputPath: spec.outputPath,
    TimeoutSeconds: spec.timeoutSeconds,
    Retry: retry,
    Catch: catchers(spec, retry, step),
    ...(spec.next === undefined ? { End: true } : { Next: spec.next }),
  };
}

/**
 * Every cut point a Task's comment names is one its registry step crosses (its `cutPoints`),
 * so the comment cannot name an effect the step does not have. A comment may name fewer:
 * the journal transitions, say, go unnamed.
 */
function crossesWhatItNames(comment: string, step: StepEntry): void {
  const crossed = everyCutPoint(step.cutPoints);
  const names = comment.match(/(?<![\w./-])[a-z0-9-]+(?:\.[a-z0-9-]+)+/g) ?? [];
  const stray = names.filter((n) => CUT_POINT_NAMES.has(n) && !crossed.includes(n));
  if (stray.length > 0)
    throw new Error(
      `functions/${step.handler}: its Task's comment names ${stray.join(', ')}, which the step does not cross (its cutPoints, src/registry/)`,
    );
}

/** The explicit catchers, then the rest of the step's declared errors to `otherwise` (before a States.ALL catch-all). */
function catchers(spec: TaskSpec, retry: Retrier[], step: StepEntry | undefined): Catcher[] {
  const explicit = spec.catch ?? [];
  if (spec.otherwise === undefined) return explicit;
  if (!step) throw new Error(`otherwise '${spec.otherwise}' needs a registry step (a lambda), not a resource`);
  const taken = new Set([...retry.flatMap((r) => r.ErrorEquals), ...explicit.flatMap((c) => c.ErrorEquals)]);
  const rest = step.errors.filter((e) => !taken.has(e));
  if (rest.length === 0)
    throw new Error(
      `${step.handler}: otherwise '${spec.otherwise}' catches nothing (every declared error is retried or routed)`,
    );
  const all = explicit.findIndex((c) => c.ErrorEquals.includes('States.ALL'));
  const at = all === -1 ? explicit.length : all;
  return [...explicit.slice(0, at), onError(spec.otherwise, rest), ...explicit.slice(at)];
}
